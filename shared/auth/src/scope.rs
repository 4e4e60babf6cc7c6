//! Scopes: what a key or user may do, as (cluster, database, table) patterns × operation
//! classes, and the check a matched route's class and object go through before any Fluss I/O.

use gateway_core::names::shown;
use gateway_core::routes::Operation;
use serde::{Deserialize, Serialize};

/// One grant: `operations` on every object whose cluster, database and table match the
/// patterns. A pattern is `*` (anything), `prefix*` (names starting with `prefix`) or a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Cluster id pattern.
    #[serde(default = "any")]
    pub cluster: String,
    /// Database name pattern.
    #[serde(default = "any")]
    pub database: String,
    /// Table name pattern.
    #[serde(default = "any")]
    pub table: String,
    /// Operation classes granted: `read`, `write`, `ddl`, `config`, or `*` for all four.
    pub operations: Vec<String>,
}

fn any() -> String {
    "*".to_owned()
}

/// What a route acts on, from its path: a cluster listing has none of the three, a database
/// route no table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Object<'a> {
    /// `{cluster}` of the path.
    pub cluster: Option<&'a str>,
    /// `{database}` of the path.
    pub database: Option<&'a str>,
    /// `{table}` of the path.
    pub table: Option<&'a str>,
}

impl std::fmt::Display for Object<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.cluster, self.database, self.table) {
            (Some(c), Some(d), Some(t)) => write!(
                f,
                "table {} of cluster {}",
                shown(&format!("{d}.{t}")),
                shown(c)
            ),
            (Some(c), Some(d), None) => {
                write!(f, "database {} of cluster {}", shown(d), shown(c))
            }
            (Some(c), None, _) => write!(f, "cluster {}", shown(c)),
            _ => f.write_str("the cluster list"),
        }
    }
}

/// The operation-class names a scope may grant.
pub const OPERATION_NAMES: [&str; 5] = ["read", "write", "ddl", "config", "*"];

impl Scope {
    /// A scope granting every class on everything.
    pub fn everything() -> Self {
        Scope {
            cluster: any(),
            database: any(),
            table: any(),
            operations: vec!["*".to_owned()],
        }
    }

    /// What is wrong with this scope, if anything (for loading a document).
    pub fn problem(&self) -> Option<String> {
        for op in &self.operations {
            if !OPERATION_NAMES.contains(&op.as_str()) {
                return Some(format!(
                    "operation {} is not one of read, write, ddl, config, *",
                    shown(op)
                ));
            }
        }
        if self.operations.is_empty() {
            return Some("a scope needs at least one operation".to_owned());
        }
        for pattern in [&self.cluster, &self.database, &self.table] {
            let stem = pattern.strip_suffix('*').unwrap_or(pattern);
            if stem.contains('*') || (stem.is_empty() && pattern != "*") {
                return Some(format!(
                    "pattern {} must be `*`, `prefix*` or a name",
                    shown(pattern)
                ));
            }
        }
        None
    }

    /// Whether this scope grants `operation` on `object`. A component the object lacks (a
    /// database route has no table) is granted only by a `*` pattern: a scope limited to one
    /// table does not list or create the tables of its database. The cluster listing needs
    /// only the class.
    pub fn allows(&self, operation: Operation, object: &Object<'_>) -> bool {
        if operation == Operation::Meta {
            return true;
        }
        let class = operation.scope();
        if !self.operations.iter().any(|o| o == "*" || o == class) {
            return false;
        }
        if object.cluster.is_none() {
            return true;
        }
        [
            (&self.cluster, object.cluster),
            (&self.database, object.database),
            (&self.table, object.table),
        ]
        .into_iter()
        .all(|(pattern, value)| match value {
            Some(v) => pattern_matches(pattern, v),
            None => pattern == "*",
        })
    }
}

impl Scope {
    /// Reads the key tool's spelling: `ops=read+write,cluster=local,database=demo,table=*`
    /// (any order; cluster, database and table default to `*`; `ops=*` is every class).
    pub fn parse_spec(spec: &str) -> Result<Scope, String> {
        let mut scope = Scope {
            operations: Vec::new(),
            ..Scope::everything()
        };
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("{} is not `name=value`", shown(part)))?;
            match name.trim() {
                "cluster" => scope.cluster = value.trim().to_owned(),
                "database" => scope.database = value.trim().to_owned(),
                "table" => scope.table = value.trim().to_owned(),
                "ops" => scope.operations = value.split('+').map(|o| o.trim().to_owned()).collect(),
                other => {
                    return Err(format!(
                        "{} is not one of cluster, database, table, ops",
                        shown(other)
                    ));
                }
            }
        }
        match scope.problem() {
            Some(p) => Err(p),
            None => Ok(scope),
        }
    }
}

/// Whether `value` matches `pattern` (`*`, `prefix*`, or exactly).
pub fn pattern_matches(pattern: &str, value: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(stem) => value.starts_with(stem),
        None => pattern == value,
    }
}

/// Whether any of `scopes` grants `operation` on `object`.
pub fn any_allows(scopes: &[Scope], operation: Operation, object: &Object<'_>) -> bool {
    scopes.iter().any(|s| s.allows(operation, object))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(c: &str, d: &str, t: &str, ops: &[&str]) -> Scope {
        Scope {
            cluster: c.into(),
            database: d.into(),
            table: t.into(),
            operations: ops.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    const ORDERS: Object<'static> = Object {
        cluster: Some("local"),
        database: Some("demo"),
        table: Some("orders"),
    };

    #[test]
    fn a_scope_grants_its_classes_on_matching_objects_only() {
        let s = scope("local", "demo", "ord*", &["write"]);
        assert!(s.allows(Operation::Write, &ORDERS));
        assert!(!s.allows(Operation::Read, &ORDERS));
        assert!(!s.allows(
            Operation::Write,
            &Object {
                table: Some("users"),
                ..ORDERS
            }
        ));
        assert!(!s.allows(
            Operation::Write,
            &Object {
                cluster: Some("prod"),
                ..ORDERS
            }
        ));
        // A database-level route needs `*` for the table.
        let db = Object {
            table: None,
            ..ORDERS
        };
        assert!(!s.allows(Operation::Write, &db));
        assert!(scope("local", "demo", "*", &["ddl"]).allows(Operation::Ddl, &db));
        assert!(scope("*", "*", "*", &["*"]).allows(Operation::Config, &ORDERS));
        // Meta needs nothing; the cluster list needs the class only.
        assert!(scope("x", "y", "z", &["read"]).allows(Operation::Meta, &ORDERS));
        assert!(scope("x", "y", "z", &["read"]).allows(Operation::Read, &Object::default()));
        assert!(!scope("x", "y", "z", &["write"]).allows(Operation::Read, &Object::default()));
    }

    #[test]
    fn bad_scopes_are_named() {
        assert!(scope("*", "*", "*", &["read"]).problem().is_none());
        assert!(
            scope("*", "*", "*", &["admin"])
                .problem()
                .unwrap()
                .contains("admin")
        );
        assert!(scope("*", "a*b", "*", &["read"]).problem().is_some());
        assert!(scope("*", "", "*", &["read"]).problem().is_some());
        assert!(scope("*", "*", "*", &[]).problem().is_some());
    }

    #[test]
    fn the_key_tool_spelling_reads_into_a_scope() {
        assert_eq!(
            Scope::parse_spec("ops=read+write, database=demo").unwrap(),
            scope("*", "demo", "*", &["read", "write"])
        );
        assert!(Scope::parse_spec("database=demo").is_err());
        assert!(Scope::parse_spec("ops=read,colour=red").is_err());
    }

    #[test]
    fn objects_read_as_their_kind() {
        assert_eq!(ORDERS.to_string(), "table `demo.orders` of cluster `local`");
        assert_eq!(Object::default().to_string(), "the cluster list");
    }
}
