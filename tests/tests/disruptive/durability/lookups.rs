//! The durability suite's lookups: rows already acknowledged, looked up through the gateway all
//! along the faults, and beside them a key never written. Right after a bucket leader changed
//! that one must answer 503 (the gateway's failover guard: a new leader may not show
//! acknowledged rows yet, `client.lookup.failover-window`); otherwise absent, never found.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    /// Lookups of acknowledged rows the failover guard refused: each is a lookup in which
    /// Fluss called an acknowledged row absent (every key asked had been acknowledged, and the
    /// final check finds every one): the stale answer the guard keeps from the caller.
    pub(super) acked_guarded: u64,
    /// Lookups of a key never written: statuses.
    pub(super) probes: BTreeMap<u16, u64>,
    /// Of those, 503s the failover guard gave (the bucket leaders changed moments ago).
    pub(super) probes_guarded: u64,
    /// Answers that called a key never written found (must stay empty).
    pub(super) probes_wrong: Vec<String>,
    /// The first and the last body of each non-200 status of those lookups.
    pub(super) probe_samples: BTreeMap<u16, (String, String)>,
}

/// The message of the failover guard's 503 (fluss-ops `ensure_settled_leaders`).
const GUARD_TEXT: &str = "the new leader may not show every acknowledged row yet";

/// A key no writer writes (they count up from 0).
fn never_written(turn: usize) -> i32 {
    -1 - i32::try_from(turn % 1000).unwrap_or(0)
}

/// Looks up a key never written in `table` until the answer is a 200 (the failover guard's
/// window over), for at most 45 s; that answer's status and `found`.
pub(super) async fn absent_once_settled(client: &Client, table: &str, rows: Rows) -> (u16, Value) {
    let until = Instant::now() + Duration::from_secs(45);
    loop {
        let reply = client
            .post(
                &lookups(table),
                &json!({ "keys": [rows.key(never_written(0))] }),
            )
            .await;
        if reply.status == 200 || Instant::now() > until {
            return (reply.status, reply.body["results"][0]["found"].clone());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
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
                if reply.body.to_string().contains(GUARD_TEXT) {
                    tally.acked_guarded += 1;
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
            let absent = rows.key(never_written(turn));
            let reply = client
                .post(&lookups(table), &json!({ "keys": [absent] }))
                .await;
            *tally.probes.entry(reply.status).or_default() += 1;
            if reply.status != 200 {
                let body = reply.body.to_string();
                let first = body.clone();
                tally
                    .probe_samples
                    .entry(reply.status)
                    .or_insert_with(|| (first, String::new()))
                    .1 = body;
            }
            if reply.status != 200 && reply.retry_after.is_none() {
                tally
                    .without_retry_after
                    .push(format!("{}: {}", reply.status, reply.body));
            }
            match reply.status {
                200 if reply.body["results"][0]["found"] == false => {}
                200 => tally.probes_wrong.push(reply.body.to_string()),
                503 if reply.body.to_string().contains(GUARD_TEXT) => tally.probes_guarded += 1,
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tally
}
