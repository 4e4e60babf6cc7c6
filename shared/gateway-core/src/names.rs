//! The identifier rule: what a database, table or partition name, and a partition value, may
//! look like before any of them reaches Fluss.
//!
//! Why it matters: Fluss keeps its metadata in ZooKeeper under paths built from these strings
//! (`/fluss/metadata/databases/<db>/tables/<table>/partitions/<name>`). A string ZooKeeper
//! rejects fails inside a Curator background callback, and Fluss 0.9.1 treats that as fatal: one
//! request with a name like `a\u{9f}b` shuts the TabletServer down. So every route checks every
//! name and partition value here first, whether it came from a path, a key, a prefix, a
//! written row or a partition spec, and answers 400 naming the field.
//!
//! - **Names** (database, table): Fluss's documented rule — ASCII letters, digits, `_` and `-`,
//!   1 to [`MAX_NAME_CHARS`] characters, not starting with `__` (Fluss reserves it). Fluss's own
//!   `TablePath::detect_invalid_name` must agree too, so we are never looser than the server.
//! - **Partition values**: any text ZooKeeper accepts as one path element (the rules of
//!   `org.apache.zookeeper.common.PathUtils.validatePath`): not empty, not `.` or `..`, no `/`,
//!   no NUL or other control characters (U+0001–U+001F, U+007F–U+009F), no character Java
//!   stores as a surrogate pair or that ZooKeeper bans (U+D800–U+F8FF, U+FFF0–U+FFFF and
//!   everything above U+FFFF), at most [`MAX_PARTITION_VALUE_CHARS`] characters.
//!
//! Refuses: deciding HTTP statuses (the error kind says 400) and anything about column names,
//! which never reach ZooKeeper.

use fluss::metadata::TablePath;

use crate::error::GatewayError;

/// Longest database or table name (Fluss's own bound).
pub const MAX_NAME_CHARS: usize = 200;

/// Longest partition value. Fluss joins the values of a partition with `$` into one ZooKeeper
/// node name; this keeps the whole name well inside what every part of the server handles.
pub const MAX_PARTITION_VALUE_CHARS: usize = 200;

/// How much of a refused string an error message repeats (escaped), so a hostile megabyte-long
/// name cannot make the answer large.
const SHOWN_CHARS: usize = 64;

/// Why `name` is not a valid database or table name, or `None` when it is.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "it has {chars} characters; at most {MAX_NAME_CHARS} are allowed"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Some(format!(
            "it contains {}; only ASCII letters, digits, `_` and `-` are allowed",
            describe_char(c)
        ));
    }
    if name.starts_with("__") {
        return Some("names starting with `__` are reserved by Fluss".to_owned());
    }
    // Belt and braces: the client library's copy of the server rule must agree.
    TablePath::detect_invalid_name(name)
}

/// 400 `invalid_argument` unless `name` is a valid database or table name; `what` names the
/// field (`database`, `table`, `table_name`).
pub fn check_name(what: &str, name: &str) -> Result<(), GatewayError> {
    match name_problem(name) {
        None => Ok(()),
        Some(reason) => Err(GatewayError::invalid(format!(
            "invalid {} name {}: {reason}",
            what.strip_suffix("_name").unwrap_or(what),
            shown(name)
        ))),
    }
}

/// Why `value` cannot be a partition value, or `None` when it can.
pub fn partition_value_problem(value: &str) -> Option<String> {
    match value {
        "" => return Some("it is empty".to_owned()),
        "." | ".." => return Some("`.` and `..` are not allowed".to_owned()),
        _ => {}
    }
    let chars = value.chars().count();
    if chars > MAX_PARTITION_VALUE_CHARS {
        return Some(format!(
            "it has {chars} characters; at most {MAX_PARTITION_VALUE_CHARS} are allowed"
        ));
    }
    value
        .chars()
        .find(|&c| !is_partition_char(c))
        .map(|c| format!("it contains {}, which Fluss cannot store", describe_char(c)))
}

/// 400 `invalid_argument` unless `value` may be a partition value; `what` names where it came
/// from (`partition.dt`, `entry \`a1\`: column \`dt\``).
pub fn check_partition_value(what: &str, value: &str) -> Result<(), GatewayError> {
    match partition_value_problem(value) {
        None => Ok(()),
        Some(reason) => Err(GatewayError::invalid(format!(
            "{what}: invalid partition value {}: {reason}",
            shown(value)
        ))),
    }
}

/// Whether `c` may appear in a partition value: ZooKeeper's path-element rules, seen from Java's
/// UTF-16 (a character above U+FFFF is a surrogate pair there, which ZooKeeper refuses).
fn is_partition_char(c: char) -> bool {
    let u = u32::from(c);
    !(c == '/'
        || u <= 0x1F
        || (0x7F..=0x9F).contains(&u)
        || (0xD800..=0xF8FF).contains(&u)
        || u >= 0xFFF0)
}

/// A character as an error message names it: printable ones quoted, others by code point.
fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("`{c}`")
    } else {
        format!("U+{:04X}", u32::from(c))
    }
}

/// A refused string as messages show it: escaped (no raw control characters reach a log or a
/// terminal) and cut to `SHOWN_CHARS`.
pub fn shown(s: &str) -> String {
    let mut out = String::from("`");
    for c in s.chars().take(SHOWN_CHARS) {
        out.extend(c.escape_debug());
    }
    if s.chars().count() > SHOWN_CHARS {
        out.push('…');
    }
    out.push('`');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A port of ZooKeeper 3.x `PathUtils.validatePath(String)`, over the UTF-16 code units a
    /// Java server sees. `true` when ZooKeeper would refuse the path.
    fn zookeeper_rejects(path: &str) -> bool {
        let units: Vec<u16> = path.encode_utf16().collect();
        if units.is_empty() || units[0] != u16::from(b'/') {
            return true;
        }
        if units.len() == 1 {
            return false;
        }
        if units[units.len() - 1] == u16::from(b'/') {
            return true;
        }
        let mut last = u16::from(b'/');
        for i in 1..units.len() {
            let c = units[i];
            let slash = u16::from(b'/');
            let dot = u16::from(b'.');
            if c == 0 || (c == slash && last == slash) {
                return true;
            } else if c == dot && last == dot {
                let before = units[i - 2];
                if before == slash && (i + 1 == units.len() || units[i + 1] == slash) {
                    return true;
                }
            } else if c == dot {
                if units[i - 1] == slash && (i + 1 == units.len() || units[i + 1] == slash) {
                    return true;
                }
            } else if (0x0001..=0x001F).contains(&c)
                || (0x007F..=0x009F).contains(&c)
                || (0xD800..=0xF8FF).contains(&c)
                || (0xFFF0..=0xFFFF).contains(&c)
            {
                return true;
            }
            last = c;
        }
        false
    }

    /// Where Fluss puts a partition in ZooKeeper (values joined with `$`).
    fn partition_path(db: &str, table: &str, values: &[&str]) -> String {
        format!(
            "/fluss/metadata/databases/{db}/tables/{table}/partitions/{}",
            values.join("$")
        )
    }

    #[test]
    fn the_port_of_zookeeper_path_rules_behaves_like_zookeeper() {
        for ok in ["/", "/a", "/a/b", "/a.b", "/...", "/a$b", "/é"] {
            assert!(!zookeeper_rejects(ok), "{ok:?}");
        }
        for bad in [
            "",
            "a",
            "/a/",
            "//",
            "/a//b",
            "/.",
            "/..",
            "/a/./b",
            "/a/../b",
            "/\u{0}",
            "/\u{1}",
            "/\u{7f}",
            "/\u{9f}",
            "/\u{e000}",
            "/\u{fff0}",
            "/😀",
        ] {
            assert!(zookeeper_rejects(bad), "{bad:?}");
        }
    }

    #[test]
    fn names_follow_the_fluss_rule() {
        for ok in ["a", "db_1", "Orders-2026", &"x".repeat(MAX_NAME_CHARS)] {
            assert_eq!(name_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a.b", "`.`"),
            ("a b", "U+0020"),
            ("ù\u{9f}'z", "U+00F9"),
            ("a/b", "`/`"),
            ("__internal", "reserved"),
            (&"x".repeat(MAX_NAME_CHARS + 1), "201 characters"),
        ] {
            let problem = name_problem(bad).unwrap_or_default();
            assert!(problem.contains(why), "{bad:?}: {problem}");
        }
    }

    #[test]
    fn refusals_name_the_field_and_escape_the_value() {
        let e = check_name("table", "a\u{9f}\u{0}b").expect_err("refused");
        assert_eq!(e.code(), crate::ErrorCode::InvalidArgument);
        assert!(
            e.message().starts_with("invalid table name `a\\u{9f}\\0b`"),
            "{}",
            e.message()
        );
        let e = check_partition_value("key 0: column `dt`", "x\u{7f}y").expect_err("refused");
        assert!(
            e.message().contains("key 0: column `dt`"),
            "{}",
            e.message()
        );
        assert!(e.message().contains("U+007F"), "{}", e.message());
        let long = check_name("database", &"é".repeat(10_000)).expect_err("refused");
        assert!(long.message().len() < 400, "{}", long.message());
    }

    #[test]
    fn partition_values_refuse_what_zookeeper_refuses() {
        for bad in [
            "", ".", "..", "a/b", "\u{1}", "x\u{7f}y", "\u{9f}", "\u{e000}", "😀",
        ] {
            assert!(partition_value_problem(bad).is_some(), "{bad:?}");
        }
        for ok in ["2026-12-03", "a.b", "...", "eu west", "é", "a$b", "%2F"] {
            assert_eq!(partition_value_problem(ok), None, "{ok:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Every name either passes or is refused, and none that passes gives a path ZooKeeper
        /// refuses (as a database, a table, or a partition value).
        #[test]
        fn nothing_that_passes_is_refused_by_zookeeper(s in any::<String>()) {
            if name_problem(&s).is_none() {
                prop_assert!(!zookeeper_rejects(&partition_path(&s, "t", &["p"])));
                prop_assert!(!zookeeper_rejects(&partition_path("d", &s, &["p"])));
            }
            if partition_value_problem(&s).is_none() {
                prop_assert!(!zookeeper_rejects(&partition_path("d", "t", &[&s])));
                prop_assert!(!zookeeper_rejects(&partition_path("d", "t", &[&s, &s])));
            }
            // Refusals are errors, never panics, and stay short.
            if let Err(e) = check_name("table", &s) {
                prop_assert!(e.message().len() < 1024);
            }
            if let Err(e) = check_partition_value("partition.dt", &s) {
                prop_assert!(e.message().len() < 1024);
            }
        }

        /// Strings close to the edges (short, from a small alphabet of risky characters).
        #[test]
        fn risky_alphabets_pass_only_when_zookeeper_agrees(
            s in "[./$a\u{0}\u{1}\u{7f}\u{9f}\u{d7ff}\u{e000}\u{fff0}😀_-]{0,6}"
        ) {
            if partition_value_problem(&s).is_none() {
                prop_assert!(!zookeeper_rejects(&partition_path("d", "t", &[&s])));
            }
            if name_problem(&s).is_none() {
                prop_assert!(!zookeeper_rejects(&partition_path(&s, &s, &["p"])));
            }
        }
    }
}
