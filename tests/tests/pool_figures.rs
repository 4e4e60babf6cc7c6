//! Figures of `fluss-pool` against the shared local stack, printed for the design notes: time to
//! the first connection, time to a cached table handle, and the resident memory of one idle
//! warm connection. One test in its own binary, so no other test shares the process's RSS.
//! Run with `--nocapture` to see them.

// Its own binary (see above), so only a part of the pool helpers serves it.
#[allow(dead_code)]
#[path = "support/pool.rs"]
mod pool;

use std::time::{Duration, Instant};

use fluss::metadata::TablePath;
use fluss_pool::{Identity, Pool};
use integration_tests::{Stack, timed, unique_name};
use pool::*;

/// Resident set size of this process in KiB (`VmRSS` of /proc/self/status).
fn rss_kib() -> u64 {
    integration_tests::proc_status_kib("self", "VmRSS").unwrap_or(0)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_figures() {
    let stack = Stack::load();
    let config = pool_config(&stack, &[]);
    // Settle the runtime and allocator before the baseline.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_before = rss_kib();

    let pool = Pool::new(config);
    let within = secs(20);
    let connect = || pool.connection("default", &Identity::Service, &within);
    let (conn, first_connection) = timed(connect()).await;
    let conn = conn.expect("first connection");
    let (again, warm_connection) = timed(connect()).await;
    let again = again.expect("warm connection");
    assert!(std::sync::Arc::ptr_eq(&conn, &again));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_idle_connection = rss_kib();

    let path = TablePath::new("pool_it".to_owned(), unique_name("figures"));
    create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
        .await
        .expect("create table");
    let started = Instant::now();
    let handle = conn.table(&path, &secs(10)).await.expect("table handle");
    let first_table = started.elapsed();
    let (cached, cached_table) = timed(conn.table(&path, &secs(10))).await;
    let cached = cached.expect("cached handle");
    assert!(std::sync::Arc::ptr_eq(&handle, &cached));

    let started = Instant::now();
    upsert_id_v(&conn, &handle, 0, "first", &secs(10))
        .await
        .expect("first write");
    let first_write = started.elapsed();
    let mut writes = Vec::new();
    let mut lookups = Vec::new();
    for id in 1..=20 {
        let started = Instant::now();
        upsert_id_v(&conn, &handle, id, "v", &secs(10))
            .await
            .expect("write");
        writes.push(started.elapsed());
        let started = Instant::now();
        lookup_v(&conn, &handle, id, &secs(10))
            .await
            .expect("lookup");
        lookups.push(started.elapsed());
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_with_table = rss_kib();

    println!(
        "fluss-pool figures (Fluss {}, loopback, debug build):",
        stack.fluss_version()
    );
    println!("  time to first connection        {first_connection:?}");
    println!("  warm connection() (cached)      {warm_connection:?}");
    println!("  time to first table handle      {first_table:?}  (1 metadata RPC + codec)");
    println!("  cached table handle             {cached_table:?}");
    println!("  first write (spawns the writer) {first_write:?}");
    println!("  write + ack, median of 20       {:?}", median(writes));
    println!("  lookup, median of 20            {:?}", median(lookups));
    println!(
        "  RSS delta, one idle warm connection           {} KiB ({} -> {} KiB)",
        rss_idle_connection.saturating_sub(rss_before),
        rss_before,
        rss_idle_connection
    );
    println!(
        "  RSS delta, + cached table, writer, lookups    {} KiB",
        rss_with_table.saturating_sub(rss_before)
    );
    println!("  pool stats {:?}", pool.stats());
}
