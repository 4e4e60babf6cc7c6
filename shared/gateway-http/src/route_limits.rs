//! Route limits every family shares: the concurrency gate, and the parser of limit settings
//! from the configuration map (dotted or environment form).

use std::collections::BTreeMap;
use std::sync::Arc;

use fluss_pool::config::{env_var_name, parse_size};
use gateway_core::{ErrorCode, GatewayError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A permit of `gate`, or 429 `resource_exhausted` at once: a full gate must not queue requests
/// behind the deadline. `what` names the requests ("write", "lookup").
pub(crate) fn enter_gate(
    gate: &Arc<Semaphore>,
    what: &str,
) -> Result<OwnedSemaphorePermit, GatewayError> {
    gate.clone().try_acquire_owned().map_err(|_| {
        GatewayError::new(
            ErrorCode::ResourceExhausted,
            format!("too many concurrent {what} requests; retry later"),
        )
    })
}

/// How a limit's value is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unit {
    /// A plain count (`128`).
    Count,
    /// A size with an optional unit (`1mb`).
    Bytes,
}

/// One limit: its dotted key, where its value goes, and how it is written.
pub(crate) struct Setting<'a> {
    pub(crate) key: &'static str,
    pub(crate) slot: &'a mut usize,
    pub(crate) unit: Unit,
}

/// Reads route limits from `map` (dotted or environment form) into their slots. Every key under
/// one of `namespaces` (dotted, ending in `.`) must be a listed setting, so a typo cannot
/// silently keep a default; every value must be a positive number. All problems are reported at
/// once, by key (never by value), as ``invalid {what} configuration: …``.
pub(crate) fn read_limits(
    map: &BTreeMap<String, String>,
    namespaces: &[&str],
    settings: &mut [Setting<'_>],
    what: &str,
) -> Result<(), GatewayError> {
    let mut problems = Vec::new();
    let env_namespaces: Vec<String> = namespaces
        .iter()
        .map(|n| env_var_name(n.trim_end_matches('.')) + "__")
        .collect();
    for name in map.keys() {
        let ours = namespaces.iter().any(|n| name.starts_with(n))
            || env_namespaces.iter().any(|n| name.starts_with(n.as_str()));
        let listed = settings
            .iter()
            .any(|s| name == s.key || *name == env_var_name(s.key));
        if ours && !listed {
            problems.push(format!("`{name}`: unknown key"));
        }
    }
    for setting in settings.iter_mut() {
        let env = env_var_name(setting.key);
        for (name, value) in [
            (setting.key, map.get(setting.key)),
            (env.as_str(), map.get(&env)),
        ] {
            let Some(value) = value else { continue };
            let parsed = match setting.unit {
                Unit::Bytes => {
                    parse_size(value).and_then(|n| usize::try_from(n).map_err(|e| e.to_string()))
                }
                Unit::Count => value.trim().parse::<usize>().map_err(|e| e.to_string()),
            };
            match parsed {
                Ok(0) => problems.push(format!("`{name}`: must be greater than 0")),
                Ok(n) => *setting.slot = n,
                Err(e) => problems.push(format!("`{name}`: {e}")),
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
