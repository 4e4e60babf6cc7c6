//! Records/s of `fluss-ingest`'s handler for SQS batches vs direct fluss-rs upserts of the same
//! rows, same run, same table, same pooled connection, on the running local stack:
//!
//! - direct: RECORDS upserts through the cached `UpsertWriter`, every ack awaited;
//! - ingest: one SQS event of RECORDS messages, each an envelope
//!   `{"table":"…","upsert":{"id","name","score"}}`, read from its JSON text (as the runtime does) through `gateway_ingest::Ingest::handle` — event parsing, routing, one write batch,
//!   the partial batch response — which must report no failure.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example ingest-bench [-- RECORDS BATCHES]
//! ```
//!
//! Defaults: 1000 records per event, 30 events (after 10% warm-up). Goal: ingest ≥ 0.8× direct.

use std::process::ExitCode;
use std::time::Duration;

use fluss::metadata::TablePath;
use fluss_pool::DeadlinePolicy;
use gateway_ingest::event::Event;
use gateway_ingest::{Ingest, IngestSettings};
use integration_tests::bench::{arg, exit_code, ms, p50_row, pct, time_each};
use integration_tests::bench_table::{bench_table, direct_upserts, drop_users_table};
use serde_json::{Value, json};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("ingest-bench", run().await)
}

async fn run() -> Result<(), String> {
    let (records, batches) = (arg(1, 1000)?, arg(2, 30)?);
    let (_, pool, path, handle) = bench_table("ingest_bench", "users").await?;
    let settings = IngestSettings::from_map(&Default::default()).map_err(|e| e.to_string())?;
    let ingest = Ingest::new(pool.clone(), DeadlinePolicy::default(), settings);
    println!("ingest-bench: table {path}, {records}-record SQS events x {batches}");

    let warm = (batches / 10).max(1);
    let direct = time_each(warm, batches, |i| {
        direct_upserts(&handle, i * records..(i + 1) * records, key)
    })
    .await?;
    let events: Vec<String> = (0..batches + warm)
        .map(|i| sqs_event(&path, i * records, records))
        .collect();
    let via = time_each(warm, batches, |i| {
        let (ingest, event) = (&ingest, &events[i]);
        async move {
            let event: Event = serde_json::from_str(event).map_err(|e| e.to_string())?;
            let answer = ingest.handle(event, None, "bench").await?;
            match answer["batchItemFailures"].as_array() {
                Some(f) if f.is_empty() => Ok(()),
                _ => Err(format!("records reported: {answer}")),
            }
        }
    })
    .await?;

    // The handler's own work per event without Fluss: the event text parsed, its records read,
    // every envelope routed.
    let cpu = time_each(warm, batches, |i| {
        let event = &events[i];
        async move {
            let event: Event = serde_json::from_str(event).map_err(|e| e.to_string())?;
            let batch = gateway_ingest::event::read(event)?;
            for (n, r) in batch.records.iter().enumerate() {
                if let Ok(gateway_ingest::event::Payload::Body(body)) = &r.payload {
                    gateway_ingest::envelope::route(body, n, "default")?;
                }
            }
            Ok(())
        }
    })
    .await?;

    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (records * times.len()) as f64 / total.as_secs_f64()
    };
    let (d, v) = (rate(&direct), rate(&via));
    println!("| measure | direct fluss-rs | fluss-ingest handler | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| {records}-record SQS batch, records/s | {d:.0} | {v:.0} | {:.2} (goal ≥ 0.8) |",
        v / d
    );
    p50_row(&format!("{records}-record batch"), &direct, &via);
    println!(
        "| handler CPU per {records}-record event without Fluss (event JSON, records, envelopes) | | {:.2} ms | |",
        ms(pct(&cpu, 50))
    );
    drop_users_table(&pool, &path).await
}

fn key(k: usize) -> i32 {
    i32::try_from(k % 1_000_000).unwrap_or(0)
}

/// The JSON text of an SQS event of `count` envelope messages, keys from `first`.
fn sqs_event(path: &TablePath, first: usize, count: usize) -> String {
    let table = format!("{}.{}", path.database(), path.table());
    let records: Vec<Value> = (first..first + count)
        .map(|k| {
            let body = json!({"table": table, "upsert": {"id": key(k), "name": format!("name-{k}"), "score": (k as i64 * 7).to_string()}});
            json!({"messageId": format!("m{k}"), "receiptHandle": "h", "body": body.to_string(),
                "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1796227200000"},
                "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:bench", "awsRegion": "eu-west-1"})
        })
        .collect();
    json!({ "Records": records }).to_string()
}
