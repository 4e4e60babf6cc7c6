//! The durability suite's lookups: rows already acknowledged, looked up through the gateway all
//! along the faults.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::write_load::{Acked, Client, Rows, lookups};

/// Lookups of rows already acknowledged, all along the faults, through the gateway: what they
/// answered.
#[derive(Default, Debug)]
pub(super) struct LookupTally {
    pub(super) requests: u64,
    pub(super) keys: u64,
    pub(super) statuses: BTreeMap<u16, u64>,
    /// Acknowledged rows a 200 answer called absent or gave another value (must stay empty).
    pub(super) wrong: Vec<(String, i32, Value)>,
    /// Non-200 answers without `Retry-After`.
    pub(super) without_retry_after: Vec<String>,
    /// The first body of each non-200 status.
    pub(super) samples: BTreeMap<u16, String>,
}

/// Looks up, every 100 ms, 20 rows of each primary-key table that were acknowledged before
/// the lookup was sent.
pub(super) async fn check_lookups(
    client: Client,
    tables: Vec<(String, Rows, Arc<Acked>)>,
    stop: Arc<AtomicBool>,
) -> LookupTally {
    let mut tally = LookupTally::default();
    let mut turn = 0usize;
    while !stop.load(Ordering::Relaxed) {
        for (table, rows, acked) in &tables {
            let sample: Vec<i32> = {
                let ids = acked
                    .ids
                    .as_ref()
                    .expect("acked ids")
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                if ids.is_empty() {
                    continue;
                }
                // Spread over the whole history: old rows and the newest ones.
                (0..20)
                    .map(|n| ids[(turn * 7919 + n * 104_729) % ids.len()])
                    .chain(ids.last().copied())
                    .collect()
            };
            turn += 1;
            let keys: Vec<Value> = sample.iter().map(|id| rows.key(*id)).collect();
            let reply = client.post(&lookups(table), &json!({ "keys": keys })).await;
            tally.requests += 1;
            tally.keys += sample.len() as u64;
            *tally.statuses.entry(reply.status).or_default() += 1;
            if reply.status != 200 {
                tally
                    .samples
                    .entry(reply.status)
                    .or_insert_with(|| reply.body.to_string());
                if reply.retry_after.is_none() {
                    tally
                        .without_retry_after
                        .push(format!("{}: {}", reply.status, reply.body));
                }
                continue;
            }
            let results = reply.body["results"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(results.len(), sample.len(), "one result per key: {reply:?}");
            for (id, result) in sample.iter().zip(results) {
                if result["found"] != true || result["row"]["v"] != format!("v{id}") {
                    tally.wrong.push((table.clone(), *id, result));
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tally
}
