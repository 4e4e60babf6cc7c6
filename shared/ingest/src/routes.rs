//! Routes from configuration: a source (an SQS queue, a Kinesis stream, a DynamoDB table's
//! stream, a Kafka topic) mapped to one table, so a bare JSON row in the record is enough.
//!
//! ```text
//! gateway.ingest.routes = orders,users
//! gateway.ingest.route.orders.source    = arn:aws:sqs:eu-west-1:123456789012:orders   (or `orders`)
//! gateway.ingest.route.orders.table     = shop.orders
//! gateway.ingest.route.orders.cluster   = default        (optional)
//! gateway.ingest.route.orders.operation = auto           (auto | append | upsert)
//! gateway.ingest.route.orders.source-column = src        (optional)
//! gateway.ingest.route.orders.format    = json           (json | arrow)
//! ```
//!
//! In the environment: `FLUSS_GATEWAY__INGEST__ROUTE__ORDERS__SOURCE=…`. Every key under
//! `gateway.ingest.route.` must belong to a listed route and be one of the six settings; a
//! typo fails start-up, as everywhere else in the registry.

use std::collections::BTreeMap;

use gateway_core::GatewayError;
use gateway_core::settings::{self, env_part};

pub use gateway_core::settings::keys::ingest_routes::{ROUTE_KEY_PREFIX, ROUTES_KEY};

const SETTINGS: [&str; 6] = [
    "source",
    "table",
    "cluster",
    "operation",
    "source-column",
    "format",
];

/// What a record of a route holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteFormat {
    /// A JSON row (or envelope): one row per record.
    Json,
    /// An Arrow IPC stream (Kinesis, Kafka): any number of rows per record, written as the
    /// write route writes an Arrow body; the record is written when all its rows are.
    Arrow,
}

/// What a bare row of a route does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteOp {
    /// Append to a log table, upsert to a primary-key table (looked up once per table).
    Auto,
    /// Always append.
    Append,
    /// Always upsert.
    Upsert,
}

/// One configured route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Its name (as listed).
    pub name: String,
    /// The source as configured: an ARN, a queue / stream / table name, or a Kafka topic.
    pub source: String,
    /// Cluster id, `None` for the default.
    pub cluster: Option<String>,
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// What a bare row does.
    pub op: RouteOp,
    /// The column that receives each record's source coordinates
    /// ([`crate::event::Record::coordinates`]), when configured: event sources redeliver, and
    /// the coordinates tell a redelivered record from a new one (downstream, or by design when
    /// the column is the table's primary key).
    pub source_column: Option<String>,
    /// What a record holds.
    pub format: RouteFormat,
}

impl Route {
    /// Whether a record from `origin` (its `eventSourceARN`, or its Kafka topic) takes this
    /// route: the configured source equals the ARN, names the queue or stream at its end, or
    /// names the DynamoDB table whose stream it is (`…:table/<name>/stream/<label>`).
    pub fn matches(&self, origin: &str) -> bool {
        if self.source == origin {
            return true;
        }
        // `arn:<partition>:<service>:<region>:<account>:<resource>`; the resource may hold `:`
        // itself (a DynamoDB stream label is a timestamp).
        let resource = origin.splitn(6, ':').nth(5).unwrap_or(origin);
        // SQS: `arn:aws:sqs:<region>:<account>:<queue>`.
        if resource == self.source && origin.starts_with("arn:aws:sqs:") {
            return true;
        }
        // Kinesis: `arn:aws:kinesis:…:stream/<name>`.
        if let Some(stream) = resource.strip_prefix("stream/") {
            return stream == self.source;
        }
        // DynamoDB Streams: `arn:aws:dynamodb:…:table/<name>/stream/<label>`.
        if let Some(rest) = resource.strip_prefix("table/") {
            let table = rest.split('/').next().unwrap_or(rest);
            let table_arn = origin.split("/stream/").next().unwrap_or(origin);
            return table == self.source || table_arn == self.source;
        }
        false
    }
}

/// The routes of `map`; every problem is reported at once, by key (values are not echoed).
pub fn from_map(map: &BTreeMap<String, String>) -> Result<Vec<Route>, GatewayError> {
    let mut problems = Vec::new();
    let names = listed_names(map, &mut problems);
    let values = route_values(map, &names, &mut problems);
    let routes: Vec<Route> = names
        .iter()
        .enumerate()
        .filter_map(|(index, name)| build_route(index, name, &values, &mut problems))
        .collect();
    check_sources(&routes, &mut problems);
    if problems.is_empty() {
        Ok(routes)
    } else {
        Err(GatewayError::invalid(format!(
            "invalid ingest route configuration: {}",
            problems.join("; ")
        )))
    }
}

/// Route index and setting → the value given for it.
type RouteValues<'a> = BTreeMap<(usize, &'static str), &'a str>;

/// The route names of `gateway.ingest.routes` (either form), each valid and listed once.
fn listed_names(map: &BTreeMap<String, String>, problems: &mut Vec<String>) -> Vec<String> {
    let env_list = settings::env_var_name(ROUTES_KEY);
    let listed = map.get(ROUTES_KEY).or_else(|| map.get(&env_list));
    let mut names: Vec<String> = Vec::new();
    for name in listed
        .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()))
        .into_iter()
        .flatten()
    {
        if !valid_name(name) {
            problems.push(format!(
                "`{ROUTES_KEY}`: route name {} must be 1-64 characters of a-z, 0-9, `-` or `_`",
                gateway_core::names::shown(name)
            ));
        } else if names.iter().any(|n| env_part(n) == env_part(name)) {
            problems.push(format!("`{ROUTES_KEY}`: route `{name}` is listed twice"));
        } else {
            names.push(name.to_owned());
        }
    }
    names
}

/// The per-route keys of `map` in either form, each of a listed route and a known setting,
/// given once.
fn route_values<'a>(
    map: &'a BTreeMap<String, String>,
    names: &[String],
    problems: &mut Vec<String>,
) -> RouteValues<'a> {
    let mut values: RouteValues<'a> = BTreeMap::new();
    for (key, value) in map {
        let Some(located) = settings::named(key, ROUTE_KEY_PREFIX, "name", problems) else {
            continue;
        };
        // Route names are matched in their environment form, whichever form the key is in.
        let route = located.name;
        let Some(index) = names.iter().position(|n| env_part(n) == env_part(route)) else {
            problems.push(format!(
                "`{key}`: route `{}` is not listed in `{ROUTES_KEY}`",
                route.to_ascii_lowercase()
            ));
            continue;
        };
        let Some(setting) = SETTINGS.iter().find(|s| **s == located.setting) else {
            problems.push(format!(
                "`{key}`: unknown key (a route takes {})",
                SETTINGS.join(", ")
            ));
            continue;
        };
        if values.insert((index, setting), value.trim()).is_some() {
            problems.push(format!("`{key}`: set twice (dotted and environment form)"));
        }
    }
    values
}

/// The route `name` (the `index`th listed) from its values, or `None` when its source or
/// table is missing or unusable (each problem recorded).
fn build_route(
    index: usize,
    name: &str,
    values: &RouteValues<'_>,
    problems: &mut Vec<String>,
) -> Option<Route> {
    let key = |s: &str| format!("{ROUTE_KEY_PREFIX}{name}.{s}");
    let source = values.get(&(index, "source")).copied().unwrap_or("");
    if source.is_empty() {
        problems.push(format!("`{}` is required", key("source")));
    }
    let table = values.get(&(index, "table")).copied().unwrap_or("");
    let split = table.split_once('.').filter(|(d, t)| {
        gateway_core::names::name_problem(d).is_none()
            && gateway_core::names::name_problem(t).is_none()
    });
    if split.is_none() {
        problems.push(format!(
            "`{}` must be `<database>.<table>`, each a valid name",
            key("table")
        ));
    }
    let cluster = values
        .get(&(index, "cluster"))
        .map(|c| (*c).to_owned())
        .filter(|c| !c.is_empty());
    let op = match values.get(&(index, "operation")).copied().unwrap_or("auto") {
        "auto" | "" => RouteOp::Auto,
        "append" => RouteOp::Append,
        "upsert" => RouteOp::Upsert,
        _ => {
            problems.push(format!(
                "`{}` must be `auto`, `append` or `upsert`",
                key("operation")
            ));
            RouteOp::Auto
        }
    };
    let source_column = values
        .get(&(index, "source-column"))
        .map(|c| (*c).to_owned())
        .filter(|c| !c.is_empty());
    if let Some(problem) = source_column
        .as_deref()
        .and_then(gateway_core::names::name_problem)
    {
        problems.push(format!("`{}`: column name {problem}", key("source-column")));
    }
    let format = match values.get(&(index, "format")).copied().unwrap_or("json") {
        "json" | "" => RouteFormat::Json,
        "arrow" => RouteFormat::Arrow,
        _ => {
            problems.push(format!("`{}` must be `json` or `arrow`", key("format")));
            RouteFormat::Json
        }
    };
    if format == RouteFormat::Arrow && source_column.is_some() {
        problems.push(format!(
            "`{}`: an Arrow record holds many rows, which a source column cannot tell apart; \
             leave it unset with `format = arrow`",
            key("source-column")
        ));
    }
    let (Some((database, table)), false) = (split, source.is_empty()) else {
        return None;
    };
    Some(Route {
        name: name.to_owned(),
        source: source.to_owned(),
        cluster,
        database: database.to_owned(),
        table: table.to_owned(),
        op,
        source_column,
        format,
    })
}

/// Two routes may not share a source: a record would have two tables.
fn check_sources(routes: &[Route], problems: &mut Vec<String>) {
    for (i, a) in routes.iter().enumerate() {
        if routes[..i].iter().any(|b| b.source == a.source) {
            problems.push(format!(
                "`{}`: another route has the same source",
                format_args!("{ROUTE_KEY_PREFIX}{}.source", a.name)
            ));
        }
    }
}

/// The route a record from `origin` takes, if any.
pub fn find<'a>(routes: &'a [Route], origin: Option<&str>) -> Option<&'a Route> {
    let origin = origin?;
    routes.iter().find(|r| r.matches(origin))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::map_of;

    #[test]
    fn routes_read_in_either_form_and_match_arns_and_names() {
        let routes = from_map(&map_of(&[
            ("gateway.ingest.routes", "orders, cdc"),
            (
                "gateway.ingest.route.orders.source",
                "arn:aws:sqs:eu-west-1:1:orders",
            ),
            ("gateway.ingest.route.orders.table", "shop.orders"),
            ("FLUSS_GATEWAY__INGEST__ROUTE__CDC__SOURCE", "Users"),
            ("FLUSS_GATEWAY__INGEST__ROUTE__CDC__TABLE", "shop.users"),
            ("FLUSS_GATEWAY__INGEST__ROUTE__CDC__OPERATION", "upsert"),
            ("FLUSS_GATEWAY__INGEST__ROUTE__CDC__SOURCE_COLUMN", "src"),
        ]))
        .unwrap();
        assert_eq!(routes.len(), 2);
        assert_eq!(routes[1].source_column.as_deref(), Some("src"));
        assert_eq!(routes[0].source_column, None);
        assert_eq!(routes[1].op, RouteOp::Upsert);
        assert_eq!(routes[0].op, RouteOp::Auto);
        assert_eq!(routes[0].format, RouteFormat::Json);
        let ddb = "arn:aws:dynamodb:eu-west-1:1:table/Users/stream/2026-01-01T00:00:00.000";
        assert_eq!(find(&routes, Some(ddb)).unwrap().name, "cdc");
        assert_eq!(
            find(&routes, Some("arn:aws:sqs:eu-west-1:1:orders"))
                .unwrap()
                .name,
            "orders"
        );
        assert!(find(&routes, Some("arn:aws:sqs:eu-west-1:1:other")).is_none());
        assert!(find(&routes, None).is_none());
        let stream = Route {
            source: "clicks".into(),
            ..routes[0].clone()
        };
        assert!(stream.matches("arn:aws:kinesis:eu-west-1:1:stream/clicks"));
        assert!(stream.matches("clicks"));
        assert!(!stream.matches("arn:aws:kinesis:eu-west-1:1:stream/clicks2"));
    }

    #[test]
    fn every_mistake_is_named_by_key() {
        let e = from_map(&map_of(&[
            ("gateway.ingest.routes", "a,B!"),
            ("gateway.ingest.route.a.table", "nodot"),
            ("gateway.ingest.route.a.operation", "merge"),
            ("gateway.ingest.route.a.sorce", "x"),
            ("gateway.ingest.route.zz.source", "x"),
            ("gateway.ingest.route.a.source-column", "bad name"),
            ("gateway.ingest.route.a.format", "avro"),
        ]))
        .unwrap_err();
        let m = e.message();
        for want in [
            "route name `B!`",
            "`gateway.ingest.route.a.source` is required",
            "`gateway.ingest.route.a.table` must be",
            "`gateway.ingest.route.a.operation` must be",
            "`gateway.ingest.route.a.sorce`: unknown key",
            "route `zz` is not listed",
            "`gateway.ingest.route.a.source-column`: column name",
            "`gateway.ingest.route.a.format` must be `json` or `arrow`",
        ] {
            assert!(m.contains(want), "{want} missing from {m}");
        }
        assert!(from_map(&BTreeMap::new()).unwrap().is_empty());
    }
}
