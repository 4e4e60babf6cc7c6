//! The settings registry: how configuration keys are written (dotted `gateway.rest.…` and the
//! environment form `FLUSS_GATEWAY__REST__…`), their syntax (durations, sizes, counts,
//! booleans), the one reader every owner of keys uses, and the start-up check that refuses any
//! `gateway.*` key or `FLUSS_GATEWAY__*` variable nobody owns, naming the nearest known key.
//!
//! Every key is declared once as a [`Key`] row in [`keys`], grouped by the crate that reads it;
//! [`keys::registry`] is the list `docs/configuration.md` is checked against and the start-up
//! check of every function uses. Values are never
//! echoed in a problem, only key names: a value may be a secret.
//!
//! Refuses: reading `std::env` (callers pass the environment as a map, so tests never mutate
//! it) and knowing any key itself.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::GatewayError;

pub mod keys;
pub mod prometheus;

/// Prefix of the environment form of every key.
pub const ENV_PREFIX: &str = "FLUSS_GATEWAY__";

/// Prefix of the dotted form of every key.
pub const DOTTED_PREFIX: &str = "gateway.";

/// How a key's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A positive count (`128`).
    Count,
    /// A positive size with an optional unit (`1mb`).
    Bytes,
    /// A duration (`500ms`, `10s`, `2min`).
    Duration,
    /// `true` or `false`.
    Bool,
    /// Free text (addresses, names, lists).
    Text,
}

/// One configuration key of the registry: its dotted form, how it is written, its default as
/// written in configuration (empty when required or conditional), whether its value is a
/// secret, and one line saying what it controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// Dotted form; per-cluster keys use `<id>` for the cluster (`gateway.cluster.<id>.…`).
    pub key: &'static str,
    /// How the value is written.
    pub kind: Kind,
    /// The default as written in configuration, `""` when none.
    pub default: &'static str,
    /// Whether the value is a credential (never echoed).
    pub secret: bool,
    /// What the key controls.
    pub doc: &'static str,
}

impl Key {
    /// A key that is not a secret.
    pub const fn new(
        key: &'static str,
        kind: Kind,
        default: &'static str,
        doc: &'static str,
    ) -> Self {
        Key {
            key,
            kind,
            default,
            secret: false,
            doc,
        }
    }

    /// The environment variable of this key (`<id>` becomes `<ID>`).
    pub fn env_name(&self) -> String {
        env_var_name(self.key)
    }
}

/// The environment variable of a dotted key: `FLUSS_GATEWAY__` + the key without `gateway.`,
/// upper-cased, `-` → `_`, `.` → `__` (the Fluss Gateway's rule).
pub fn env_var_name(dotted_key: &str) -> String {
    let rest = dotted_key.strip_prefix(DOTTED_PREFIX).unwrap_or(dotted_key);
    let mut out = String::from(ENV_PREFIX);
    for (i, part) in rest.split('.').enumerate() {
        if i > 0 {
            out.push_str("__");
        }
        out.push_str(&env_part(part));
    }
    out
}

/// The environment form of one part of a key (a setting, a cluster id, a route name):
/// upper-cased, `-` → `_`. Two names with the same environment form are one name.
pub fn env_part(part: &str) -> String {
    part.to_ascii_uppercase().replace('-', "_")
}

/// A key of a per-name namespace (`gateway.cluster.<id>.…`, `gateway.ingest.route.<name>.…`),
/// split by [`named`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedKey<'a> {
    /// The name as written: as given in the dotted form, upper-case in the environment form.
    pub name: &'a str,
    /// Whether the key was given in the environment form.
    pub env: bool,
    /// The setting in dotted form (`writer.batch-size`), whichever form the key was given in.
    pub setting: String,
}

/// Splits `key` when it lies under the per-name namespace `prefix` (dotted, ending in `.`) in
/// either form: `<prefix><name>.<setting>` or `<PREFIX>__<NAME>__<SETTING>`. `None` when it
/// does not, and when it does but names no setting: that is a problem, recorded with the
/// expected shape, `placeholder` saying what the names are (`id`, `name`). Which names are
/// listed and which settings exist is the owner's to check.
pub fn named<'a>(
    key: &'a str,
    prefix: &str,
    placeholder: &str,
    problems: &mut Vec<String>,
) -> Option<NamedKey<'a>> {
    if let Some(rest) = key.strip_prefix(prefix) {
        let Some((name, setting)) = rest.split_once('.') else {
            problems.push(format!(
                "`{key}`: unknown key (expected `{prefix}<{placeholder}>.<setting>`)"
            ));
            return None;
        };
        return Some(NamedKey {
            name,
            env: false,
            setting: setting.to_owned(),
        });
    }
    let env_prefix = env_var_name(prefix.trim_end_matches('.')) + "__";
    let rest = key.strip_prefix(&env_prefix)?;
    let Some((name, setting)) = rest.split_once("__") else {
        problems.push(format!(
            "`{key}`: unknown variable (expected `{env_prefix}<{}>__<SETTING>`)",
            placeholder.to_ascii_uppercase()
        ));
        return None;
    };
    let setting = setting
        .split("__")
        .map(|p| p.to_ascii_lowercase().replace('_', "-"))
        .collect::<Vec<_>>()
        .join(".");
    Some(NamedKey {
        name,
        env: true,
        setting,
    })
}

/// Parses a duration as Fluss writes them: `500ms`, `10s`, `2min`, `1h`; a bare number is
/// milliseconds (as Fluss' `TimeUtils.parseDuration`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{t}` is not a duration (e.g. 500ms, 10s, 2min)"))?;
    let millis_per = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => {
            return Err(format!(
                "`{t}` has an unknown unit (use ms, s, min, h or d)"
            ));
        }
    };
    n.checked_mul(millis_per)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("`{t}` is too large"))
}

/// Parses a memory size as Fluss writes them: `16mb`, `512kb`, `1gb` (1024-based), or bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{t}` is not a size (e.g. 512kb, 16mb)"))?;
    let per = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("`{t}` has an unknown unit (use b, kb, mb or gb)")),
    };
    n.checked_mul(per)
        .ok_or_else(|| format!("`{t}` is too large"))
}

/// The shortest exact spelling of a duration (`2ms`, `10s`, `2min`).
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms != 0 && ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms != 0 && ms.is_multiple_of(60_000) {
        format!("{}min", ms / 60_000)
    } else if ms != 0 && ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        format!("{ms}ms")
    }
}

/// The shortest exact spelling of a size (`16mb`, `512kb`, `100b`).
pub fn format_size(n: u64) -> String {
    if n != 0 && n.is_multiple_of(1 << 30) {
        format!("{}gb", n >> 30)
    } else if n != 0 && n.is_multiple_of(1 << 20) {
        format!("{}mb", n >> 20)
    } else if n != 0 && n.is_multiple_of(1 << 10) {
        format!("{}kb", n >> 10)
    } else {
        format!("{n}b")
    }
}

/// A configuration map from `(key, value)` pairs, as the environment would give it (tests,
/// tools, benchmarks).
pub fn map_of(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Where a setting's parsed value goes.
#[derive(Debug)]
pub enum Slot<'a> {
    /// A positive count.
    Count(&'a mut usize),
    /// A positive size.
    Bytes(&'a mut usize),
    /// A duration; zero only when `allow_zero`.
    Duration {
        /// The value.
        slot: &'a mut Duration,
        /// Whether `0` is a meaningful value (a margin), not a mistake.
        allow_zero: bool,
    },
    /// A boolean.
    Bool(&'a mut bool),
    /// Free text, trimmed (the owner checks what it means).
    Text(&'a mut String),
}

/// Reads `settings` (dotted key, slot) from `map`, in either form. Every key under one of
/// `namespaces` (dotted, ending in `.`) must be a listed setting, so a typo cannot silently keep
/// a default; every value must parse. All problems are reported at once, by key (never by
/// value), as ``invalid {what} configuration: …``.
pub fn read(
    map: &BTreeMap<String, String>,
    namespaces: &[&str],
    settings: &mut [(&'static str, Slot<'_>)],
    what: &str,
) -> Result<(), GatewayError> {
    let mut problems = Vec::new();
    let listed: Vec<&str> = settings.iter().map(|(k, _)| *k).collect();
    for name in map.keys() {
        let ours = namespaces.iter().any(|n| in_namespace(name, n));
        let known = listed.iter().any(|k| name == k || *name == env_var_name(k));
        if ours && !known {
            problems.push(unknown_key(name, listed.iter().copied()));
        }
    }
    for (key, slot) in settings.iter_mut() {
        let env = env_var_name(key);
        for (name, value) in [(*key, map.get(*key)), (env.as_str(), map.get(&env))] {
            let Some(value) = value else { continue };
            if let Err(problem) = parse_into(slot, value) {
                problems.push(format!("`{name}`: {problem}"));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(GatewayError::invalid(format!(
            "invalid {what} configuration: {}",
            problems.join("; ")
        )))
    }
}

/// Parses one value into its slot, as [`read`] does for each listed key; owners whose keys
/// are not fixed names (per-cluster keys) call it for each value they locate. The problem never
/// shows the value (it may be a secret set under the wrong key).
pub fn parse_into(slot: &mut Slot<'_>, value: &str) -> Result<(), String> {
    match slot {
        Slot::Count(s) => {
            let n = value
                .trim()
                .parse::<usize>()
                .map_err(|_| "not a whole number greater than 0".to_owned())?;
            **s = positive(n)?
        }
        Slot::Bytes(s) => {
            let n = parse_size(value)?;
            **s = positive(usize::try_from(n).map_err(|e| e.to_string())?)?;
        }
        Slot::Duration { slot, allow_zero } => {
            let d = parse_duration(value)?;
            if d.is_zero() && !*allow_zero {
                return Err("must be greater than 0".to_owned());
            }
            **slot = d;
        }
        Slot::Bool(s) => {
            **s = match value.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err("expected `true` or `false`".to_owned()),
            }
        }
        Slot::Text(s) => **s = value.trim().to_owned(),
    }
    Ok(())
}

fn positive(n: usize) -> Result<usize, String> {
    if n == 0 {
        Err("must be greater than 0".to_owned())
    } else {
        Ok(n)
    }
}

/// Whether `name` (either form) lies under the dotted `namespace` (ending in `.`), or is the
/// key `namespace` itself when it does not end in `.`.
pub fn in_namespace(name: &str, namespace: &str) -> bool {
    if let Some(stem) = namespace.strip_suffix('.') {
        name.starts_with(namespace) || name.starts_with(&(env_var_name(stem) + "__"))
    } else {
        name == namespace || name == env_var_name(namespace)
    }
}

/// The start-up check of the whole registry: every `gateway.*` key and `FLUSS_GATEWAY__*`
/// variable of `map` must be one of `known` or lie under one of `owned` (namespaces whose owner
/// checks its own keys, e.g. `gateway.cluster.`). One problem per stray key, naming it and the
/// nearest known key.
pub fn unknown_keys(map: &BTreeMap<String, String>, known: &[Key], owned: &[&str]) -> Vec<String> {
    map.keys()
        .filter(|name| name.starts_with(DOTTED_PREFIX) || name.starts_with(ENV_PREFIX))
        .filter(|name| !owned.iter().any(|n| in_namespace(name, n)))
        .filter(|name| {
            !known
                .iter()
                .any(|k| *name == k.key || **name == k.env_name())
        })
        .map(|name| unknown_key(name, known.iter().map(|k| k.key)))
        .collect()
}

/// "`X`: unknown key (did you mean `Y`?)", `Y` in the form `X` was written in.
fn unknown_key<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let env_form = name.starts_with(ENV_PREFIX);
    let nearest = candidates
        .map(|k| {
            if env_form {
                env_var_name(k)
            } else {
                k.to_owned()
            }
        })
        .min_by_key(|k| edit_distance(name, k));
    match nearest {
        Some(k) => format!("`{name}`: unknown key (did you mean `{k}`?)"),
        None => format!("`{name}`: unknown key"),
    }
}

/// Levenshtein distance over bytes (keys are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::map_of as map;

    const KNOWN: &[Key] = &[
        Key::new(
            "gateway.rest.request-timeout",
            Kind::Duration,
            "30s",
            "request deadline",
        ),
        Key::new("gateway.clusters", Kind::Text, "", "cluster ids"),
    ];

    #[test]
    fn env_names_follow_the_fluss_gateway_rule() {
        assert_eq!(
            env_var_name("gateway.rest.prefix-lookup.max-prefixes"),
            "FLUSS_GATEWAY__REST__PREFIX_LOOKUP__MAX_PREFIXES"
        );
    }

    #[test]
    fn one_reader_for_every_kind_reports_every_problem_by_key() {
        let (mut n, mut b, mut d, mut m, mut on) =
            (1usize, 1usize, Duration::ZERO, Duration::ZERO, false);
        let env = map(&[
            ("gateway.x.count", "5"),
            ("FLUSS_GATEWAY__X__SIZE", "2kb"),
            ("gateway.x.wait", "2min"),
            ("gateway.x.margin", "0"),
            ("FLUSS_GATEWAY__X__ON", "true"),
        ]);
        read(
            &env,
            &["gateway.x."],
            &mut [
                ("gateway.x.count", Slot::Count(&mut n)),
                ("gateway.x.size", Slot::Bytes(&mut b)),
                (
                    "gateway.x.wait",
                    Slot::Duration {
                        slot: &mut d,
                        allow_zero: false,
                    },
                ),
                (
                    "gateway.x.margin",
                    Slot::Duration {
                        slot: &mut m,
                        allow_zero: true,
                    },
                ),
                ("gateway.x.on", Slot::Bool(&mut on)),
            ],
            "x",
        )
        .unwrap();
        assert_eq!(
            (n, b, d, m, on),
            (5, 2048, Duration::from_secs(120), Duration::ZERO, true)
        );

        let bad = map(&[
            ("gateway.x.count", "0"),
            ("gateway.x.on", "yes-s3cret"),
            ("FLUSS_GATEWAY__X__COUNTT", "1"),
        ]);
        let e = read(
            &bad,
            &["gateway.x."],
            &mut [
                ("gateway.x.count", Slot::Count(&mut n)),
                ("gateway.x.on", Slot::Bool(&mut on)),
            ],
            "x",
        )
        .unwrap_err();
        let m = e.message();
        assert!(m.starts_with("invalid x configuration: "), "{m}");
        assert!(
            m.contains("`gateway.x.count`: must be greater than 0"),
            "{m}"
        );
        assert!(
            m.contains("`gateway.x.on`: expected `true` or `false`"),
            "{m}"
        );
        assert!(
            m.contains(
                "`FLUSS_GATEWAY__X__COUNTT`: unknown key (did you mean `FLUSS_GATEWAY__X__COUNT`?)"
            ),
            "{m}"
        );
        assert!(!m.contains("s3cret"), "{m}");
    }

    #[test]
    fn stray_keys_outside_every_namespace_are_named_with_the_nearest_known_key() {
        let env = map(&[
            ("FLUSS_GATEWAY__REST__REQUEST_TIMEOUTT", "5s"),
            ("gateway.rest.request-timeout", "5s"),
            ("FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS", "x"),
            ("FLUSS_GATEWAY__CLUSTERS", "default"),
            ("gateway.lambda.deadline-margn", "1s"),
            ("PATH", "/usr/bin"),
        ]);
        let problems = unknown_keys(&env, KNOWN, &["gateway.cluster."]);
        assert_eq!(
            problems,
            [
                "`FLUSS_GATEWAY__REST__REQUEST_TIMEOUTT`: unknown key (did you mean `FLUSS_GATEWAY__REST__REQUEST_TIMEOUT`?)",
                "`gateway.lambda.deadline-margn`: unknown key (did you mean `gateway.rest.request-timeout`?)",
            ]
        );
    }

    #[test]
    fn named_keys_split_in_either_form_and_a_missing_setting_is_a_problem() {
        let mut problems = Vec::new();
        let mut split = |key| named(key, "gateway.x.item.", "id", &mut problems);
        assert_eq!(
            split("gateway.x.item.Main-1.writer.batch-size"),
            Some(NamedKey {
                name: "Main-1",
                env: false,
                setting: "writer.batch-size".to_owned(),
            })
        );
        assert_eq!(
            split("FLUSS_GATEWAY__X__ITEM__MAIN_1__WRITER__BATCH_SIZE"),
            Some(NamedKey {
                name: "MAIN_1",
                env: true,
                setting: "writer.batch-size".to_owned(),
            })
        );
        assert_eq!(split("gateway.x.items"), None);
        assert_eq!(split("FLUSS_GATEWAY__X__ITEMS"), None);
        assert_eq!(split("gateway.x.item.main"), None);
        assert_eq!(split("FLUSS_GATEWAY__X__ITEM__MAIN"), None);
        assert_eq!(
            problems,
            [
                "`gateway.x.item.main`: unknown key (expected `gateway.x.item.<id>.<setting>`)",
                "`FLUSS_GATEWAY__X__ITEM__MAIN`: unknown variable (expected `FLUSS_GATEWAY__X__ITEM__<ID>__<SETTING>`)",
            ]
        );
        assert_eq!(env_part("main-1"), "MAIN_1");
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "abd"), 1);
        assert_eq!(edit_distance("abc", "ab"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
