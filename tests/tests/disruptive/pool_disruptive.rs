//! `fluss-pool` surviving a frozen TabletServer and a killed and restarted cluster, without a
//! process restart. These tests stop and kill processes, so they run on a PRIVATE cluster
//! started here (never the shared stack other tests use) and in one test function, serially.
//! The cluster is stopped by a Drop guard whatever the outcome.

use std::time::{Duration, Instant};

use crate::support::pool::*;
use fluss::metadata::TablePath;
use fluss_pool::{Deadline, Pool};
use gateway_core::ErrorCode;
use integration_tests::private_stack::PrivateStack;
use integration_tests::timed;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn the_pool_survives_a_frozen_tablet_server_and_a_killed_and_restarted_cluster() {
    let stack = PrivateStack::start("fluss-pool-it");
    let _watchdog = stack.watchdog(Duration::from_secs(300));
    let rt = runtime();
    let pool = Pool::new(pool_config(
        &stack.env(),
        &[("connect-timeout", "3s"), ("health.probe-timeout", "1s")],
    ));
    let path = TablePath::new("pool_it", "disruption");
    rt.block_on(async {
        create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
            .await
            .expect("create table");
        // A write before the new bucket has a leader fails once fluss-rs' retries run out.
        let conn = pool
            .connection("default", &fluss_pool::Identity::Service, &secs(10))
            .await
            .expect("connection");
        integration_tests::wait_for_leaders(conn.fluss(), &path, 1).await;
        pool_upsert(&pool, &path, 1, "warm", &secs(10))
            .await
            .expect("warm-up write");
        assert_eq!(
            pool_lookup(&pool, &path, 1, &secs(10))
                .await
                .expect("lookup"),
            Some("warm".to_owned())
        );
    });

    integration_tests::progress("pool_disruptive: 1. SIGSTOP of the TabletServer");
    // --- 1. A frozen TabletServer: calls end with `timeout` at their deadline. ---
    stack.signal("tablet", "STOP");
    let budget = Duration::from_secs(3);
    rt.block_on(async {
        let budgeted = || Deadline::after(budget);
        let (err, write_elapsed) = timed(pool_upsert(&pool, &path, 2, "frozen", &budgeted())).await;
        let err = err.expect_err("a write to a stopped TabletServer cannot be acked");
        let (lookup_err, lookup_elapsed) = timed(pool_lookup(&pool, &path, 1, &budgeted())).await;
        let lookup_err = lookup_err.expect_err("a lookup on a stopped TabletServer cannot answer");
        println!(
            "SIGSTOP: write -> {} after {write_elapsed:?}, lookup -> {} after {lookup_elapsed:?} (deadline {budget:?})",
            err.code(),
            lookup_err.code()
        );
        assert_eq!(err.code(), ErrorCode::Timeout, "{err:?}");
        assert_eq!(lookup_err.code(), ErrorCode::Timeout, "{lookup_err:?}");
        assert!(write_elapsed < budget + Duration::from_secs(1));
        assert!(lookup_elapsed < budget + Duration::from_secs(1));
    });
    integration_tests::progress("pool_disruptive: SIGCONT");
    stack.signal("tablet", "CONT");
    rt.block_on(async {
        let started = Instant::now();
        pool_upsert(&pool, &path, 3, "thawed", &secs(10))
            .await
            .expect("the next write after SIGCONT succeeds");
        let value = pool_lookup(&pool, &path, 3, &secs(10))
            .await
            .expect("the next lookup after SIGCONT succeeds");
        println!(
            "SIGCONT: next write + lookup succeeded after {:?}; stats {:?}",
            started.elapsed(),
            pool.stats()
        );
        assert_eq!(value, Some("thawed".to_owned()));
    });

    integration_tests::progress(
        "pool_disruptive: 2. kill -9 of the cluster, traffic during the outage",
    );
    // --- 2. kill -9 of the whole cluster, restart on the same ports. ---
    for process in ["tablet", "coordinator", "zookeeper"] {
        stack.signal(process, "KILL");
    }
    rt.block_on(async {
        // Requests during the outage fail fast and truthfully; none hangs.
        for attempt in 1..=4 {
            let started = Instant::now();
            let result = pool_upsert(&pool, &path, 10 + attempt, "outage", &secs(2)).await;
            let code = result.as_ref().map_err(|e| e.code()).err();
            integration_tests::progress(&format!(
                "pool_disruptive: outage write {attempt}: {:?} after {:?}",
                code,
                started.elapsed()
            ));
            assert!(
                matches!(code, Some(ErrorCode::Unavailable | ErrorCode::Timeout)),
                "{result:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(3));
        }
    });
    stack.run("start");
    let outcome = recover_after_restart(&rt, &pool, &path, 20);
    let (rt, after, value) = recovered(rt, outcome);
    println!(
        "kill -9 + restart (with traffic during the outage): pool recovered {after:?} after the \
         cluster was ready; stats {:?}",
        pool.stats()
    );
    assert_eq!(value, Some("restarted-20".to_owned()));

    integration_tests::progress("pool_disruptive: 3. kill -9 of the cluster, idle");
    // --- 3. The same while the container is idle: no request sees the outage. ---
    for process in ["tablet", "coordinator", "zookeeper"] {
        stack.signal(process, "KILL");
    }
    stack.run("start");
    let outcome = recover_after_restart(&rt, &pool, &path, 30);
    let (rt, after, value) = recovered(rt, outcome);
    println!(
        "kill -9 + restart (idle during the outage): pool recovered {after:?} after the cluster \
         was ready; stats {:?}",
        pool.stats()
    );
    assert_eq!(value, Some("restarted-30".to_owned()));
    // Bounded: a retired connection's fluss-rs sender may still spin (see `recovered`).
    rt.shutdown_timeout(Duration::from_secs(5));
    drop(stack);
}

/// Retries "recreate the table, write, read back" until it works; the restarted cluster has
/// fresh state, so the table is recreated as a deployment would. Gives up after 30 s.
fn recover_after_restart(
    rt: &tokio::runtime::Runtime,
    pool: &Pool,
    path: &TablePath,
    id: i32,
) -> (
    Duration,
    Result<Option<String>, Option<gateway_core::GatewayError>>,
) {
    let ready = Instant::now();
    let value = format!("restarted-{id}");
    rt.block_on(async {
        let mut last = None;
        while ready.elapsed() < Duration::from_secs(30) {
            let attempt = async {
                create_pk_table(pool, path, &id_v_columns(), "id", &secs(5)).await?;
                pool_upsert(pool, path, id, &value, &secs(5)).await?;
                pool_lookup(pool, path, id, &secs(5)).await
            };
            match attempt.await {
                Ok(v) => return (ready.elapsed(), Ok(v)),
                Err(e) => {
                    integration_tests::progress(&format!(
                        "pool_disruptive: after restart +{:?}: {e}",
                        ready.elapsed()
                    ));
                    last = Some(e);
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        (ready.elapsed(), Err(last))
    })
}

/// The value read back after a restart, or the test's failure. A failure first shuts the
/// runtime down with a bound: a task of fluss-rs spinning without yielding (seen once in 8
/// runs under load: its writer's sender after a restart) would block the runtime's drop, and
/// the panic's unwinding, forever.
fn recovered(
    rt: tokio::runtime::Runtime,
    outcome: (
        Duration,
        Result<Option<String>, Option<gateway_core::GatewayError>>,
    ),
) -> (tokio::runtime::Runtime, Duration, Option<String>) {
    match outcome {
        (after, Ok(value)) => (rt, after, value),
        (_, Err(last)) => {
            rt.shutdown_timeout(Duration::from_secs(5));
            panic!("the pool did not recover within 30 s of the cluster being ready: {last:?}")
        }
    }
}
