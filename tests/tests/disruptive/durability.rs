//! [durability] No acknowledged row lost in the production shape: three TabletServers, default
//! replication 3, at least two in-sync replicas (`FLUSS_STACK_SHAPE=production`), the standalone
//! server with authentication on, and a continuous write load on four tables (log and
//! primary-key, partitioned and not) while faults come one after the other:
//!
//! 1. `kill -9` of the TabletServer leading the log table's bucket 0, restarted later
//!    (`DURABILITY_ROUNDS` times);
//! 2. a rolling restart of the three TabletServers, one at a time, as an operator does it
//!    (SIGTERM, start again, let it catch up);
//! 3. `kill -9` of the coordinator while writes and DDL go on, restarted later.
//!
//! Beside the writes, lookups of rows already acknowledged run all along: none may come back
//! absent or with another value; lookups of a key never written must answer 503 right after a
//! bucket leader changed (the failover guard), then absent again. At the end every acknowledged row is read back straight from
//! Fluss (the log tables by a scan of every bucket and partition, the primary-key tables by
//! lookups), and each fault prints a `[durability]` figure line: rows acked, checked and lost,
//! the time until every bucket took writes again, and the share of failed requests.
//!
//! `make test` runs the short form; `make durability` the long one (more leader kills, longer
//! downtimes and settles: `DURABILITY_ROUNDS`, `DURABILITY_DOWN_SECS`, `DURABILITY_SETTLE_SECS`).
//! The single-replica figure is measured beside it by the reliability suite's kill -9 test.

#![allow(clippy::await_holding_lock)]

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fluss::metadata::{TableBucket, TablePath};
use integration_tests::private_stack::PrivateStack;
use integration_tests::server::{ServerProcess, assert_no_secrets, secured_env};
use integration_tests::unique_name;
use reqwest::Method;
use serde_json::json;

use super::write_load::{
    Acked, Client, DB, Ledger, Rows, env_number, log_ids, missing_keyed_rows, stream_rows,
};

mod lookups;
use lookups::{absent_once_settled, check_lookups};

/// The three TabletServers, as `infra/local/stack.py` names them in the production shape.
const TABLETS: [&str; 3] = ["tablet", "tablet-1", "tablet-2"];

/// One table under load.
struct Target {
    name: String,
    /// `upsert` (a primary-key table) or `append` (a log table).
    op: &'static str,
    rows: Rows,
}

impl Target {
    fn pk(&self) -> bool {
        self.op == "upsert"
    }

    fn kind(&self) -> String {
        format!(
            "{}{}",
            if self.pk() { "pk" } else { "log" },
            if self.rows.partitioned {
                " partitioned"
            } else {
                ""
            }
        )
    }
}

/// Creates a table of `id INT`, `v STRING` (and `p STRING`, its partition column, with the
/// partitions `a` and `b`) in three buckets, so that every TabletServer leads one.
async fn create(client: &Client, target: &Target) {
    let db = client
        .post("/v1/clusters/default/databases", &json!({"database": DB}))
        .await;
    assert!(db.status == 201 || db.status == 409, "{db:?}");
    let mut columns = vec![
        json!({"name": "id", "data_type": {"type": "INT"}}),
        json!({"name": "v", "data_type": {"type": "STRING"}}),
    ];
    let mut spec = json!({"table_name": target.name, "distribution": {"bucket_count": 3}});
    if target.rows.partitioned {
        columns.push(json!({"name": "p", "data_type": {"type": "STRING"}}));
        spec["partitioned_by"] = json!(["p"]);
    }
    spec["columns"] = json!(columns);
    if target.pk() {
        spec["primary_key"] = if target.rows.partitioned {
            json!(["id", "p"])
        } else {
            json!(["id"])
        };
    }
    let tables = format!("/v1/clusters/default/databases/{DB}/tables");
    let created = client.post(&tables, &spec).await;
    assert_eq!(created.status, 201, "{created:?}");
    if target.rows.partitioned {
        for p in ["a", "b"] {
            let url = format!("{tables}/{}/partitions", target.name);
            let made = client.post(&url, &json!({"partition": {"p": p}})).await;
            assert_eq!(made.status, 201, "{made:?}");
        }
    }
}

/// A fault and the time it spans: from the fault until the next one begins.
struct Fault {
    name: String,
    at: Instant,
    end: Instant,
    /// Where the cluster was whole again (the last server back).
    back: Instant,
}

/// DDL while the coordinator dies and comes back: creates and drops a table every 300 ms
/// until `stop`; (status of each call, in order, with when it was sent).
async fn ddl_loop(client: Client, stop: Arc<AtomicBool>) -> Vec<(Instant, u16, Option<String>)> {
    let tables = format!("/v1/clusters/default/databases/{DB}/tables");
    let mut seen = Vec::new();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let name = format!("ddl_{n}");
        let spec =
            json!({"table_name": name, "columns": [{"name": "id", "data_type": {"type": "INT"}}]});
        let sent = Instant::now();
        let created = client.post(&tables, &spec).await;
        seen.push((sent, created.status, created.retry_after.clone()));
        if created.status == 201 {
            let sent = Instant::now();
            let dropped = client
                .send(Method::DELETE, &format!("{tables}/{name}"), None)
                .await;
            seen.push((sent, dropped.status, dropped.retry_after));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    seen
}

/// The server leading bucket 0 of `table` (non-partitioned), as the cluster's metadata says.
async fn leader_of_bucket_0(stack: &PrivateStack, table: &str) -> i32 {
    let conn = stack.env().connect_plaintext().await;
    let path = TablePath::new(DB.to_owned(), table.to_owned());
    let metadata = conn.get_metadata();
    integration_tests::bounded("metadata", metadata.update_table_metadata(&path))
        .await
        .expect("metadata");
    let cluster = metadata.get_cluster();
    let table_id = cluster.get_table_id(&path).expect("table id");
    cluster
        .leader_for(&TableBucket::new(table_id, 0))
        .map(|node| node.id())
        .expect("bucket 0 has a leader")
}

/// Runs `f` (a blocking `stack.py` call) off the async runtime and gives the stack back.
async fn blocking(
    stack: PrivateStack,
    f: impl FnOnce(&PrivateStack) + Send + 'static,
) -> PrivateStack {
    tokio::task::spawn_blocking(move || {
        f(&stack);
        stack
    })
    .await
    .expect("stack call")
}

/// The first request of `ledger` sent at or after `from` whose rows were all acknowledged.
fn first_whole_ack(ledger: &Ledger, from: Instant) -> Option<Instant> {
    ledger
        .answers
        .iter()
        .find(|a| a.sent >= from && a.status == 200 && a.acked == a.rows)
        .map(|a| a.sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_production_shape_loses_no_acknowledged_row_to_a_leader_kill_a_rolling_restart_or_a_coordinator_kill()
 {
    let rounds = env_number("DURABILITY_ROUNDS", 1);
    let down = Duration::from_secs(env_number("DURABILITY_DOWN_SECS", 6));
    let settle = Duration::from_secs(env_number("DURABILITY_SETTLE_SECS", 4));
    // A short ZooKeeper session, so the cluster notices a killed leader soon, and a short
    // replica lag, so a dead follower leaves the in-sync set soon: until it does, acks=all
    // writes to its buckets wait for it (Fluss's defaults are longer; the failover time below
    // grows with both, docs/operations.md).
    let stack = PrivateStack::start_shaped(
        "durability",
        "production",
        "zookeeper.client.session-timeout=6s,log.replica.max-lag-time=5s",
    );
    let per_fault = down + settle + Duration::from_secs(90);
    let _watchdog = stack.watchdog(Duration::from_secs(240) + per_fault * (rounds as u32 + 4));
    let env = stack.env();
    assert_eq!(env.var("FLUSS_TABLET_SERVERS"), "3", "the production shape");
    let mut secured = secured_env(&env, "3s");
    // Twice the cluster's replica lag above: the longest a new leader's watermark waits.
    secured.env.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CLIENT__LOOKUP__FAILOVER_WINDOW".to_owned(),
        "10s".to_owned(),
    );
    let mut server = ServerProcess::start(&secured.env);
    let client = Client::new(&server, &secured.api_key, Duration::from_secs(5));
    let targets = [
        ("append", false),
        ("upsert", false),
        ("append", true),
        ("upsert", true),
    ]
    .map(|(op, partitioned)| Target {
        name: unique_name(if op == "upsert" { "dur_pk" } else { "dur_log" }),
        op,
        rows: Rows { partitioned },
    });
    for target in &targets {
        create(&client, target).await;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let sinks: Vec<Arc<Acked>> = targets
        .iter()
        .map(|_| {
            Arc::new(Acked {
                count: Arc::new(AtomicU64::new(0)),
                ids: Some(Mutex::new(Vec::new())),
            })
        })
        .collect();
    let writers: Vec<_> = targets
        .iter()
        .zip(&sinks)
        .map(|(t, sink)| {
            tokio::spawn(stream_rows(
                client.clone(),
                t.name.clone(),
                t.op,
                t.rows,
                0,
                10,
                stop.clone(),
                sink.clone(),
            ))
        })
        .collect();
    let checked_tables = targets
        .iter()
        .zip(&sinks)
        .filter(|(t, _)| t.pk())
        .map(|(t, s)| (t.name.clone(), t.rows, s.clone()))
        .collect();
    let checker = tokio::spawn(check_lookups(client.clone(), checked_tables, stop.clone()));
    tokio::time::sleep(Duration::from_secs(3)).await;

    let mut faults: Vec<Fault> = Vec::new();
    let mut stack = stack;
    // 1. kill -9 of the leader, restarted later.
    for round in 1..=rounds {
        let leader = leader_of_bucket_0(&stack, &targets[0].name).await;
        let process = PrivateStack::tablet_process(leader);
        let at = Instant::now();
        stack.signal(&process, "KILL");
        tokio::time::sleep(down).await;
        let name = process.clone();
        stack = blocking(stack, move |s| s.restart(&name)).await;
        let back = Instant::now();
        tokio::time::sleep(settle).await;
        faults.push(Fault {
            name: format!("kill -9 of the leader ({process}, round {round}/{rounds})"),
            at,
            end: Instant::now(),
            back,
        });
    }
    // 2. a rolling restart, one server at a time.
    let at = Instant::now();
    for process in TABLETS {
        stack = blocking(stack, move |s| {
            s.stop_gracefully(process, Duration::from_secs(60));
            s.restart(process);
        })
        .await;
        // Long enough for the restarted server to catch up and rejoin the in-sync replicas
        // before the next one stops.
        tokio::time::sleep(settle).await;
    }
    faults.push(Fault {
        name: "rolling restart of the 3 TabletServers".to_owned(),
        at,
        end: Instant::now(),
        back: Instant::now() - settle,
    });
    // 3. kill -9 of the coordinator during writes and DDL.
    let ddl_stop = Arc::new(AtomicBool::new(false));
    let ddl = tokio::spawn(ddl_loop(client.clone(), ddl_stop.clone()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let at = Instant::now();
    stack.signal("coordinator", "KILL");
    tokio::time::sleep(down).await;
    stack = blocking(stack, |s| s.restart("coordinator")).await;
    let back = Instant::now();
    tokio::time::sleep(settle).await;
    // The streams go on until every table has taken rows again since the coordinator came
    // back (a partitioned primary-key table is the slowest: its new leaders restore their
    // key-value state), at most RECOVERY; whether and when each did is checked below.
    const RECOVERY: Duration = Duration::from_secs(30);
    let counts = |sinks: &[Arc<Acked>]| -> Vec<u64> {
        sinks
            .iter()
            .map(|s| s.count.load(Ordering::Relaxed))
            .collect()
    };
    let at_back = counts(&sinks);
    while back.elapsed() < RECOVERY
        && counts(&sinks)
            .iter()
            .zip(&at_back)
            .any(|(now, then)| now == then)
    {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    ddl_stop.store(true, Ordering::Relaxed);
    let ddl = ddl.await.expect("ddl loop");
    faults.push(Fault {
        name: "kill -9 of the coordinator".to_owned(),
        at,
        end: Instant::now(),
        back,
    });

    stop.store(true, Ordering::Relaxed);
    let mut ledgers = Vec::new();
    for w in writers {
        ledgers.push(w.await.expect("writer"));
    }
    let lookups = checker.await.expect("lookup checker");
    // After the guard's window, a key never written is plainly absent again.
    let mut settled = Vec::new();
    for target in targets.iter().filter(|t| t.pk()) {
        settled.push(absent_once_settled(&client, &target.name, target.rows).await);
    }

    // Every acknowledged row, read back straight from Fluss (log) or through lookups (pk).
    let mut lost: Vec<HashSet<i32>> = Vec::new();
    let mut duplicates = 0;
    for (target, ledger) in targets.iter().zip(&ledgers) {
        assert!(!ledger.acked.is_empty(), "{}: no row acked", target.kind());
        let missing: HashSet<i32> = if target.pk() {
            missing_keyed_rows(&client, &target.name, &ledger.acked, target.rows, |id| {
                format!("v{id}")
            })
            .await
            .into_iter()
            .collect()
        } else {
            let path = TablePath::new(DB.to_owned(), target.name.clone());
            let seen = log_ids(&stack.env(), &path, ledger.acked.len()).await;
            duplicates += seen.values().filter(|n| **n > 1).count();
            ledger
                .acked
                .iter()
                .filter(|id| !seen.contains_key(id))
                .copied()
                .collect()
        };
        lost.push(missing);
    }

    // The figures, per fault: rows acked in its span and lost of them; how long until every
    // table took whole batches again; the share of requests that did not write all their rows.
    let mut lost_total = 0;
    let mut not_back = Vec::new();
    for fault in &faults {
        let mut acked = 0;
        let mut lost_here = 0;
        let (mut requests, mut partial) = (0u64, 0u64);
        let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
        let mut back_after = Vec::new();
        for ((target, ledger), missing) in targets.iter().zip(&ledgers).zip(&lost) {
            for (id, at) in ledger.acked.iter().zip(&ledger.acked_at) {
                if *at >= fault.at && *at < fault.end {
                    acked += 1;
                    lost_here += usize::from(missing.contains(id));
                }
            }
            for a in ledger
                .answers
                .iter()
                .filter(|a| a.sent >= fault.at && a.sent < fault.end)
            {
                requests += 1;
                *statuses.entry(a.status).or_default() += 1;
                partial += u64::from(a.status != 200 || a.acked < a.rows);
            }
            let whole = first_whole_ack(ledger, fault.at);
            back_after.push(format!(
                "{} {}",
                target.kind(),
                whole.map_or("never".to_owned(), |w| {
                    format!("{:.1}s", w.duration_since(fault.at).as_secs_f64())
                })
            ));
            // Writes must come back, by the end of the run; how soon is a figure, not a bound
            // (it moves with the machine's load and the cluster's timeouts).
            if whole.is_none() {
                let last = ledger.answers.iter().rev().find_map(|a| a.failure.clone());
                not_back.push(format!(
                    "{}: {}: no whole batch acked after the fault; last failure: {last:?}",
                    fault.name,
                    target.kind(),
                ));
            }
        }
        suite!(
            "[durability] {}: rows acked {acked}, checked {acked}, lost {lost_here}; writes whole \
             again after [{}] (cluster whole again after {:.1}s); requests {requests}, failed or \
             partial {partial} ({:.1} %), statuses {statuses:?}",
            fault.name,
            back_after.join(", "),
            fault.back.duration_since(fault.at).as_secs_f64(),
            100.0 * partial as f64 / requests.max(1) as f64,
        );
        lost_total += lost_here;
    }
    let acked_all: usize = ledgers.iter().map(|l| l.acked.len()).sum();
    let lost_all: usize = lost.iter().map(HashSet::len).sum();
    let mut codes: BTreeMap<&String, u64> = BTreeMap::new();
    for (code, n) in ledgers.iter().flat_map(|l| &l.failure_codes) {
        *codes.entry(code).or_default() += n;
    }
    let samples: BTreeMap<&String, &String> =
        ledgers.iter().flat_map(|l| &l.failure_samples).collect();
    let ddl_statuses = ddl.iter().fold(BTreeMap::new(), |mut m, (_, s, _)| {
        *m.entry(*s).or_insert(0u64) += 1;
        m
    });
    suite!(
        "[durability] in all: rows acked {acked_all}, checked {acked_all}, lost {lost_all}, \
         log duplicates {duplicates}; per-row failure codes {codes:?} (e.g. {samples:?}); lookups of acked rows: \
         {} requests, {} keys, statuses {:?}, wrong {}, stale misses refused by the failover guard \
         {}; lookups of a key never written: statuses {:?}, {} refused by the failover guard, \
         wrong {}, once settled (status, found) {settled:?}; DDL during the coordinator kill: \
         {ddl_statuses:?}",
        lookups.requests,
        lookups.keys,
        lookups.statuses,
        lookups.wrong.len(),
        lookups.acked_guarded,
        lookups.probes,
        lookups.probes_guarded,
        lookups.probes_wrong.len(),
    );

    assert_eq!(lost_all, 0, "acknowledged rows are missing");
    assert!(
        not_back.is_empty(),
        "writes did not come back: {not_back:#?}"
    );
    assert_eq!(lost_total, 0);
    assert!(
        lookups.wrong.is_empty(),
        "lookups called acknowledged rows absent or changed: {:?}",
        &lookups.wrong[..lookups.wrong.len().min(10)]
    );
    assert!(lookups.requests > 0 && lookups.statuses.get(&200).is_some_and(|n| *n > 0));
    assert!(
        lookups.probes_wrong.is_empty(),
        "a key never written was found: {:?}",
        lookups.probes_wrong
    );
    assert!(
        settled
            .iter()
            .all(|(status, found)| *status == 200 && *found == false),
        "a key never written, once the guard's window passed: {settled:?}"
    );
    // The rolling restart moves every bucket's leader, so the guard must have spoken.
    assert!(
        lookups.probes_guarded > 0,
        "no lookup miss was refused after the leader changes: {:?} {:?}",
        lookups.probes,
        lookups.probe_samples
    );
    // During failover an answer is a success, a per-row failure, or a 503/504/429: never
    // another 5xx, never a 4xx for a valid request, and a 503 or 429 says when to retry.
    let allowed = |status: &u16| matches!(status, 200 | 429 | 503 | 504);
    for ledger in &ledgers {
        // What each disallowed answer said, so that a failure names its cause.
        let disallowed: Vec<&String> = ledger
            .answers
            .iter()
            .filter(|a| !allowed(&a.status))
            .filter_map(|a| a.failure.as_ref())
            .collect();
        assert!(
            ledger.statuses.keys().all(allowed),
            "write statuses {:?}: {disallowed:?}",
            ledger.statuses
        );
        let unpaced: Vec<&String> = ledger
            .without_retry_after
            .iter()
            .filter(|a| a.starts_with("503") || a.starts_with("429"))
            .collect();
        assert!(
            unpaced.is_empty(),
            "503/429 without Retry-After: {unpaced:?}"
        );
    }
    let unpaced: Vec<&String> = lookups
        .without_retry_after
        .iter()
        .filter(|a| a.starts_with("503") || a.starts_with("429"))
        .collect();
    assert!(
        unpaced.is_empty(),
        "lookups: 503/429 without Retry-After: {unpaced:?}"
    );
    assert!(
        lookups
            .statuses
            .keys()
            .chain(lookups.probes.keys())
            .all(allowed),
        "lookup statuses {:?}; first answers: {:?}",
        lookups.statuses,
        lookups.samples
    );
    assert!(!codes.contains_key(&"internal".to_owned()), "{codes:?}");
    // The tables exist all along: a row is never told otherwise (fluss-ops `settle_gone`).
    assert!(
        !codes.contains_key(&"table_not_found".to_owned()),
        "{codes:?}: {samples:?}"
    );
    // DDL: refused while there is no coordinator (never a 500), and working again after it.
    assert!(
        ddl.iter()
            .all(|(_, s, _)| matches!(s, 201 | 204 | 409 | 503 | 504)),
        "DDL statuses {ddl_statuses:?}"
    );
    let coordinator_back = faults.last().expect("faults").back;
    assert!(
        ddl.iter()
            .any(|(sent, s, _)| *sent > coordinator_back && *s == 201),
        "no table created after the coordinator came back: {ddl_statuses:?}"
    );
    assert!(server.is_running(), "the server died");
    let mut scanned = assert_no_secrets("fluss-gateway log", &server.logs(), &secured.secrets);
    let logs = ["coordinator", "zookeeper"].into_iter().chain(TABLETS);
    for log in logs.map(|name| format!("{name}.log")) {
        scanned += assert_no_secrets(&log, &stack.log(&log), &secured.secrets);
    }
    suite!("[durability] secrets scan: {scanned} log lines, 0 secrets");
}
