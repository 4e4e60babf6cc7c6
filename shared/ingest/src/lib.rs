//! Event-triggered ingestion: the records of an SQS (standard or FIFO), Kinesis Data Streams,
//! DynamoDB Streams or Kafka (Amazon MSK, self-managed) event written into Fluss tables through
//! the same write operation the HTTP write route calls, with a partial batch failure report that
//! names exactly the records Lambda must deliver again.
//!
//! - [`event`] turns an event into [`event::Record`]s (failure id, order group, origin, payload).
//! - [`routes`] maps a source to a table from configuration, so a bare row is enough.
//! - [`envelope`] reads a record's body: `{"table":"db.t","cluster":"c"?,"upsert":{…}}`, or a
//!   bare row for a routed source.
//! - [`dynamo`] maps DynamoDB attribute values to the write route's row form.
//! - [`run`] plans and runs the writes: per table, concurrently; per order group (shard,
//!   partition, FIFO message group) in order, stopping at the first failure.
#![warn(missing_docs)]

pub mod dynamo;
pub mod envelope;
pub mod event;
pub mod routes;
pub mod run;

use std::collections::BTreeMap;

use gateway_core::GatewayError;
use gateway_core::settings::{self, Key, Kind, Slot};

pub use run::Ingest;

/// `gateway.ingest.poison-records`: `fail` (report a record that can never be written, so the
/// queue's redrive policy moves it to a dead-letter queue) or `skip` (log, count, drop).
pub const POISON_KEY: &str = "gateway.ingest.poison-records";

/// `gateway.ingest.timeout`: bound on one invocation's writes; the Lambda deadline minus the
/// margin applies when it is earlier. Rows not acknowledged by then are reported as failures.
pub const TIMEOUT_KEY: &str = "gateway.ingest.timeout";

/// The ingest function's own keys, for the settings registry ([`routes::KEYS`] are the route
/// keys).
pub const KEYS: &[Key] = &[
    Key::new(
        POISON_KEY,
        Kind::Text,
        "fail",
        "what to do with a record that can never be written: fail (report it) or skip",
    ),
    Key::new(
        TIMEOUT_KEY,
        Kind::Duration,
        "30s",
        "bound on one invocation's writes (the Lambda deadline minus the margin applies when earlier)",
    ),
];

/// What happens to a poison record (undecodable body, unknown table, a row the codec rejects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poison {
    /// Reported as failed (the default): the source redelivers it, then dead-letters it.
    Fail,
    /// Logged and counted, then dropped: reported as processed.
    Skip,
}

/// Ingest settings from the configuration map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestSettings {
    /// See [`POISON_KEY`].
    pub poison: Poison,
    /// The configured routes (none: every record is an envelope).
    pub routes: Vec<routes::Route>,
    /// See [`TIMEOUT_KEY`].
    pub timeout: std::time::Duration,
}

impl IngestSettings {
    /// Reads `gateway.ingest.*`; a bad value names the key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut poison = "fail".to_owned();
        let mut timeout = std::time::Duration::from_secs(30);
        // The route keys are read (and checked) by `routes`.
        let own: BTreeMap<String, String> = map
            .iter()
            .filter(|(k, _)| {
                !settings::in_namespace(k, routes::ROUTE_KEY_PREFIX)
                    && !settings::in_namespace(k, routes::ROUTES_KEY)
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let read = settings::read(
            &own,
            &["gateway.ingest."],
            &mut [
                (POISON_KEY, Slot::Text(&mut poison)),
                (
                    TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut timeout,
                        allow_zero: false,
                    },
                ),
            ],
            "ingest",
        );
        let routes = routes::from_map(map);
        let routes = match (read, routes) {
            (Ok(()), Ok(routes)) => routes,
            (Err(a), Err(b)) => {
                return Err(GatewayError::invalid(format!(
                    "{}; {}",
                    a.message(),
                    b.message()
                )));
            }
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let poison = match poison.trim() {
            "fail" => Poison::Fail,
            "skip" => Poison::Skip,
            _ => {
                return Err(GatewayError::invalid(format!(
                    "`{POISON_KEY}` must be `fail` or `skip`"
                )));
            }
        };
        Ok(IngestSettings {
            poison,
            routes,
            timeout,
        })
    }
}
