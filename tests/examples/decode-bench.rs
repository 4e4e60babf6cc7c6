//! Single-core throughput of the write-path codec, both ways the write route has had:
//! - *streaming* (what the route does): the body's bytes decoded straight into Fluss rows against
//!   the schema, `RowCodec::decode_write_body`;
//! - *reference* (the path every rejected body takes, and the route's path before the streaming
//!   decoder): parse the body into `serde_json` values (`WriteRequest::from_json_slice`), then
//!   decode every row (`RowCodec::decode_request`);
//! - *skip*: the same bodies merely walked by serde_json into `IgnoredAny`, no value kept: the
//!   floor of any serde-based parse, beside which the streaming decoder's rate is a ratio that
//!   holds from machine to machine (goal ≥ 0.5×);
//! - and, as an extra, encode rows back to JSON (`RowCodec::encode`, the lookup path).
//!
//! A benchmark, not a test: it checks only that both paths give the same rows, and prints rows/s,
//! the median of several timed runs after one warm-up. Rows are deterministic pseudo-random values of
//! a 10-column mixed-type primary-key table, so runs on different machines compare like for like.
//!
//! The unit of work is the route's: BODIES bodies of ROWS entries each, handled one at a time, each
//! body's rows dropped before the next body (as the route drops them once written), all inside the
//! clock. A last line times one body of BODIES × ROWS entries decoded whole, the benchmark's unit
//! before 2026-12-05: beyond the route's 10,000-row limit (`gateway.rest.write.max-rows`), it is
//! mostly the allocator taking fresh pages for 190 MB of rows that are never reused.
//!
//! ```text
//! cargo run --release -p integration-tests --example decode-bench [-- ROWS [BODIES [RUNS]]]
//! ```
//!
//! ROWS defaults to 1000, BODIES to 100 and RUNS to 5; fewer suit profilers such as callgrind,
//! and `DECODE_BENCH_PHASE=streaming` times the streaming path alone.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fluss::metadata::{DataTypes, RowType};
use fluss::row::GenericRow;
use gateway_core::codec::RowCodec;
use gateway_core::types::parse_column_type;
use gateway_core::wire::WriteRequest;
use integration_tests::bench::{Rng, exit_code, figure, median_of, rate};
use serde_json::{Map, Value, json};

/// The allocator every gateway binary runs on (set in gateway-http), so that the figures are the
/// codec's as the functions run it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_ROWS: usize = 1000;
const DEFAULT_BODIES: usize = 100;
const DEFAULT_RUNS: usize = 5;
/// The [scale] goal for parsing + decoding a write body on one core: twice the 1.17 M rows/s
/// of the table of 9e57519.
const TARGET_ROWS_PER_SEC: f64 = 2_340_000.0;
/// The [scale] goal beside serde merely skipping the same bodies (machine-independent).
const SKIP_RATIO_GOAL: f64 = 0.5;

fn main() -> ExitCode {
    exit_code("decode-bench", run())
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let rows = count_arg(args.next(), DEFAULT_ROWS, "ROWS")?;
    let n_bodies = count_arg(args.next(), DEFAULT_BODIES, "BODIES")?;
    let runs = count_arg(args.next(), DEFAULT_RUNS, "RUNS")?;
    let total = rows * n_bodies;

    let codec = bench_codec()?;
    let mut rng = Rng(0x5EED_F1A5);
    let bodies = (0..n_bodies)
        .map(|_| request_body(&mut rng, rows))
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "decode-bench: {n_bodies} bodies x {rows} rows x 10 columns ({:.0} KiB each), median of {runs} runs (1 warm-up), one thread",
        bodies[0].len() as f64 / 1024.0
    );

    let streaming_phase = || {
        median_of(runs, || {
            let start = Instant::now();
            for body in &bodies {
                drop(black_box(streaming(&codec, body, rows)?));
            }
            Ok(start.elapsed())
        })
    };
    // A profiler wants one phase alone: `DECODE_BENCH_PHASE=streaming` runs only that one.
    if std::env::var("DECODE_BENCH_PHASE").as_deref() == Ok("streaming") {
        report("streaming: parse+decode", total, streaming_phase()?);
        return Ok(());
    }

    let parse_time = median_of(runs, || {
        let start = Instant::now();
        for body in &bodies {
            drop(black_box(parse(body)?));
        }
        Ok(start.elapsed())
    })?;

    let requests = bodies
        .iter()
        .map(|b| parse(b))
        .collect::<Result<Vec<_>, _>>()?;
    let decode_time = median_of(runs, || {
        let start = Instant::now();
        for request in &requests {
            drop(black_box(decode_all(&codec, request)?));
        }
        Ok(start.elapsed())
    })?;

    let both_time = median_of(runs, || {
        let start = Instant::now();
        for body in &bodies {
            let request = parse(body)?;
            drop(black_box(decode_all(&codec, &request)?));
        }
        Ok(start.elapsed())
    })?;

    let streaming_time = streaming_phase()?;
    let skip_time = median_of(runs, || {
        let start = Instant::now();
        for body in &bodies {
            let skipped: serde::de::IgnoredAny =
                serde_json::from_slice(body).map_err(|e| format!("skip: {e}"))?;
            black_box(skipped);
        }
        Ok(start.elapsed())
    })?;

    let mut decoded = Vec::with_capacity(n_bodies);
    for (body, request) in bodies.iter().zip(&requests) {
        let rows_of_body = decode_all(&codec, request)?;
        if streaming(&codec, body, rows)? != rows_of_body {
            return Err("the streaming path and the reference path gave different rows".into());
        }
        decoded.push(rows_of_body);
    }
    let encode_time = median_of(runs, || {
        let start = Instant::now();
        for batch in &decoded {
            let mut encoded = Vec::with_capacity(batch.len());
            for row in batch {
                encoded.push(codec.encode(row).map_err(|e| format!("encode: {e}"))?);
            }
            drop(black_box(encoded));
        }
        Ok(start.elapsed())
    })?;
    drop(decoded);

    // The benchmark's unit before 2026-12-05, for comparison: one body of every row, decoded
    // whole and dropped outside the clock.
    let whole = join_bodies(&bodies);
    let whole_time = median_of(runs.min(3), || {
        let start = Instant::now();
        let decoded = streaming(&codec, &whole, total)?;
        let elapsed = start.elapsed();
        drop(black_box(decoded));
        Ok(elapsed)
    })?;

    report("reference: parse", total, parse_time);
    report("reference: decode", total, decode_time);
    report("reference: parse+decode", total, both_time);
    report("streaming: parse+decode", total, streaming_time);
    report("skip (serde IgnoredAny)", total, skip_time);
    report("encode (row → JSON object)", total, encode_time);
    report("streaming, one whole body", total, whole_time);
    let streaming_rate = rate(total, streaming_time);
    figure(
        "decode",
        "reference_parse_decode",
        rate(total, both_time),
        "rows/s",
    );
    figure("decode", "streaming_parse_decode", streaming_rate, "rows/s");
    figure(
        "decode",
        "streaming_vs_reference",
        streaming_rate / rate(total, both_time),
        "x",
    );
    figure(
        "decode",
        "skip_ignored_any",
        rate(total, skip_time),
        "rows/s",
    );
    figure(
        "decode",
        "streaming_vs_skip",
        streaming_rate / rate(total, skip_time),
        "x",
    );
    figure("decode", "encode", rate(total, encode_time), "rows/s");
    figure(
        "decode",
        "streaming_one_whole_body",
        rate(total, whole_time),
        "rows/s",
    );
    println!(
        "streaming / reference parse+decode: {:.2}x",
        streaming_rate / rate(total, both_time)
    );
    let skip_ratio = streaming_rate / rate(total, skip_time);
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    println!(
        "goals ([scale]): streaming parse+decode >= {:.0} rows/s on one core: {}; >= {SKIP_RATIO_GOAL}x the IgnoredAny skip ({skip_ratio:.2}x): {}",
        TARGET_ROWS_PER_SEC,
        verdict(streaming_rate >= TARGET_ROWS_PER_SEC),
        verdict(skip_ratio >= SKIP_RATIO_GOAL),
    );
    Ok(())
}

fn count_arg(arg: Option<String>, default: usize, name: &str) -> Result<usize, String> {
    match arg {
        None => Ok(default),
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{name} must be a positive integer, got `{text}`")),
        },
    }
}

fn parse(body: &[u8]) -> Result<WriteRequest, String> {
    WriteRequest::from_json_slice(black_box(body)).map_err(|e| format!("parse: {e}"))
}

fn decode_all(
    codec: &RowCodec,
    request: &WriteRequest,
) -> Result<Vec<GenericRow<'static>>, String> {
    let batch = codec
        .decode_request(black_box(request))
        .map_err(|e| format!("decode: {e}"))?;
    Ok(batch.entries.into_iter().map(|e| e.row).collect())
}

/// The write route's decode: the streaming path, which must take this body whole (a fallback to
/// the reference path would hide in the figure, so it is an error here).
fn streaming<'body>(
    codec: &RowCodec,
    body: &'body [u8],
    rows: usize,
) -> Result<Vec<GenericRow<'body>>, String> {
    let entries = codec
        .decode_write_streaming(black_box(body), rows)
        .ok_or("the streaming path did not take the benchmark body")?;
    Ok(entries.into_iter().map(|e| e.row).collect())
}

/// One body holding the entries of every body (their ids made unique).
fn join_bodies(bodies: &[Vec<u8>]) -> Vec<u8> {
    let mut entries = Vec::new();
    for (b, body) in bodies.iter().enumerate() {
        let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        if let Some(list) = parsed["entries"].as_array() {
            for e in list {
                let mut e = e.clone();
                e["id"] = json!(format!("b{b}-{}", e["id"].as_str().unwrap_or("")));
                entries.push(e);
            }
        }
    }
    serde_json::to_vec(&json!({ "entries": entries })).unwrap_or_default()
}

fn report(phase: &str, rows: usize, elapsed: Duration) {
    println!(
        "{phase:<28} {:>12.0} rows/s  ({:>8.2} ms, {:>6.2} µs/row)",
        rate(rows, elapsed),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / rows as f64
    );
}

/// The benchmark table: one column of each type the brief names, keyed by `id`.
fn bench_codec() -> Result<RowCodec, String> {
    let columns = [
        ("id", json!("BIGINT"), false),
        ("qty", json!("INT"), true),
        ("name", json!("STRING"), true),
        (
            "price",
            json!({"type": "DECIMAL", "precision": 18, "scale": 4}),
            true,
        ),
        ("score", json!("DOUBLE"), true),
        ("active", json!("BOOLEAN"), true),
        ("day", json!("DATE"), true),
        (
            "updated",
            json!({"type": "TIMESTAMP_LTZ", "precision": 3}),
            true,
        ),
        ("payload", json!("BYTES"), true),
        (
            "tags",
            json!({"type": "ARRAY", "element_type": {"type": "STRING"}}),
            true,
        ),
    ];
    let fields = columns
        .iter()
        .map(|(name, ty, nullable)| {
            parse_column_type(name, ty, *nullable)
                .map(|dt| DataTypes::field(*name, dt))
                .map_err(|e| format!("schema: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    RowCodec::from_parts(1, 1, RowType::new(fields), &["id".to_owned()], &[])
        .map_err(|e| format!("codec: {e}"))
}

/// One JSON body of `rows` upserts, as a client would send it.
fn request_body(rng: &mut Rng, rows: usize) -> Result<Vec<u8>, String> {
    let entries: Vec<Value> = (0..rows)
        .map(|i| json!({ "id": format!("r{i}"), "upsert": Value::Object(row(rng, i)) }))
        .collect();
    serde_json::to_vec(&json!({ "entries": entries })).map_err(|e| format!("body: {e}"))
}

fn row(rng: &mut Rng, i: usize) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(i as i64 * 7919 + 1));
    let qty = rng.below(2_000_000) as i64 - 1_000_000;
    m.insert("qty".into(), nullable(rng, json!(qty)));
    let name = rng.text(5, 30);
    m.insert("name".into(), nullable(rng, json!(name)));
    let price = format!(
        "{}{}.{:04}",
        if rng.one_in(4) { "-" } else { "" },
        rng.below(100_000_000_000_000),
        rng.below(10_000)
    );
    m.insert("price".into(), nullable(rng, json!(price)));
    let score = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6;
    m.insert("score".into(), nullable(rng, json!(score)));
    let active = rng.one_in(2);
    m.insert("active".into(), nullable(rng, json!(active)));
    let day = format!(
        "{:04}-{:02}-{:02}",
        1970 + rng.below(70),
        1 + rng.below(12),
        1 + rng.below(28)
    );
    m.insert("day".into(), nullable(rng, json!(day)));
    let updated = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        2000 + rng.below(40),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
        rng.below(1000)
    );
    m.insert("updated".into(), nullable(rng, json!(updated)));
    let payload: Vec<u8> = (0..8 + rng.below(57))
        .map(|_| rng.next_u64() as u8)
        .collect();
    m.insert("payload".into(), nullable(rng, json!(base64(&payload))));
    let tags: Vec<Value> = (0..rng.below(6)).map(|_| json!(rng.text(2, 12))).collect();
    m.insert("tags".into(), nullable(rng, Value::Array(tags)));
    m
}

/// Nullable columns are null about 2% of the time, so the null path is exercised but rare.
fn nullable(rng: &mut Rng, v: Value) -> Value {
    if rng.one_in(50) { Value::Null } else { v }
}

/// Standard padded base64, the form the gateway accepts for BYTES.
fn base64(data: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(TABLE[(n >> shift) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
