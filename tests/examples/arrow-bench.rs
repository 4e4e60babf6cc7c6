//! Arrow write bodies (`application/vnd.apache.arrow.stream`), same run, same rows:
//!
//! - (a) decode on one core, no cluster: an Arrow IPC body of ROWS rows of the 10-column
//!   benchmark table (decode-bench's columns) read, checked and conformed to the table's Arrow
//!   batches (`ArrowBody::read` + `RowCodec::conform_arrow`, the log-table path), and, beside it,
//!   decoded into Fluss rows (`RowCodec::decode_arrow`, the primary-key path);
//! - (b) on the running local stack, a log table of those columns (no bucket key): rows/s of
//!   BATCHES bodies of ROWS rows through the write route as Arrow, against the direct fluss-rs
//!   `append_arrow_batch` of the same batch, and against the write route with the same rows as
//!   JSON; both route requests ask `Prefer: return=minimal` (counts and failures, no list of
//!   10,000 success ids), as a bulk writer does.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example arrow-bench [-- ROWS BATCHES RUNS]
//! ```
//!
//! Defaults: 10,000 rows per body (the route's max-rows), 30 bodies, 5 decode runs.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use axum::body::{Body, Bytes};
use axum::http::Request;
use fluss::metadata::{DataTypes, RowType, Schema, TablePath};
use fluss_pool::{Identity, Pool, PoolConfig, TableHandle};
use gateway_core::codec::RowCodec;
use gateway_core::codec::arrow::{ARROW_STREAM, ArrowBody, ArrowLimits};
use gateway_core::types::parse_column_type;
use integration_tests::bench::{
    Rng, arg, exit_code, figure, median_of, rate, time_each, time_pairs,
};
use integration_tests::bench_router::call_read;
use integration_tests::bench_table::{create_table, deadline, drop_users_table};
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};

// The functions' allocator comes with gateway-http (through gateway-runtime).

/// The goal of the [arrow] issue for decoding on one core.
const TARGET_ROWS_PER_SEC: f64 = 5_000_000.0;

fn columns() -> Vec<(&'static str, Value)> {
    vec![
        ("id", json!("BIGINT")),
        ("qty", json!("INT")),
        ("name", json!("STRING")),
        (
            "price",
            json!({"type": "DECIMAL", "precision": 18, "scale": 4}),
        ),
        ("score", json!("DOUBLE")),
        ("active", json!("BOOLEAN")),
        ("day", json!("DATE")),
        ("updated", json!({"type": "TIMESTAMP_LTZ", "precision": 3})),
        ("payload", json!("BYTES")),
        (
            "tags",
            json!({"type": "ARRAY", "element_type": {"type": "STRING"}}),
        ),
    ]
}

fn row_type() -> Result<RowType, String> {
    let fields = columns()
        .into_iter()
        .map(|(name, ty)| {
            parse_column_type(name, &ty, true)
                .map(|dt| DataTypes::field(name, dt))
                .map_err(|e| format!("schema: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RowType::new(fields))
}

/// `rows` rows from `first`, in the table's own Arrow types (as a client holding the table's
/// schema sends them).
fn batch(rng: &mut Rng, first: usize, rows: usize) -> Result<RecordBatch, String> {
    let ids = first as i64..(first + rows) as i64;
    let mut tags = ListBuilder::new(StringBuilder::new());
    for _ in 0..rows {
        for _ in 0..rng.below(3) {
            tags.values().append_value(rng.text(3, 8));
        }
        tags.append(true);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from_iter_values(ids))),
        (
            "qty",
            Arc::new(Int32Array::from_iter_values(
                (0..rows).map(|_| rng.below(1000) as i32),
            )),
        ),
        (
            "name",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|_| rng.text(5, 20)),
            )),
        ),
        (
            "price",
            Arc::new(
                Decimal128Array::from_iter_values((0..rows).map(|_| rng.below(10_000_000) as i128))
                    .with_precision_and_scale(18, 4)
                    .map_err(|e| e.to_string())?,
            ),
        ),
        (
            "score",
            Arc::new(Float64Array::from_iter_values(
                (0..rows).map(|_| rng.below(1_000_000) as f64 / 7.0),
            )),
        ),
        (
            "active",
            Arc::new(BooleanArray::from_iter(
                (0..rows).map(|_| Some(rng.one_in(2))),
            )),
        ),
        (
            "day",
            Arc::new(Date32Array::from_iter_values(
                (0..rows).map(|_| 19_000 + rng.below(2000) as i32),
            )),
        ),
        (
            "updated",
            Arc::new(
                TimestampMillisecondArray::from_iter_values(
                    (0..rows).map(|_| 1_700_000_000_000 + rng.below(1 << 30) as i64),
                )
                .with_timezone("UTC"),
            ),
        ),
        (
            "payload",
            Arc::new(BinaryArray::from_iter_values(
                (0..rows).map(|_| rng.text(4, 16).into_bytes()),
            )),
        ),
        ("tags", Arc::new(tags.finish())),
    ];
    RecordBatch::try_from_iter(columns).map_err(|e| e.to_string())
}

fn ipc(batch: &RecordBatch) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())
        .map_err(|e| e.to_string())?;
    writer.write(batch).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    drop(writer);
    Ok(out)
}

/// The same rows as a JSON write body (each row rendered by the codec's encoder).
fn json_body(codec: &RowCodec, body: &ArrowBody) -> Result<Vec<u8>, String> {
    let decoded = codec.decode_arrow(body).map_err(|e| e.to_string())?;
    let entries = decoded
        .entries
        .iter()
        .map(|e| {
            let row = gateway_core::codec::encode::encode_row(codec.row_type(), &e.row)
                .map_err(|e| e.to_string())?;
            Ok(json!({"id": e.id, "append": row}))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({ "entries": entries }).to_string().into_bytes())
}

async fn run() -> Result<(), String> {
    let (rows, batches, runs) = (arg(1, 10_000)?, arg(2, 30)?, arg(3, 5)?);
    let row_type = row_type()?;
    let codec =
        RowCodec::from_parts(1, 1, row_type.clone(), &[], &[]).map_err(|e| e.to_string())?;
    let mut rng = Rng(0x00a1_1e57);
    let limits = ArrowLimits {
        max_rows: rows,
        max_decoded_bytes: 64 << 20,
    };

    // (a) decode on one core.
    // As the route gets them: `Bytes` (a clone per request shares them, as hyper's body does).
    let bodies: Vec<Bytes> = (0..batches)
        .map(|b| {
            batch(&mut rng, b * rows, rows)
                .and_then(|b| ipc(&b))
                .map(Bytes::from)
        })
        .collect::<Result<_, _>>()?;
    let per_run = 10.min(batches);
    let conform = median_of(runs, || {
        let started = Instant::now();
        for body in &bodies[..per_run] {
            let read = ArrowBody::read(body.clone(), limits).map_err(|e| e.to_string())?;
            black_box(codec.conform_arrow(&read).map_err(|e| e.to_string())?);
        }
        Ok(started.elapsed())
    })?;
    let to_rows = median_of(runs, || {
        let started = Instant::now();
        for body in &bodies[..per_run] {
            let read = ArrowBody::read(body.clone(), limits).map_err(|e| e.to_string())?;
            black_box(codec.decode_arrow(&read).map_err(|e| e.to_string())?);
        }
        Ok(started.elapsed())
    })?;
    let (conform_rate, rows_rate) = (rate(rows * per_run, conform), rate(rows * per_run, to_rows));
    println!(
        "arrow-bench: {rows} rows/body, {} bytes/body ({:.1} bytes/row)",
        bodies[0].len(),
        bodies[0].len() as f64 / rows as f64
    );
    println!("| measure | rows/s | goal |");
    println!("|---|---|---|");
    println!(
        "| decode to batches (read + conform, log tables) | {conform_rate:.0} | ≥ {TARGET_ROWS_PER_SEC:.0}: {} |",
        if conform_rate >= TARGET_ROWS_PER_SEC {
            "met"
        } else {
            "NOT met"
        }
    );
    println!("| decode to rows (primary-key tables) | {rows_rate:.0} | |");
    figure("arrow", "decode_to_batches", conform_rate, "rows/s");
    figure("arrow", "decode_to_rows", rows_rate, "rows/s");

    // (b) through the route, against the direct client.
    let stack = Stack::load();
    let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).map_err(|e| e.to_string())?);
    let path = TablePath::new("arrow_bench".to_owned(), unique_name("log"));
    let mut schema = Schema::builder();
    for field in row_type.fields() {
        schema = schema.column(field.name(), field.data_type().clone());
    }
    let schema = schema.build().map_err(|e| e.to_string())?;
    create_table(&pool, &path, schema, 1, Vec::new()).await?;
    let (_, handle) = pool
        .table("default", &Identity::Service, &path, &deadline())
        .await
        .map_err(|e| e.to_string())?;
    let mut env = stack.gateway_env();
    env.insert(
        "FLUSS_GATEWAY__REST__WRITE__MAX_ROWS".into(),
        rows.to_string(),
    );
    let router = gateway_http::gateway_router(&env)?;
    let url = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    );
    let read_bodies: Vec<ArrowBody> = bodies
        .iter()
        .map(|b| ArrowBody::read(b.clone(), limits).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let json_bodies: Vec<Bytes> = read_bodies
        .iter()
        .map(|b| json_body(&codec, b).map(Bytes::from))
        .collect::<Result<_, _>>()?;
    let direct_batches: Vec<RecordBatch> = read_bodies
        .iter()
        .map(|b| {
            let conformed = codec.conform_arrow(b).map_err(|e| e.to_string())?;
            Ok(conformed.batches[0].1.clone())
        })
        .collect::<Result<_, String>>()?;
    let warm = (batches / 10).max(1);
    let n = batches - warm;
    // Direct and route alternate (`time_pairs`): both see the cluster's same drift.
    let pairs = time_pairs(
        warm,
        n,
        |i| direct_append(&handle, &direct_batches[i % batches]),
        |i| {
            send(
                &router,
                &url,
                bodies[i % batches].clone(),
                ARROW_STREAM,
                rows,
            )
        },
    )
    .await?;
    let (direct, arrow) = (&pairs.a, &pairs.b);
    let json = time_each(warm, n, |i| {
        send(
            &router,
            &url,
            json_bodies[i % batches].clone(),
            "application/json",
            rows,
        )
    })
    .await?;
    let rate_of = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (rows * times.len()) as f64 / total.as_secs_f64()
    };
    let (d, a, j) = (rate_of(direct), rate_of(arrow), rate_of(&json));
    println!("| direct fluss-rs append_arrow_batch, {rows}-row batches | {d:.0} | |");
    println!(
        "| write route, Arrow body | {a:.0} | ≥ 0.95× direct: {:.3} ({}) |",
        a / d,
        if a / d >= 0.95 { "met" } else { "NOT met" }
    );
    println!(
        "| write route, the same rows as JSON | {j:.0} | Arrow is {:.1}× JSON |",
        a / j
    );
    let cpu_per_batch = |cpu: Duration| cpu.as_secs_f64() * 1e6 / n as f64;
    println!(
        "| CPU per batch on the calling thread | direct {:.0} µs, route {:.0} µs | |",
        cpu_per_batch(pairs.a_cpu),
        cpu_per_batch(pairs.b_cpu)
    );
    figure("arrow", "route_ratio", a / d, "x");
    figure("arrow", "vs_json", a / j, "x");
    drop_users_table(&pool, &path).await
}

async fn direct_append(handle: &TableHandle, batch: &RecordBatch) -> Result<(), String> {
    let writer = handle.append_writer().map_err(|e| e.to_string())?;
    let ack = writer
        .append_arrow_batch(batch.clone())
        .map_err(|e| e.to_string())?;
    // Sent at once, as the route does for a write alone on its connection (fluss-ops
    // `await_acks`), instead of after the linger.
    tokio::time::timeout(Duration::from_secs(30), writer.flush())
        .await
        .map_err(|_| "no flush in 30 s".to_owned())?
        .map_err(|e| e.to_string())?;
    tokio::time::timeout(Duration::from_secs(30), ack)
        .await
        .map_err(|_| "no ack in 30 s".to_owned())?
        .map_err(|e| e.to_string())
}

async fn send(
    router: &axum::Router,
    url: &str,
    body: Bytes,
    content_type: &str,
    rows: usize,
) -> Result<(), String> {
    // A bulk writer asks for the answer without the 10,000 success ids (RFC 7240).
    let req = Request::post(url)
        .header("content-type", content_type)
        .header("prefer", "return=minimal")
        .body(Body::from(body))
        .map_err(|e| e.to_string())?;
    let (status, bytes) = call_read(router, req).await?;
    // The counts lead the answer: read them without parsing the 10,000 ids after them (the
    // client's parse is not the gateway's time).
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    let whole = format!("\"row_count\":{rows},\"success_count\":{rows},\"error_count\":0");
    if !status.is_success() || !head.contains(&whole) {
        return Err(format!("write failed: {status} {head}"));
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("arrow-bench", run().await)
}
