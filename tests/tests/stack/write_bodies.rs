//! Log-shipper bodies on the write route, against the real cluster: NDJSON (bare rows and
//! entries, ids from line numbers, errors naming the line), gzip / zstd / deflate bodies decoded
//! as they are read with the body limit on the decoded size, and codings the gateway does not
//! decode refused before anything is written.

use std::io::Write as _;
use std::time::Duration;

use fluss::metadata::TablePath;
use integration_tests::{Stack, unique_name};
use serde_json::json;

use crate::support::ingest::{create_log_table, log_rows};
use crate::support::*;

const NDJSON: &str = "application/x-ndjson";
const BOUND: Duration = Duration::from_secs(60);

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).expect("gzip");
    enc.finish().expect("gzip")
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).expect("deflate");
    enc.finish().expect("deflate")
}

async fn post(gw: &Gateway, path: &TablePath, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    send(
        BOUND,
        gw.addr,
        "POST",
        &records_url("default", path),
        headers,
        body,
    )
    .await
    .expect("an answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_gzip_ndjson_lines_append_exactly_and_a_bad_line_rejects_the_batch() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = create_log_table(&conn, &unique_name("nd_db"), &unique_name("nd_log")).await;
    let gw = Gateway::start(&stack).await;

    // A bad line first: the whole batch is refused naming it, nothing is written.
    let mut bad = String::new();
    for seq in 0..5 {
        bad.push_str(&json!({"seq": seq, "note": "x"}).to_string());
        bad.push('\n');
    }
    bad.push_str("{\"seq\": 99, \"note\": \n");
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON), ("content-encoding", "gzip")],
        &gzip(bad.as_bytes()),
    )
    .await;
    a.assert_error(400, "invalid_argument");
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("line 6: not valid JSON"), "{message}");
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON)],
        b"{\"seq\":1,\"note\":\"a\"}\n{\"seq\":\"x\"}\n",
    )
    .await;
    a.assert_error(400, "invalid_argument");
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`2`") && message.contains("`seq`"),
        "the codec names entry `2` (line 2): {message}"
    );

    // 10,000 lines, bare rows and entries mixed, CRLF and blank lines included, gzip.
    let mut body = String::new();
    for seq in 0..10_000i64 {
        let line = if seq % 10 == 0 {
            json!({"id": format!("e{seq}"), "append": {"seq": seq, "note": format!("n{seq}")}})
        } else {
            json!({"seq": seq, "note": format!("n{seq}")})
        };
        body.push_str(&line.to_string());
        body.push_str(if seq % 3 == 0 { "\r\n" } else { "\n" });
        if seq == 5000 {
            body.push('\n');
        }
    }
    let compressed = gzip(body.as_bytes());
    assert!(compressed.len() * 5 < body.len(), "the body compresses");
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON), ("content-encoding", "gzip")],
        &compressed,
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["success_count"], 10_000, "{}", a.body["failures"]);
    assert_eq!(a.body["error_count"], 0);
    let ids: Vec<&str> = a.body["successes"]
        .as_array()
        .expect("successes")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids[0], "e0");
    assert_eq!(ids[1], "2", "a bare row's id is its line number");
    assert_eq!(
        ids[5002], "5004",
        "the blank line after line 5001 is counted"
    );

    let rows = log_rows(&conn, &path, 10_000).await;
    assert_eq!(
        rows.len(),
        10_000,
        "each row once, none from the refused batches"
    );
    for (i, (seq, note)) in rows.iter().enumerate() {
        assert_eq!((*seq, note.as_str()), (i as i64, format!("n{i}").as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_ndjson_rows_upsert_into_a_primary_key_table_in_every_coding() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new(unique_name("nd_db"), unique_name("nd_pk"));
    create_pk_table(&conn, &path).await;
    let gw = Gateway::start(&stack).await;

    let lines = "{\"id\":1,\"name\":\"ann\",\"score\":\"9007199254740993\"}\n\
                 {\"id\":2,\"name\":\"bob\"}\n\
                 {\"id\":\"d\",\"delete\":{\"id\":2}}\n";
    let zstd_body = zstd::encode_all(lines.as_bytes(), 3).expect("zstd");
    for (coding, body) in [
        ("zstd", zstd_body),
        ("deflate", deflate(lines.as_bytes())),
        ("X-GZIP", gzip(lines.as_bytes())),
    ] {
        let a = post(
            &gw,
            &path,
            &[("content-type", NDJSON), ("content-encoding", coding)],
            &body,
        )
        .await;
        assert_eq!(a.status, 200, "{coding}: {a:?}");
        assert_eq!(a.body["success_count"], 3, "{coding}: {a:?}");
    }
    assert_eq!(
        lookup(&conn, &path, 1).await,
        Some((Some("ann".into()), Some(9_007_199_254_740_993)))
    );
    assert_eq!(
        lookup(&conn, &path, 2).await,
        None,
        "the delete entry applied"
    );

    // The JSON form compressed works the same.
    let body = json!({"entries":[{"id":"u","upsert":{"id":3,"name":"cy"}}]}).to_string();
    let a = post(
        &gw,
        &path,
        &[
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
        ],
        &gzip(body.as_bytes()),
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        lookup(&conn, &path, 3).await,
        Some((Some("cy".into()), None))
    );
}

/// The peak resident set of this process (the in-process gateway's), from /proc.
fn peak_rss_mb() -> u64 {
    integration_tests::proc_status_kib("self", "VmHWM").expect("VmHWM") / 1024
}

/// What a gzip body inflates to, in MB (its trailer holds the size modulo 4 GiB).
fn enc_size_mb(gz: &[u8]) -> u64 {
    let n = gz.len();
    u64::from(u32::from_le_bytes([
        gz[n - 4],
        gz[n - 3],
        gz[n - 2],
        gz[n - 1],
    ])) >> 20
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_codings_undecodable_bodies_and_bombs_are_refused_and_write_nothing() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = create_log_table(&conn, &unique_name("nd_db"), &unique_name("nd_bad")).await;
    let gw = Gateway::start(&stack).await;
    let row = b"{\"seq\":1,\"note\":\"plain\"}\n";

    // A plain body labelled gzip (it used to be written as is).
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON), ("content-encoding", "gzip")],
        row,
    )
    .await;
    a.assert_error(400, "invalid_argument");
    // A whole gzip body followed by bytes that are not gzip: the trailing bytes used to be
    // ignored (the row written); every byte of a coded body must belong to the coding.
    for trailing in [&b"{\"seq\":2,\"note\":\"smuggled\"}\n"[..], b"\0\0\0\0"] {
        let mut body = gzip(row);
        body.extend_from_slice(trailing);
        let a = post(
            &gw,
            &path,
            &[("content-type", NDJSON), ("content-encoding", "gzip")],
            &body,
        )
        .await;
        a.assert_error(400, "invalid_argument");
    }
    for (coding, says) in [
        ("br", "`br`"),
        ("gzip, zstd", "more than one coding"),
        ("compress", "`compress`"),
    ] {
        let a = post(
            &gw,
            &path,
            &[("content-type", NDJSON), ("content-encoding", coding)],
            row,
        )
        .await;
        a.assert_error(415, "unsupported_media_type");
        let message = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{coding}: {message}");
    }

    // 1 MB of gzip that inflates to ~1 GB: 413 at the 6 MiB limit, without inflating it all.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    while enc.get_ref().len() < 1_000_000 {
        enc.write_all(&zeros).expect("bomb");
    }
    let bomb = enc.finish().expect("bomb");
    let peak_before = peak_rss_mb();
    let started = std::time::Instant::now();
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON), ("content-encoding", "gzip")],
        &bomb,
    )
    .await;
    a.assert_error(413, "limit_exceeded");
    let peak_after = peak_rss_mb();
    println!(
        "gzip bomb: {} KB inflating to {} MB answered 413 in {:?}; peak RSS of the process serving it {peak_before} -> {peak_after} MB",
        bomb.len() / 1024,
        enc_size_mb(&bomb),
        started.elapsed()
    );
    assert!(
        peak_after < 100 + peak_before,
        "decoding the bomb grew the peak RSS to {peak_after} MB"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Nothing was written: a row sent after the refused bodies is the table's only row (one
    // bucket, so one order). Waiting for an empty table to stay empty cost the scan's 30 s.
    let a = post(
        &gw,
        &path,
        &[("content-type", NDJSON), ("content-encoding", "gzip")],
        &gzip(b"{\"seq\":99,\"note\":\"after\"}\n"),
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["success_count"], 1, "{a:?}");
    assert_eq!(
        log_rows(&conn, &path, 1).await,
        vec![(99, "after".to_owned())],
        "nothing but the row sent after the refused bodies was written"
    );
}
