//! The write load the durability and reliability suites drive through the standalone server:
//! a keep-alive client with its API key, write streams that record what each row was told, and
//! the checks that read every acknowledged row back (lookups through the gateway, log scans
//! straight from Fluss).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fluss::client::EARLIEST_OFFSET;
use fluss::metadata::TablePath;
use fluss::row::DataGetters;
use integration_tests::server::ServerProcess;
use integration_tests::{Stack, assert_no_internals, bounded};
use serde_json::{Value, json};

/// The database the suites' tables live in.
pub const DB: &str = "suite";

/// An HTTP answer: status 0 when the transport failed (no answer at all).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub elapsed: Duration,
    /// The `Retry-After` header, when the answer had one.
    pub retry_after: Option<String>,
}

/// A keep-alive client of one server, with its API key.
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub key: String,
    /// The server's pid: its thread stacks are written out on the first request it leaves
    /// unanswered.
    pub pid: u32,
}

impl Client {
    /// `limit` bounds each request end to end: a request still unanswered then is a hang.
    pub fn new(server: &ServerProcess, key: &str, limit: Duration) -> Client {
        Client {
            http: reqwest::Client::builder()
                .timeout(limit)
                .pool_max_idle_per_host(64)
                .build()
                .expect("http client"),
            base: format!("http://{}", server.addr()),
            key: key.to_owned(),
            pid: server.pid(),
        }
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// One request with the API key (and a JSON body when `body` is given).
    pub async fn send(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Reply {
        let started = Instant::now();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-api-key", &self.key);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let (status, retry_after, bytes) = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                (
                    status,
                    retry_after,
                    response.bytes().await.map(|b| b.to_vec()),
                )
            }
            Err(e) => {
                if e.is_timeout() {
                    let pid = self.pid;
                    std::thread::spawn(move || ServerProcess::dump_stacks_once(pid));
                }
                (0, None, Ok(Vec::new()))
            }
        };
        let bytes = bytes.unwrap_or_default();
        assert_no_internals(path, &bytes);
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            elapsed: started.elapsed(),
            retry_after,
        }
    }

    /// Creates the suite's database (if absent) and a table of `id INT` (the key when `pk`)
    /// and `v STRING` with `buckets` buckets; the gateway answers once every bucket has a leader.
    pub async fn create_table(&self, table: &str, pk: bool, buckets: u32) {
        let db = self
            .post("/v1/clusters/default/databases", &json!({"database": DB}))
            .await;
        assert!(db.status == 201 || db.status == 409, "{db:?}");
        let mut spec = json!({
            "table_name": table,
            "columns": [
                {"name": "id", "data_type": {"type": "INT"}},
                {"name": "v", "data_type": {"type": "STRING"}}
            ],
            "distribution": {"bucket_count": buckets}
        });
        if pk {
            spec["primary_key"] = json!(["id"]);
        }
        let url = format!("/v1/clusters/default/databases/{DB}/tables");
        let created = self.post(&url, &spec).await;
        assert_eq!(created.status, 201, "{created:?}");
    }
}

pub fn records(table: &str) -> String {
    format!("/v1/clusters/default/databases/{DB}/tables/{table}/records")
}

pub fn lookups(table: &str) -> String {
    format!("{}/lookup", records(table))
}

/// The entry ids of a write answer's `successes`.
pub fn successes(body: &Value) -> Vec<String> {
    body["successes"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|e| e["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Looks `ids` up through the gateway, 100 keys a request; the ids whose row is missing or
/// holds another value than `value_of(id)`, in ascending order.
pub async fn missing_rows(
    client: &Client,
    table: &str,
    ids: &[i32],
    value_of: impl Fn(i32) -> String + Copy + Send + 'static,
) -> Vec<i32> {
    missing_keyed_rows(client, table, ids, Rows::PLAIN, value_of).await
}

/// [`missing_rows`] of a table whose rows look like `rows` (the key names the partition too).
pub async fn missing_keyed_rows(
    client: &Client,
    table: &str,
    ids: &[i32],
    rows: Rows,
    value_of: impl Fn(i32) -> String + Copy + Send + 'static,
) -> Vec<i32> {
    // Lookups of 100 keys, eight in flight: one at a time, the soak's final check of ~950,000
    // rows took 60 s of the suite; the gateway serves up to 64 lookups at once.
    const IN_FLIGHT: usize = 8;
    // Longer than the gateway's default lookup failover window (30 s): after a leader change
    // a miss is a 503 until it passes, and a row lost with a single replica stays a miss.
    const PATIENCE: Duration = Duration::from_secs(45);
    let mut shares = vec![Vec::new(); IN_FLIGHT];
    for (n, chunk) in ids.chunks(100).enumerate() {
        shares[n % IN_FLIGHT].push(chunk.to_vec());
    }
    let mut lanes = tokio::task::JoinSet::new();
    for mine in shares {
        let (client, table) = (client.clone(), table.to_owned());
        lanes.spawn(async move {
            let mut missing = Vec::new();
            for chunk in mine {
                let keys: Vec<Value> = chunk.iter().map(|id| rows.key(*id)).collect();
                let body = json!({ "keys": keys });
                let mut reply = client.post(&lookups(&table), &body).await;
                // A cluster still settling after a fault may answer 503/504 with Retry-After:
                // an honest answer, asked again. No answer at all (status 0) is a hang and
                // fails at once.
                let until = std::time::Instant::now() + PATIENCE;
                while matches!(reply.status, 503 | 504)
                    && reply.retry_after.is_some()
                    && std::time::Instant::now() < until
                {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    reply = client.post(&lookups(&table), &body).await;
                }
                assert_eq!(reply.status, 200, "{reply:?}");
                let results = reply.body["results"].as_array().expect("results");
                assert_eq!(results.len(), chunk.len(), "one result per key: {reply:?}");
                for (id, result) in chunk.iter().zip(results) {
                    if result["found"] != true || result["row"]["v"] != value_of(*id) {
                        missing.push(*id);
                    }
                }
            }
            missing
        });
    }
    let mut missing = Vec::new();
    while let Some(lane) = lanes.join_next().await {
        missing.extend(lane.expect("lookup lane"));
    }
    missing.sort_unstable();
    missing
}

pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How a stream's rows look: `id INT`, `v STRING` (`v{id}`), and in a partitioned table the
/// partition column `p` (`a` for even ids, `b` for odd ones).
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// Whether the rows carry the partition column `p`.
    pub partitioned: bool,
}

impl Rows {
    /// Rows of `id` and `v` only.
    pub const PLAIN: Rows = Rows { partitioned: false };

    /// The partition value of row `id`.
    pub fn partition_of(id: i32) -> &'static str {
        if id % 2 == 0 { "a" } else { "b" }
    }

    /// The row written for `id`.
    pub fn row(self, id: i32) -> Value {
        let mut row = json!({"id": id, "v": format!("v{id}")});
        if self.partitioned {
            row["p"] = json!(Self::partition_of(id));
        }
        row
    }

    /// The lookup key of row `id` (a partitioned table's key includes the partition column).
    pub fn key(self, id: i32) -> Value {
        let mut key = json!({ "id": id });
        if self.partitioned {
            key["p"] = json!(Self::partition_of(id));
        }
        key
    }
}

/// One write request of a stream as its client saw it.
#[derive(Clone, Debug)]
pub struct Answer {
    /// When the request was sent.
    pub sent: Instant,
    /// Its HTTP status (0: no answer).
    pub status: u16,
    /// Rows of it reported written.
    pub acked: u32,
    /// Rows of it in all.
    pub rows: u32,
    /// What it said of the first row it did not write (`code: message`), or the error body.
    pub failure: Option<String>,
}

/// What the stream saw of each row: reported written, reported not written, or unknown.
#[derive(Default)]
pub struct Ledger {
    /// Every request in the order sent.
    pub answers: Vec<Answer>,
    /// Per-row failure codes (`failures[].error_code`) and how often each came.
    pub failure_codes: HashMap<String, u64>,
    /// The first message of each per-row failure code.
    pub failure_samples: HashMap<String, String>,
    /// Answers other than 200 without a `Retry-After`, as `status: body` (none may be a 503 or
    /// a 429).
    pub without_retry_after: Vec<String>,
    pub acked: Vec<i32>,
    /// When each acked row's answer came, in `acked` order.
    pub acked_at: Vec<Instant>,
    pub failed: u64,
    pub unknown: u64,
    pub requests: u64,
    pub statuses: HashMap<u16, u64>,
    pub slowest: Duration,
}

/// Writes batches of `batch` rows with fresh ids (`first_id`, `first_id + 1`, …) until `stop`,
/// recording each row's reported outcome. `op` is `append` or `upsert`.
pub async fn stream(
    client: Client,
    table: String,
    op: &'static str,
    first_id: i32,
    batch: i32,
    stop: Arc<AtomicBool>,
    acks: Arc<std::sync::atomic::AtomicU64>,
) -> Ledger {
    let sink = Arc::new(Acked {
        count: acks,
        ids: None,
    });
    stream_rows(client, table, op, Rows::PLAIN, first_id, batch, stop, sink).await
}

/// Where a stream reports its acknowledged rows while it runs.
#[derive(Default)]
pub struct Acked {
    /// Rows acknowledged so far.
    pub count: Arc<std::sync::atomic::AtomicU64>,
    /// Their ids, when someone (a lookup checker) reads them while the stream runs.
    pub ids: Option<std::sync::Mutex<Vec<i32>>>,
}

/// [`stream`] of rows shaped as `rows`, reporting acks to `acked`.
#[allow(clippy::too_many_arguments)]
pub async fn stream_rows(
    client: Client,
    table: String,
    op: &'static str,
    rows: Rows,
    first_id: i32,
    batch: i32,
    stop: Arc<AtomicBool>,
    acked: Arc<Acked>,
) -> Ledger {
    let mut ledger = Ledger::default();
    let mut next = first_id;
    while !stop.load(Ordering::Relaxed) {
        let ids: Vec<i32> = (next..next + batch).collect();
        next += batch;
        let entries: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id.to_string(), op: rows.row(*id)}))
            .collect();
        let sent = Instant::now();
        let reply = client
            .post(&records(&table), &json!({ "entries": entries }))
            .await;
        ledger.requests += 1;
        *ledger.statuses.entry(reply.status).or_default() += 1;
        ledger.slowest = ledger.slowest.max(reply.elapsed);
        if reply.status != 200 && reply.retry_after.is_none() {
            ledger
                .without_retry_after
                .push(format!("{}: {}", reply.status, reply.body));
        }
        let mut answer = Answer {
            sent,
            status: reply.status,
            acked: 0,
            rows: ids.len() as u32,
            failure: (reply.status != 200).then(|| format!("{}: {}", reply.status, reply.body)),
        };
        match reply.status {
            200 => {
                let ok: HashSet<String> = successes(&reply.body).into_iter().collect();
                for f in reply.body["failures"].as_array().into_iter().flatten() {
                    answer
                        .failure
                        .get_or_insert_with(|| format!("{}: {}", f["error_code"], f["message"]));
                    let code = f["error_code"].as_str().unwrap_or("(none)").to_owned();
                    *ledger.failure_codes.entry(code.clone()).or_default() += 1;
                    ledger
                        .failure_samples
                        .entry(code)
                        .or_insert_with(|| f["message"].as_str().unwrap_or_default().to_owned());
                    if f["error_code"] == "timeout" {
                        ledger.unknown += 1;
                    } else {
                        ledger.failed += 1;
                    }
                }
                let now = Instant::now();
                let mine: Vec<i32> = ids
                    .iter()
                    .filter(|id| ok.contains(&id.to_string()))
                    .copied()
                    .collect();
                answer.acked = mine.len() as u32;
                for id in &mine {
                    ledger.acked.push(*id);
                    ledger.acked_at.push(now);
                }
                acked.count.fetch_add(mine.len() as u64, Ordering::Relaxed);
                if let Some(sink) = &acked.ids {
                    sink.lock().unwrap_or_else(|e| e.into_inner()).extend(mine);
                }
            }
            // The deadline passed with rows sent: their outcome is unknown.
            504 | 0 => ledger.unknown += ids.len() as u64,
            _ => ledger.failed += ids.len() as u64,
        }
        ledger.answers.push(answer);
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    ledger
}

/// Every id of the log table `path` (every bucket of every partition), read from the earliest
/// offset until `want` distinct ids are seen or nothing new arrives for 5 s; (ids with their
/// counts).
pub async fn log_ids(stack: &Stack, path: &TablePath, want: usize) -> HashMap<i32, u32> {
    let conn = stack.connect_plaintext().await;
    let table = bounded("get table", conn.get_table(path))
        .await
        .expect("table");
    let info = table.get_table_info().clone();
    let scanner = table.new_scan().create_log_scanner().expect("scanner");
    if info.is_partitioned() {
        let admin = conn.get_admin().expect("admin");
        let partitions = bounded("partitions", admin.list_partition_infos(path))
            .await
            .expect("partitions");
        let starts: HashMap<(i64, i32), i64> = partitions
            .iter()
            .flat_map(|p| {
                (0..info.get_num_buckets()).map(|b| ((p.get_partition_id(), b), EARLIEST_OFFSET))
            })
            .collect();
        bounded("subscribe", scanner.subscribe_partition_buckets(&starts))
            .await
            .expect("subscribe");
    } else {
        let starts: HashMap<i32, i64> = (0..info.get_num_buckets())
            .map(|b| (b, EARLIEST_OFFSET))
            .collect();
        bounded("subscribe", scanner.subscribe_buckets(&starts))
            .await
            .expect("subscribe");
    }
    let mut seen: HashMap<i32, u32> = HashMap::new();
    let mut quiet_since = Instant::now();
    while seen.len() < want || quiet_since.elapsed() < Duration::from_millis(1500) {
        if quiet_since.elapsed() > Duration::from_secs(5) {
            break;
        }
        let polled = bounded("poll", scanner.poll(Duration::from_millis(500)))
            .await
            .expect("poll");
        if !polled.is_empty() {
            quiet_since = Instant::now();
        }
        for rec in polled {
            *seen.entry(rec.row().get_int(0).expect("id")).or_default() += 1;
        }
    }
    seen
}
