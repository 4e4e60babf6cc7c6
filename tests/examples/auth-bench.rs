//! Cost of authentication per request, on the running local stack (moto's Secrets Manager):
//!
//! - (a) `KeyStore::verify_key` of a cached key in a document of KEYS keys: median and p99
//!   (goal: ≤ 50 µs);
//! - (b) the production router (`family_router`, every family) answering `GET /v1/clusters`
//!   (no Fluss I/O) in `trust` mode vs `api-key` mode, same run: the p50 difference is what
//!   authentication adds to a request.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example auth-bench [-- KEYS REQUESTS]
//! ```
//!
//! Defaults: 1000 keys, 20 000 requests per measurement (after 10% warm-up).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use gateway_auth::{Document, IdentityRef, KeyStore, Scope, StoreSettings};
use gateway_aws::SecretsManager;
use gateway_http::{Family, family_router};
use integration_tests::bench::{arg, exit_code, pct, us};
use integration_tests::bench_router::timed_200;
use integration_tests::{Stack, unique_name};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("auth-bench", run().await)
}

async fn run() -> Result<(), String> {
    let keys = arg(1, 1000)?;
    let requests = arg(2, 20_000)?;
    let stack = Stack::load();
    let aws = stack.aws_env();
    let secret_id = unique_name("bench-keys");
    let mut doc = Document::default();
    let mut last = String::new();
    for i in 0..keys {
        let (_, key) = doc.add_key(
            &format!("p{i}"),
            vec![Scope::everything()],
            IdentityRef::Service,
            None,
        )?;
        last = key;
    }
    let sm = SecretsManager::from_map(&aws);
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    sm.write(&secret_id, &text, true).await?;
    println!("document: {keys} keys, {} bytes, in moto", text.len());

    // (a) the store alone.
    let store = KeyStore::new(
        Arc::new(SecretsManager::from_map(&aws)),
        StoreSettings {
            ttl: Duration::from_secs(3600),
            ..StoreSettings::new(secret_id.clone())
        },
    );
    let started = Instant::now();
    store.preload().await.map_err(|e| e.message().to_owned())?;
    println!(
        "first read of the document (Secrets Manager GetSecretValue + parse): {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let mut times = Vec::with_capacity(requests);
    for i in 0..requests + requests / 10 {
        let t = Instant::now();
        store
            .verify_key(&last)
            .await
            .map_err(|e| e.message().to_owned())?;
        if i >= requests / 10 {
            times.push(t.elapsed());
        }
    }
    times.sort_unstable();
    println!(
        "(a) verify_key, cached: p50 {:.2} µs, p99 {:.2} µs (goal p50 <= 50 µs)",
        us(pct(&times, 50)),
        us(pct(&times, 99))
    );

    // (b) through the router, trust vs api-key, interleaved so both see the same machine.
    let mut env = stack.gateway_env();
    env.extend(aws);
    let trust = family_router(&env, &Family::ALL)?;
    env.insert(
        "FLUSS_GATEWAY__SECURITY__AUTHENTICATION".into(),
        "api-key".into(),
    );
    env.insert("FLUSS_GATEWAY__SECURITY__SECRET_ID".into(), secret_id);
    let keyed = family_router(&env, &Family::ALL)?;
    let (mut open, mut checked) = (Vec::new(), Vec::new());
    for i in 0..requests + requests / 10 {
        for (router, key, into) in [
            (&trust, None, &mut open),
            (&keyed, Some(&last), &mut checked),
        ] {
            let mut req = Request::get("/v1/clusters");
            if let Some(k) = key {
                req = req.header("x-api-key", k.as_str());
            }
            let req = req.body(Body::empty()).map_err(|e| e.to_string())?;
            let elapsed = timed_200(router, req).await?;
            if i >= requests / 10 {
                into.push(elapsed);
            }
        }
    }
    open.sort_unstable();
    checked.sort_unstable();
    let (o, c) = (pct(&open, 50), pct(&checked, 50));
    println!(
        "(b) GET /v1/clusters p50: trust {:.2} µs, api-key {:.2} µs, added {:.2} µs (goal <= 50 µs); p99 trust {:.2} µs, api-key {:.2} µs",
        us(o),
        us(c),
        us(c) - us(o),
        us(pct(&open, 99)),
        us(pct(&checked, 99))
    );
    Ok(())
}
