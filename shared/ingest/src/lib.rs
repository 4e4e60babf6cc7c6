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

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod dynamo;
pub mod envelope;
pub mod event;
pub mod routes;
pub mod run;

use std::collections::BTreeMap;

use gateway_core::GatewayError;
use gateway_core::settings::{self, Slot};

pub use run::Ingest;

pub use gateway_core::settings::keys::ingest::{POISON_KEY, TIMEOUT_KEY};

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
