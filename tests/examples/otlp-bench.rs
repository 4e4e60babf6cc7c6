//! The OTLP/HTTP receiver's log path, measured two ways (issue #37's acceptance):
//!
//! - (a) one core, no I/O: BODIES protobuf `ExportLogsServiceRequest`s of RECORDS log records
//!   each (10 attributes of string, int, double and bool values, a body, trace and span ids,
//!   one resource with `service.name` and five more attributes) turned into Fluss rows as the
//!   route does: `ExportBody::decode` (protobuf), `ExportBody::rows` (the Fluss rows, built in
//!   the table's column order), then `RowCodec::append_rows` against the logs table's schema
//!   (what `fluss_ops::otlp::export` runs before it submits), each body's rows dropped before
//!   the next, all inside the clock; median of RUNS runs after one warm-up. The same rows as
//!   write bodies of the write route (the codec's JSON encoding of the rows), for comparison:
//!   NDJSON bare rows and NDJSON entries (`NdjsonBody`, then `decode_request`, the route's
//!   NDJSON path) and the JSON entries form (the streaming decoder, the route's
//!   `application/json` path); every path must give the same rows;
//! - (b) end to end on the running local stack (`FLUSS_STACK_ENV`), the production router
//!   in-process: the OTLP tables created through `POST …/otlp/tables`, a plain log table of the
//!   same schema (`create_table_request(OtlpTable::Logs, …)`) through `POST …/tables`, then PAIRS
//!   pairs of an OTLP protobuf export of RECORDS records and an NDJSON write of the same rows (the
//!   rows `ExportBody::rows` makes, encoded as bare JSON rows, the shippers' form) alternating in one run
//!   (`time_pairs`), bodies built before the clock; rows/s of each and their ratio, and the
//!   calling thread's CPU per request. The tables are dropped at the end.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example otlp-bench [-- RECORDS [BODIES [RUNS [PAIRS]]]]
//! ```
//!
//! Defaults: 1000 records per request, 50 bodies, 5 runs, 100 pairs (10% more as warm-up).
//! `OTLP_BENCH_PHASE=decode` runs (a) alone (no stack needed), `OTLP_BENCH_PHASE=protobuf` only
//! its OTLP passes (what a profiler of the receiver wants). The
//! allocator is the functions' (mimalloc, set by `gateway-runtime`, which the router links).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use fluss::row::GenericRow;
use gateway_core::codec::RowCodec;
use gateway_core::otlp::{
    Encoding, ExportBody, Limits, OtlpTable, PARTITION_COLUMN, Signal, create_table_request,
    partition_day,
};
use gateway_core::types::table_descriptor;
use gateway_core::wire::{NdjsonBody, Row, WriteEntry, WriteOp, WriteRequest};
use integration_tests::bench::{Rng, arg, exit_code, figure, median_of, rate, time_pairs};
use integration_tests::bench_router::call_read;
use integration_tests::{Stack, unique_name};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use serde_json::{Value, json};

/// Issue #37: protobuf log records (10 attributes) into Fluss rows on one core.
const DECODE_GOAL: f64 = 500_000.0;
/// Issue #37: logs end to end through the route against the NDJSON write path, same rows.
const RATIO_GOAL: f64 = 0.9;
/// The route's limits (`gateway.rest.write.max-rows`, `gateway.rest.otlp.max-attributes`).
const LIMITS: Limits = Limits {
    max_records: 10_000,
    max_attributes: 1024,
};
/// The database the end-to-end tables live in.
const DATABASE: &str = "otlp_bench";
/// Distinct request bodies the end-to-end pairs cycle through (log tables take repeats).
const E2E_BODIES: usize = 16;

fn main() -> ExitCode {
    exit_code("otlp-bench", run())
}

fn run() -> Result<(), String> {
    let (records, n_bodies, runs, pairs) = (arg(1, 1000)?, arg(2, 50)?, arg(3, 5)?, arg(4, 100)?);
    if records == 0 || n_bodies == 0 || runs == 0 || pairs == 0 {
        return Err("RECORDS, BODIES, RUNS and PAIRS must be positive".into());
    }
    if records > LIMITS.max_records {
        return Err(format!(
            "RECORDS is at most {} (the route's row limit)",
            LIMITS.max_records
        ));
    }
    let day = partition_day(SystemTime::now());
    let mut rng = Rng(0x07E1_F1A5);
    let requests: Vec<ExportBody> = (0..n_bodies.max(E2E_BODIES))
        .map(|b| logs_request(&mut rng, b, records))
        .collect();
    decode(&requests[..n_bodies], records, runs, &day)?;
    if matches!(
        std::env::var("OTLP_BENCH_PHASE").as_deref(),
        Ok("decode" | "protobuf")
    ) {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    runtime.block_on(end_to_end(&requests[..E2E_BODIES], records, pairs, &day))
}

// ---------------------------------------------------------------------------------------------
// (a) one core
// ---------------------------------------------------------------------------------------------

/// The times of one pass over every body: the OTLP path's three steps.
#[derive(Default, Clone, Copy)]
struct Split {
    protobuf: Duration,
    rows: Duration,
    codec: Duration,
}

impl Split {
    fn total(&self) -> Duration {
        self.protobuf + self.rows + self.codec
    }
}

fn decode(requests: &[ExportBody], records: usize, runs: usize, day: &str) -> Result<(), String> {
    let codec = logs_codec()?;
    let bodies: Vec<Vec<u8>> = requests
        .iter()
        .map(|r| r.encode(Encoding::Protobuf))
        .collect();
    // The same rows as the write route's bodies.
    let row_sets: Vec<Vec<Row>> = requests
        .iter()
        .map(|r| logs_rows(&codec, r, day))
        .collect::<Result<_, _>>()?;
    let ndjson_bare: Vec<Vec<u8>> = row_sets.iter().map(|rows| ndjson(rows, false)).collect();
    let ndjson_entries: Vec<Vec<u8>> = row_sets.iter().map(|rows| ndjson(rows, true)).collect();
    let json_entries: Vec<Vec<u8>> = row_sets.iter().map(|rows| json_body(rows)).collect();
    drop(row_sets);
    let total = records * bodies.len();
    let per_record = |bodies: &[Vec<u8>]| bodies[0].len() as f64 / records as f64;
    println!(
        "otlp-bench decode: {} bodies x {records} log records (10 attributes each), median of {runs} runs (1 warm-up), one thread; bytes per record: protobuf {:.0}, NDJSON bare rows {:.0}, NDJSON entries {:.0}, JSON entries {:.0}",
        bodies.len(),
        per_record(&bodies),
        per_record(&ndjson_bare),
        per_record(&ndjson_entries),
        per_record(&json_entries),
    );

    // Every path gives the same rows, or the comparison means nothing.
    let export = ExportBody::decode(Signal::Logs, Encoding::Protobuf, &bodies[0])
        .map_err(|e| format!("protobuf: {e}"))?;
    let reference = otlp_rows(&codec, &export, day)?;
    if ndjson_rows(&codec, &ndjson_bare[0])? != reference
        || ndjson_rows(&codec, &ndjson_entries[0])? != reference
        || json_rows(&codec, &json_entries[0], records)? != reference
    {
        return Err("the OTLP path and the write route's paths gave different rows".into());
    }
    drop(reference);
    drop(export);

    let mut splits = Vec::with_capacity(runs);
    otlp_pass(&codec, &bodies, day)?;
    for _ in 0..runs {
        splits.push(otlp_pass(&codec, &bodies, day)?);
    }
    // A profiler of the OTLP path wants it alone: `OTLP_BENCH_PHASE=protobuf` stops here.
    if std::env::var("OTLP_BENCH_PHASE").as_deref() == Ok("protobuf") {
        let mut totals: Vec<Duration> = splits.iter().map(Split::total).collect();
        totals.sort_unstable();
        report("OTLP protobuf → rows", total, totals[totals.len() / 2]);
        return Ok(());
    }
    let median = |pick: fn(&Split) -> Duration| {
        let mut times: Vec<Duration> = splits.iter().map(pick).collect();
        times.sort_unstable();
        times[times.len() / 2]
    };
    let otlp_time = median(Split::total);
    let (proto_time, rows_time, codec_time) = (
        median(|s| s.protobuf),
        median(|s| s.rows),
        median(|s| s.codec),
    );
    let ndjson_each = |b: &[u8]| {
        drop(black_box(ndjson_rows(&codec, b)?));
        Ok(())
    };
    let bare_time = median_of(runs, || time_bodies(&ndjson_bare, ndjson_each))?;
    let entries_time = median_of(runs, || time_bodies(&ndjson_entries, ndjson_each))?;
    let json_time = median_of(runs, || {
        time_bodies(&json_entries, |b| {
            drop(black_box(json_rows(&codec, b, records)?));
            Ok(())
        })
    })?;

    report("OTLP protobuf → rows", total, otlp_time);
    report("  protobuf decode", total, proto_time);
    report("  OTLP → Fluss rows", total, rows_time);
    report("  codec (append_rows)", total, codec_time);
    report("NDJSON bare rows → rows", total, bare_time);
    report("NDJSON entries → rows", total, entries_time);
    report("JSON entries (streaming)", total, json_time);
    let otlp_rate = rate(total, otlp_time);
    let bare_rate = rate(total, bare_time);
    println!(
        "OTLP / NDJSON bare rows: {:.2}x; target: OTLP protobuf → rows >= {DECODE_GOAL:.0} records/s on one core: {}",
        otlp_rate / bare_rate,
        if otlp_rate >= DECODE_GOAL {
            "met"
        } else {
            "NOT met"
        }
    );
    let ns_per_record = |d: Duration| d.as_secs_f64() * 1e9 / total as f64;
    figure("otlp", "decode_protobuf_to_rows", otlp_rate, "records/s");
    figure(
        "otlp",
        "decode_ns_protobuf",
        ns_per_record(proto_time),
        "ns",
    );
    figure(
        "otlp",
        "decode_ns_otlp_rows",
        ns_per_record(rows_time),
        "ns",
    );
    figure("otlp", "decode_ns_codec", ns_per_record(codec_time), "ns");
    figure("otlp", "decode_ndjson_bare_rows", bare_rate, "rows/s");
    figure(
        "otlp",
        "decode_ndjson_entries",
        rate(total, entries_time),
        "rows/s",
    );
    figure(
        "otlp",
        "decode_json_streaming",
        rate(total, json_time),
        "rows/s",
    );
    figure("otlp", "decode_vs_ndjson", otlp_rate / bare_rate, "x");
    Ok(())
}

/// One pass of the OTLP path over every body, each step timed apart.
fn otlp_pass(codec: &RowCodec, bodies: &[Vec<u8>], day: &str) -> Result<Split, String> {
    let row_type = OtlpTable::Logs.row_type().map_err(|e| e.to_string())?;
    let mut split = Split::default();
    for body in bodies {
        let t0 = Instant::now();
        let export = ExportBody::decode(Signal::Logs, Encoding::Protobuf, black_box(body))
            .map_err(|e| format!("protobuf: {e}"))?;
        let t1 = Instant::now();
        let rows = black_box(&export)
            .rows(&LIMITS, day)
            .map_err(|e| format!("rows: {e}"))?;
        let t2 = Instant::now();
        for (_, rows) in rows.tables {
            let batch = codec
                .append_rows(row_type, rows)
                .map_err(|e| format!("codec: {e}"))?;
            drop(black_box(batch));
        }
        // The rows borrow from the message: it goes once they are submitted.
        drop(export);
        let t3 = Instant::now();
        split.protobuf += t1 - t0;
        split.rows += t2 - t1;
        split.codec += t3 - t2;
    }
    Ok(split)
}

/// The OTLP path on one decoded export, its rows kept (to compare the paths).
fn otlp_rows<'a>(
    codec: &RowCodec,
    export: &'a ExportBody,
    day: &'a str,
) -> Result<Vec<GenericRow<'a>>, String> {
    let row_type = OtlpTable::Logs.row_type().map_err(|e| e.to_string())?;
    let rows = export
        .rows(&LIMITS, day)
        .map_err(|e| format!("otlp: {e}"))?;
    let mut out = Vec::new();
    for (_, rows) in rows.tables {
        let batch = codec
            .append_rows(row_type, rows)
            .map_err(|e| format!("codec: {e}"))?;
        out.extend(batch.entries.into_iter().map(|e| e.row));
    }
    Ok(out)
}

/// The write route's NDJSON path: the lines parsed and checked, bare rows appended (a log
/// table), every row decoded.
fn ndjson_rows(codec: &RowCodec, body: &[u8]) -> Result<Vec<GenericRow<'static>>, String> {
    let request = NdjsonBody::parse(black_box(body))
        .map_err(|e| format!("ndjson: {e}"))?
        .resolve(false);
    let batch = codec
        .decode_request(&request)
        .map_err(|e| format!("codec: {e}"))?;
    Ok(batch.entries.into_iter().map(|e| e.row).collect())
}

/// The write route's JSON path, which must take the body on its streaming decoder (a fallback
/// to the reference path would hide in the figure, so it is an error here).
fn json_rows<'b>(
    codec: &RowCodec,
    body: &'b [u8],
    records: usize,
) -> Result<Vec<GenericRow<'b>>, String> {
    let entries = codec
        .decode_write_streaming(black_box(body), records)
        .ok_or("the streaming decoder did not take the JSON body")?;
    Ok(entries.into_iter().map(|e| e.row).collect())
}

fn time_bodies(
    bodies: &[Vec<u8>],
    mut each: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<Duration, String> {
    let start = Instant::now();
    for body in bodies {
        each(body)?;
    }
    Ok(start.elapsed())
}

fn report(phase: &str, rows: usize, elapsed: Duration) {
    println!(
        "{phase:<28} {:>12.0} records/s  ({:>8.2} ms, {:>7.0} ns/record)",
        rate(rows, elapsed),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e9 / rows as f64
    );
}

/// The codec of the logs table as the receiver creates it (a log table partitioned by `dt`).
fn logs_codec() -> Result<RowCodec, String> {
    let req = create_table_request(OtlpTable::Logs, "otel_logs", None);
    let descriptor = table_descriptor(&req).map_err(|e| format!("descriptor: {e}"))?;
    RowCodec::from_parts(
        1,
        1,
        descriptor.schema().row_type().clone(),
        &[],
        &[PARTITION_COLUMN.to_owned()],
    )
    .map_err(|e| format!("codec: {e}"))
}

/// The rows of the logs table the receiver makes of `request`, as JSON (the codec's encoding,
/// which its decoder reads back into the same rows).
fn logs_rows(codec: &RowCodec, request: &ExportBody, day: &str) -> Result<Vec<Row>, String> {
    let mut rows = request
        .rows(&LIMITS, day)
        .map_err(|e| format!("rows: {e}"))?;
    match rows.tables.pop() {
        Some((OtlpTable::Logs, rows)) => rows
            .iter()
            .map(|r| codec.encode(r).map_err(|e| format!("encode: {e}")))
            .collect(),
        _ => Err("a logs export made rows of another table".into()),
    }
}

/// `rows` as an NDJSON write body: bare rows, or entries `{"id":…,"append":{…}}`.
fn ndjson(rows: &[Row], entries: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let line = if entries {
            json!({"id": i.to_string(), "append": row})
        } else {
            Value::Object(row.clone())
        };
        // Serialising plain data into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, &line);
        out.push(b'\n');
    }
    out
}

/// `rows` as the JSON write body, entries `{"id":…,"append":{…}}`.
fn json_body(rows: &[Row]) -> Vec<u8> {
    let request = WriteRequest {
        partial_update_columns: None,
        number_texts: None,
        entries: rows
            .iter()
            .enumerate()
            .map(|(i, row)| WriteEntry {
                id: i.to_string(),
                op: WriteOp::Append,
                row: row.clone(),
            })
            .collect(),
    };
    serde_json::to_vec(&request).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// (b) end to end
// ---------------------------------------------------------------------------------------------

async fn end_to_end(
    requests: &[ExportBody],
    records: usize,
    pairs: usize,
    day: &str,
) -> Result<(), String> {
    let stack = Stack::load();
    let env = stack.gateway_env();
    let router = gateway_http::gateway_router(&env)?;
    let prefix = unique_name("b");
    let ndjson_table = format!("{prefix}_ndjson_logs");
    let base = format!("/v1/clusters/default/databases/{DATABASE}");

    let (status, answer) = post(
        &router,
        "/v1/clusters/default/databases",
        "application/json",
        json!({ "database": DATABASE }).to_string().into(),
    )
    .await?;
    if !status.is_success() && status != StatusCode::CONFLICT {
        return Err(format!("create database: {status} {}", text(&answer)));
    }
    let created = Instant::now();
    // A 503 (Fluss has not made a new table's day partition yet, seen on a loaded machine) is
    // retried as its Retry-After says, as a client would; the route is idempotent.
    let (status, answer) = loop {
        let (status, answer) = post(
            &router,
            &format!("{base}/otlp/tables"),
            "application/json",
            json!({ "prefix": prefix, "buckets": 1 }).to_string().into(),
        )
        .await?;
        if status != StatusCode::SERVICE_UNAVAILABLE || created.elapsed() > Duration::from_secs(90)
        {
            break (status, answer);
        }
        eprintln!(
            "otlp-bench: create OTLP tables: 503, retrying: {}",
            text(&answer)
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    if !status.is_success() {
        return Err(format!("create OTLP tables: {status} {}", text(&answer)));
    }
    let request = create_table_request(OtlpTable::Logs, &ndjson_table, Some(1));
    let (status, answer) = post(
        &router,
        &format!("{base}/tables"),
        "application/json",
        serde_json::to_vec(&request)
            .map_err(|e| e.to_string())?
            .into(),
    )
    .await?;
    if !status.is_success() {
        return Err(format!("create {ndjson_table}: {status} {}", text(&answer)));
    }
    println!(
        "otlp-bench end to end: database {DATABASE}, tables {prefix}_logs (POST …/otlp/tables) and {ndjson_table} (POST …/tables), 1 bucket each, created in {:.1} s",
        created.elapsed().as_secs_f64()
    );

    let outcome = pairs_run(
        &router,
        &base,
        &prefix,
        &ndjson_table,
        requests,
        records,
        pairs,
        day,
    )
    .await;
    let dropped = drop_tables(&router, &base, &prefix, &ndjson_table).await;
    outcome?;
    dropped
}

#[allow(clippy::too_many_arguments)]
async fn pairs_run(
    router: &axum::Router,
    base: &str,
    prefix: &str,
    ndjson_table: &str,
    requests: &[ExportBody],
    records: usize,
    pairs: usize,
    day: &str,
) -> Result<(), String> {
    let otlp_url = format!("{base}/otlp/{prefix}/v1/logs");
    let ndjson_url = format!("{base}/tables/{ndjson_table}/records");
    let otlp_bodies: Vec<Bytes> = requests
        .iter()
        .map(|r| r.encode(Encoding::Protobuf).into())
        .collect();
    let codec = logs_codec()?;
    let ndjson_bodies: Vec<Bytes> = requests
        .iter()
        .map(|r| logs_rows(&codec, r, day).map(|rows| ndjson(&rows, false).into()))
        .collect::<Result<_, String>>()?;

    // Fluss creates the plain table's day partition shortly after the table (the OTLP route
    // waited for its own): the first write waits for it.
    await_partition(router, base, ndjson_table, day).await?;
    let first = Instant::now();
    loop {
        match send_ndjson(router, &ndjson_url, ndjson_bodies[0].clone(), records).await {
            Ok(()) => break,
            Err(e) if first.elapsed() > Duration::from_secs(60) => {
                return Err(format!("first NDJSON write: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }

    let n = otlp_bodies.len();
    let timed = time_pairs(
        (pairs / 10).max(1),
        pairs,
        |i| send_otlp(router, &otlp_url, otlp_bodies[i % n].clone()),
        |i| send_ndjson(router, &ndjson_url, ndjson_bodies[i % n].clone(), records),
    )
    .await?;
    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (records * times.len()) as f64 / total.as_secs_f64()
    };
    let (o_rate, n_rate) = (rate(&timed.a), rate(&timed.b));
    let cpu = |d: Duration| d.as_secs_f64() * 1e6 / pairs as f64;
    let (o_cpu, n_cpu) = (cpu(timed.a_cpu), cpu(timed.b_cpu));
    let per = |b: &Bytes| b.len() as f64 / records as f64;
    println!(
        "{pairs} pairs of {records}-record requests, alternating, {} warm-up pairs",
        (pairs / 10).max(1)
    );
    println!("| path | rows/s | CPU per request | bytes per record |");
    println!("|---|---|---|---|");
    println!(
        "| OTLP protobuf export (…/otlp/{prefix}/v1/logs) | {o_rate:.0} | {o_cpu:.0} µs | {:.0} |",
        per(&otlp_bodies[0])
    );
    println!(
        "| NDJSON bare rows (…/tables/{ndjson_table}/records) | {n_rate:.0} | {n_cpu:.0} µs | {:.0} |",
        per(&ndjson_bodies[0])
    );
    println!(
        "OTLP / NDJSON: {:.3}x; target >= {RATIO_GOAL}x: {}",
        o_rate / n_rate,
        if o_rate / n_rate >= RATIO_GOAL {
            "met"
        } else {
            "NOT met"
        }
    );
    figure("otlp", "e2e_otlp", o_rate, "rows/s");
    figure("otlp", "e2e_ndjson", n_rate, "rows/s");
    figure("otlp", "e2e_ratio", o_rate / n_rate, "x");
    figure("otlp", "e2e_cpu_otlp", o_cpu, "us");
    figure("otlp", "e2e_cpu_ndjson", n_cpu, "us");
    Ok(())
}

/// Waits (at most 30 s) until `table` lists partition `day`.
async fn await_partition(
    router: &axum::Router,
    base: &str,
    table: &str,
    day: &str,
) -> Result<(), String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let req = Request::get(format!("{base}/tables/{table}/partitions"))
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        let (status, bytes) = call_read(router, req).await?;
        let listed: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let found = listed["partitions"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["name"] == day));
        if status.is_success() && found {
            return Ok(());
        }
        if Instant::now() > until {
            return Err(format!(
                "partition {day} of {table} did not appear: {status} {}",
                text(&bytes)
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One OTLP export through the router, checked: 200 and no record rejected.
async fn send_otlp(router: &axum::Router, url: &str, body: Bytes) -> Result<(), String> {
    let (status, bytes) = post(router, url, "application/x-protobuf", body).await?;
    if status != StatusCode::OK {
        return Err(format!("OTLP export: {status}"));
    }
    let answer = ExportLogsServiceResponse::decode(bytes).map_err(|e| e.to_string())?;
    match answer.partial_success {
        Some(p) if p.rejected_log_records != 0 => Err(format!(
            "OTLP export: {} records rejected: {}",
            p.rejected_log_records, p.error_message
        )),
        _ => Ok(()),
    }
}

/// One NDJSON write through the router, checked: 200 and every row acknowledged (the answer's
/// head, not its thousand success ids).
async fn send_ndjson(
    router: &axum::Router,
    url: &str,
    body: Bytes,
    records: usize,
) -> Result<(), String> {
    let (status, bytes) = post(router, url, "application/x-ndjson", body).await?;
    let head = format!("{{\"row_count\":{records},\"success_count\":{records},\"error_count\":0,");
    if status != StatusCode::OK || !bytes.starts_with(head.as_bytes()) {
        return Err(format!(
            "NDJSON write: {status} {}",
            text(&bytes[..bytes.len().min(600)])
        ));
    }
    Ok(())
}

async fn post(
    router: &axum::Router,
    url: &str,
    content_type: &str,
    body: Bytes,
) -> Result<(StatusCode, Bytes), String> {
    let req = Request::post(url)
        .header("content-type", content_type)
        .body(Body::from(body))
        .map_err(|e| e.to_string())?;
    call_read(router, req).await
}

/// Drops the tables of the run (hygiene: the next benchmark runs on the same two cores).
async fn drop_tables(
    router: &axum::Router,
    base: &str,
    prefix: &str,
    ndjson_table: &str,
) -> Result<(), String> {
    let names = OtlpTable::ALL
        .iter()
        .map(|t| t.name(prefix))
        .chain([ndjson_table.to_owned()]);
    for name in names {
        let req = Request::delete(format!("{base}/tables/{name}"))
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        let (status, bytes) = call_read(router, req).await?;
        if !status.is_success() && status != StatusCode::NOT_FOUND {
            return Err(format!("drop {name}: {status} {}", text(&bytes)));
        }
    }
    Ok(())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// ---------------------------------------------------------------------------------------------
// The export requests
// ---------------------------------------------------------------------------------------------

fn kv(key: &str, value: Any) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

/// One export as an SDK's batch processor sends it: one resource, one scope, `records` log
/// records of an HTTP service, each with 10 attributes (5 strings, 2 ints, a double, 2 bools),
/// a body of 40 – 160 characters, trace and span ids.
fn logs_request(rng: &mut Rng, batch: usize, records: usize) -> ExportBody {
    const METHODS: [&str; 4] = ["GET", "POST", "PUT", "DELETE"];
    const ROUTES: [&str; 5] = [
        "/api/v1/orders/{id}",
        "/api/v1/cart",
        "/api/v1/users/{id}/profile",
        "/api/v1/checkout",
        "/health",
    ];
    const FUNCTIONS: [&str; 4] = [
        "checkout::cart::add_item",
        "checkout::orders::load",
        "checkout::payment::authorize",
        "checkout::http::handle",
    ];
    const SEVERITIES: [(i32, &str); 4] = [(9, "INFO"), (9, "INFO"), (13, "WARN"), (17, "ERROR")];
    let start: u64 = 1_796_000_000_000_000_000 + batch as u64 * 10_000_000_000;
    let log_records = (0..records)
        .map(|i| {
            let (severity_number, severity_text) = SEVERITIES[rng.below(4) as usize];
            let method = METHODS[rng.below(4) as usize];
            let route = ROUTES[rng.below(5) as usize];
            let id = rng.below(1_000_000);
            let path = route.replace("{id}", &id.to_string());
            let status = [200, 200, 201, 404, 500][rng.below(5) as usize];
            let duration = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 250.0;
            let time = start + i as u64 * 1_000_000 + rng.below(1_000_000);
            let mut trace_id = vec![0u8; 16];
            trace_id.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
            let mut span_id = vec![0u8; 8];
            span_id.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
            let body = format!(
                "{method} {path} answered {status} in {duration:.3} ms {}",
                rng.text(10, 110)
            );
            LogRecord {
                time_unix_nano: time,
                observed_time_unix_nano: time + 150_000 + rng.below(1_000_000),
                severity_number,
                severity_text: severity_text.into(),
                body: Some(AnyValue {
                    value: Some(Any::StringValue(body)),
                }),
                attributes: vec![
                    kv("http.request.method", Any::StringValue(method.into())),
                    kv("http.route", Any::StringValue(route.into())),
                    kv("url.path", Any::StringValue(path)),
                    kv("http.response.status_code", Any::IntValue(status)),
                    kv(
                        "user.id",
                        Any::StringValue(format!("u-{:08x}", rng.next_u64() as u32)),
                    ),
                    kv("server.duration_ms", Any::DoubleValue(duration)),
                    kv("cache.hit", Any::BoolValue(rng.one_in(3))),
                    kv("retry", Any::BoolValue(rng.one_in(20))),
                    kv("thread.id", Any::IntValue(1 + rng.below(64) as i64)),
                    kv(
                        "code.function",
                        Any::StringValue(FUNCTIONS[rng.below(4) as usize].into()),
                    ),
                ],
                trace_id,
                span_id,
                flags: 1,
                ..LogRecord::default()
            }
        })
        .collect();
    ExportBody::Logs(ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", Any::StringValue("checkout".into())),
                    kv("service.version", Any::StringValue("1.4.2".into())),
                    kv("host.name", Any::StringValue("ip-10-0-3-17".into())),
                    kv(
                        "deployment.environment.name",
                        Any::StringValue("production".into()),
                    ),
                    kv("process.pid", Any::IntValue(4242)),
                    kv("telemetry.sdk.language", Any::StringValue("rust".into())),
                ],
                ..Resource::default()
            }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: "checkout.http".into(),
                    version: "1.4.2".into(),
                    ..InstrumentationScope::default()
                }),
                log_records,
                ..ScopeLogs::default()
            }],
            schema_url: "https://opentelemetry.io/schemas/1.26.0".into(),
        }],
    })
}
