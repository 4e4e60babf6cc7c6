//! OTLP receivers for the telemetry tests: the real OpenTelemetry Collector (built from the Go
//! module proxy by `infra/local/otelcol/build.sh`), writing what it receives as OTLP JSON lines,
//! and a receiver that answers every export only after a delay (or a closed port: none at all).

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running collector with an OTLP/HTTP receiver on a loopback port and a file exporter.
pub struct Collector {
    /// Its OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub endpoint: String,
    file: PathBuf,
    child: Child,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// The path of `otelcol-fluss`, built first when it is not up to date (the build script is
/// idempotent and prints the path last).
pub fn collector_binary() -> String {
    let script = crate::repo_root().join("infra/local/otelcol/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .expect("run infra/local/otelcol/build.sh");
    assert!(out.status.success(), "building the collector failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .expect("the build script prints the binary's path")
        .trim()
        .to_owned()
}

impl Collector {
    /// Builds the collector if needed (idempotent; the Makefile builds it before the tests) and
    /// starts it; ready once its receiver accepts connections.
    pub fn start() -> Collector {
        Collector::start_with(None)
    }

    /// [`Collector::start`] with a receiver that accepts only exports carrying
    /// `authorization: Bearer <token>` (the bearer-token authenticator): what arrives proves
    /// the exporter sent the headers it was configured with.
    pub fn start_requiring(token: &str) -> Collector {
        Collector::start_with(Some(token))
    }

    fn start_with(token: Option<&str>) -> Collector {
        let binary = collector_binary();
        let port = crate::free_port().expect("free port");
        let dir = std::env::temp_dir().join(format!("otelcol-it-{port}"));
        std::fs::create_dir_all(&dir).expect("collector dir");
        let file = dir.join("metrics.jsonl");
        let _ = std::fs::remove_file(&file);
        let config = dir.join("config.yaml");
        let (extension, auth, service_extensions) = match token {
            Some(token) => (
                format!(
                    "extensions:\n  bearertokenauth:\n    scheme: Bearer\n    token: \"{token}\"\n"
                ),
                "        auth:\n          authenticator: bearertokenauth\n",
                "  extensions: [bearertokenauth]\n",
            ),
            None => (String::new(), "", ""),
        };
        std::fs::write(
            &config,
            format!(
                "{extension}receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:{port}\n{auth}\
                 exporters:\n  file:\n    path: {}\n    flush_interval: 100ms\n\
                 service:\n{service_extensions}  telemetry:\n    metrics:\n      level: none\n  pipelines:\n    metrics:\n      receivers: [otlp]\n      exporters: [file]\n",
                file.display()
            ),
        )
        .expect("collector config");
        let log = std::fs::File::create(dir.join("collector.log")).expect("collector log");
        let child = Command::new(binary)
            .arg("--config")
            .arg(format!("file:{}", config.display()))
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start the collector");
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < until,
                "the collector did not start; see {}",
                dir.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Collector {
            endpoint: format!("http://127.0.0.1:{port}"),
            file,
            child,
        }
    }

    /// Every data point received so far, flattened.
    pub fn points(&self) -> Vec<Point> {
        let Ok(file) = std::fs::File::open(&self.file) else {
            return Vec::new();
        };
        let mut points = Vec::new();
        for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
            let Ok(doc) = serde_json::from_str::<Value>(&line) else {
                continue; // a line still being written
            };
            for rm in doc["resourceMetrics"].as_array().into_iter().flatten() {
                let resource = attributes(&rm["resource"]["attributes"]);
                for sm in rm["scopeMetrics"].as_array().into_iter().flatten() {
                    for m in sm["metrics"].as_array().into_iter().flatten() {
                        let name = m["name"].as_str().unwrap_or("").to_owned();
                        let unit = m["unit"].as_str().unwrap_or("").to_owned();
                        for (kind, data) in [
                            ("sum", &m["sum"]),
                            ("histogram", &m["histogram"]),
                            ("gauge", &m["gauge"]),
                        ] {
                            for dp in data["dataPoints"].as_array().into_iter().flatten() {
                                let number = |v: &Value| {
                                    v.as_str()
                                        .and_then(|s| s.parse::<f64>().ok())
                                        .or_else(|| v.as_f64())
                                };
                                let value = number(&dp["asInt"])
                                    .or_else(|| number(&dp["asDouble"]))
                                    .or_else(|| number(&dp["count"]))
                                    .unwrap_or(0.0);
                                points.push(Point {
                                    name: name.clone(),
                                    unit: unit.clone(),
                                    kind,
                                    temporality: data["aggregationTemporality"]
                                        .as_u64()
                                        .unwrap_or(0),
                                    resource: resource.clone(),
                                    attributes: attributes(&dp["attributes"]),
                                    value,
                                    time: dp["timeUnixNano"]
                                        .as_str()
                                        .unwrap_or("0")
                                        .parse()
                                        .unwrap_or(0),
                                });
                            }
                        }
                    }
                }
            }
        }
        points
    }

    /// The current total of `name` over the series whose attributes include `labels`: for
    /// cumulative data, the latest point of each series (per process instance and attribute
    /// set) summed; a histogram's value is its count.
    pub fn total(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        latest_total(&self.points(), name, labels)
    }

    /// Polls until `total(name, labels) == want` or `within` passes; the last total seen.
    pub fn wait_for(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        want: f64,
        within: Duration,
    ) -> f64 {
        let until = Instant::now() + within;
        loop {
            let got = self.total(name, labels);
            if got == want || Instant::now() >= until {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One data point as the collector wrote it.
#[derive(Debug, Clone)]
pub struct Point {
    /// Metric name.
    pub name: String,
    /// Its unit.
    pub unit: String,
    /// `sum`, `histogram` or `gauge`.
    pub kind: &'static str,
    /// 1 delta, 2 cumulative (0 for gauges).
    pub temporality: u64,
    /// Resource attributes (service name, instance id, …).
    pub resource: BTreeMap<String, String>,
    /// The point's attributes (labels).
    pub attributes: BTreeMap<String, String>,
    /// Counter value, gauge value or histogram count.
    pub value: f64,
    /// `timeUnixNano`.
    pub time: u128,
}

fn attributes(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            let key = kv["key"].as_str()?.to_owned();
            let v = &kv["value"];
            let value = v["stringValue"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| v["intValue"].as_str().map(str::to_owned))
                .unwrap_or_else(|| v.to_string());
            Some((key, value))
        })
        .collect()
}

/// See [`Collector::total`].
pub fn latest_total(points: &[Point], name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut latest: BTreeMap<(String, String), (u128, f64)> = BTreeMap::new();
    for p in points.iter().filter(|p| p.name == name) {
        if !labels
            .iter()
            .all(|(k, v)| p.attributes.get(*k).map(String::as_str) == Some(*v))
        {
            continue;
        }
        let series = (
            p.resource
                .get("service.instance.id")
                .cloned()
                .unwrap_or_default(),
            format!("{:?}", p.attributes),
        );
        let entry = latest.entry(series).or_insert((0, 0.0));
        if p.time >= entry.0 {
            *entry = (p.time, p.value);
        }
    }
    latest.values().map(|(_, v)| v).sum()
}

/// An OTLP/HTTP "receiver" that reads each request and answers 200 only after `delay`; counts
/// the exports it got.
pub struct StallingReceiver {
    /// Its base URL.
    pub endpoint: String,
    /// Exports received so far.
    pub exports: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StallingReceiver {
    /// Starts it on a loopback port, one thread per connection.
    pub fn start(delay: Duration) -> StallingReceiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let exports = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = exports.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let count = count.clone();
                std::thread::spawn(move || serve_slowly(stream, delay, &count));
            }
        });
        StallingReceiver {
            endpoint: format!("http://127.0.0.1:{port}"),
            exports,
        }
    }
}

/// Keep-alive HTTP/1.1: each request (headers + content-length body) is answered after `delay`.
fn serve_slowly(
    mut stream: std::net::TcpStream,
    delay: Duration,
    count: &std::sync::atomic::AtomicUsize,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < end + 4 + length {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..end + 4 + length);
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(delay);
        let answer =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(answer).is_err() {
            return;
        }
    }
}
