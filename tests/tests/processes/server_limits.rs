//! The standalone server's connection limits, against the real `fluss-gateway` binary (built by
//! `cargo build --workspace --bins`) on a loopback port, over raw TCP sockets: half-sent heads
//! and silent or idle connections are closed by the header-read timeout, a body shorter than
//! its `Content-Length` by the body-read timeout, a declared 64 MiB body is refused 413 before
//! it is sent, and connections beyond the cap are closed at once with one WARN line, while a
//! normal request is answered as soon as a slot is free.
//!
//! The cluster is an address nothing listens on: none of these answers needs Fluss, so the
//! tests run without the local stack. The tests take turns (their timing is what they check,
//! and two cores are shared with the server processes).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use integration_tests::server::ServerProcess;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The header-read and body-read timeouts the servers under test run with.
const TIMEOUT: Duration = Duration::from_secs(2);
/// What a check allows past a timeout for the server to act and the client to see it.
const SLACK: Duration = Duration::from_secs(1);
/// How early before its timeout a connection may be closed (timers start when the server
/// first polls the connection, a little after the client's connect).
const EARLY: Duration = Duration::from_millis(500);
/// "At once": a normal request's answer, a refusal.
const AT_ONCE: Duration = Duration::from_secs(1);

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n";
const CREATE_DATABASE: &str = "POST /v1/clusters/default/databases HTTP/1.1\r\nHost: gw\r\n\
                               Content-Type: application/json\r\nConnection: close\r\n";

/// Held by each test that times a server (here and in `tls`): they take turns.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `fluss-gateway` with 2 s header-read and body-read timeouts, plus `extra` settings (which
/// win).
fn server(extra: &[(&str, &str)]) -> ServerProcess {
    let env: BTreeMap<String, String> = [
        ("FLUSS_GATEWAY__CLUSTERS", "default"),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            "127.0.0.1:1",
        ),
        ("FLUSS_GATEWAY__SERVER__HEADER_READ_TIMEOUT", "2s"),
        ("FLUSS_GATEWAY__SERVER__BODY_READ_TIMEOUT", "2s"),
        ("RUST_LOG", "info"),
        // One JSON object per line: fields are matched without terminal colour codes.
        ("GATEWAY_LOG_FORMAT", "json"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    ServerProcess::start(&env)
}

/// Reads until the server closes the connection (EOF or reset) or `until` passes: what was
/// read, and when it closed (`None`: still open at `until`).
async fn read_until_closed(stream: &mut TcpStream, until: Instant) -> (Vec<u8>, Option<Instant>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(until.into(), stream.read(&mut buf)).await {
            Err(_) => return (got, None),
            Ok(Ok(0) | Err(_)) => return (got, Some(Instant::now())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// The status code of a raw HTTP/1.1 answer (0 when there is none).
fn status(answer: &[u8]) -> u16 {
    String::from_utf8_lossy(answer)
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Sends `request` on a new connection; the whole answer, which must come and be followed by
/// the server closing the connection within [`AT_ONCE`].
async fn answered_at_once(addr: SocketAddr, request: &[u8]) -> String {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("send");
    let (answer, closed) = read_until_closed(&mut stream, started + AT_ONCE).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(
        closed.is_some() && !answer.is_empty(),
        "no complete answer within {AT_ONCE:?}: {answer:?}"
    );
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_heads_are_closed_by_the_header_timeout_while_normal_requests_are_answered() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = server(&[]);
    let addr = server.addr();
    const HELD: usize = 1500;
    let started = Instant::now();
    let mut held = Vec::with_capacity(HELD);
    for _ in 0..HELD {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let connected = Instant::now();
        stream
            .write_all(CREATE_DATABASE.as_bytes())
            .await
            .expect("half a head");
        held.push((stream, connected));
    }
    let opened = started.elapsed();
    let rss_held = server.rss_kib();
    let asked = Instant::now();
    let answer = answered_at_once(addr, HEALTH).await;
    let answered_in = asked.elapsed();
    assert_eq!(status(answer.as_bytes()), 200, "{answer}");
    // Before the first held connection could have timed out: all of them were open.
    assert!(
        asked + answered_in < started + TIMEOUT - EARLY,
        "opening took {opened:?}, too long to hold them all at once"
    );

    let readers: Vec<_> = held
        .into_iter()
        .map(|(mut stream, connected)| {
            tokio::spawn(async move {
                let (got, closed) =
                    read_until_closed(&mut stream, connected + TIMEOUT + SLACK).await;
                (got, closed.map(|at| at - connected))
            })
        })
        .collect();
    let mut latest = Duration::ZERO;
    for (n, reader) in readers.into_iter().enumerate() {
        let (got, after) = reader.await.expect("reader");
        let after = after.unwrap_or_else(|| {
            panic!(
                "held connection {n} still open {:?} after its connect",
                TIMEOUT + SLACK
            )
        });
        assert!(
            after >= TIMEOUT - EARLY,
            "connection {n} closed after {after:?}"
        );
        // No request, so no answer: the connection is just closed.
        assert!(
            got.is_empty(),
            "connection {n} got {:?}",
            String::from_utf8_lossy(&got)
        );
        latest = latest.max(after);
    }
    let answer = answered_at_once(addr, HEALTH).await;
    assert_eq!(status(answer.as_bytes()), 200, "{answer}");
    println!(
        "{HELD} half-sent heads opened in {opened:?}; server RSS while held {} MiB; a normal \
         request answered in {answered_in:?}; the last held one closed {latest:?} after its connect",
        rss_held / 1024
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_64_mib_body_is_refused_413_before_a_byte_of_it_is_sent() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = server(&[]);
    let request = format!(
        "{CREATE_DATABASE}Content-Length: {}\r\n\r\n",
        64 * 1024 * 1024
    );
    let asked = Instant::now();
    let answer = answered_at_once(server.addr(), request.as_bytes()).await;
    println!("413 in {:?}", asked.elapsed());
    assert_eq!(status(answer.as_bytes()), 413, "{answer}");
    assert!(answer.contains(r#""code":"limit_exceeded""#), "{answer}");
    assert!(answer.contains("67108864"), "{answer}");
    assert_closing(&answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_shorter_than_its_content_length_is_answered_and_closed_at_the_body_timeout() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = server(&[]);
    let mut stream = TcpStream::connect(server.addr()).await.expect("connect");
    let request = format!("{CREATE_DATABASE}Content-Length: 100\r\n\r\n{{\"database\":");
    stream.write_all(request.as_bytes()).await.expect("send");
    let sent = Instant::now();
    let (answer, closed) = read_until_closed(&mut stream, sent + TIMEOUT + SLACK).await;
    let answer = String::from_utf8_lossy(&answer);
    let after = closed.map(|at| at - sent);
    println!("short body answered and closed after {after:?}");
    let after = after.expect("closed within the body timeout");
    assert!(after >= TIMEOUT - EARLY, "closed after {after:?}: {answer}");
    assert_eq!(status(answer.as_bytes()), 400, "{answer}");
    assert!(answer.contains(r#""code":"invalid_argument""#), "{answer}");
    assert!(
        answer.contains("did not arrive in full within 2s"),
        "{answer}"
    );
    assert_closing(&answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_kept_alive_connections_are_closed_by_the_header_timeout() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = server(&[]);
    let addr = server.addr();
    let mut silent = TcpStream::connect(addr).await.expect("connect");
    let silent_since = Instant::now();

    // One answered request, then nothing: the keep-alive wait runs the same timer.
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: gw\r\n\r\n")
        .await
        .expect("send");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer.ends_with(b"}") {
        let n = tokio::time::timeout(AT_ONCE, idle.read(&mut buf))
            .await
            .expect("answered at once")
            .expect("read");
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buf[..n]);
    }
    let idle_since = Instant::now();
    assert_eq!(status(&answer), 200, "{}", String::from_utf8_lossy(&answer));

    for (what, stream, since) in [
        ("silent", &mut silent, silent_since),
        ("idle kept-alive", &mut idle, idle_since),
    ] {
        let (got, closed) = read_until_closed(stream, since + TIMEOUT + SLACK).await;
        let after = closed.map(|at| at - since);
        println!("{what} connection closed after {after:?}");
        let after = after.unwrap_or_else(|| panic!("{what} connection still open"));
        assert!(after >= TIMEOUT - EARLY, "{what} closed after {after:?}");
        assert!(
            got.is_empty(),
            "{what}: {:?}",
            String::from_utf8_lossy(&got)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_closed_at_once_with_one_warning_until_slots_free() {
    let _turn = ONE_AT_A_TIME.lock().await;
    const CAP: usize = 50;
    let server = server(&[("FLUSS_GATEWAY__SERVER__MAX_CONNECTIONS", "50")]);
    let addr = server.addr();
    // The start-up probe's connection and this request's are over before the cap is filled.
    let answer = answered_at_once(addr, HEALTH).await;
    assert_eq!(status(answer.as_bytes()), 200, "{answer}");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut held = Vec::with_capacity(CAP);
    for _ in 0..CAP {
        held.push((
            TcpStream::connect(addr).await.expect("connect"),
            Instant::now(),
        ));
    }
    // Accepted in order: once the 51st is refused, all 50 hold their slots.
    const BEYOND: usize = 10;
    for n in 0..BEYOND {
        let asked = Instant::now();
        let mut stream = TcpStream::connect(addr)
            .await
            .expect("the kernel completes the connect");
        // A normal request among them: refused too, as the cap is the cap.
        let _ = stream.write_all(HEALTH).await;
        let (got, closed) = read_until_closed(&mut stream, asked + AT_ONCE).await;
        assert!(
            closed.is_some(),
            "connection {} beyond the cap still open",
            CAP + n + 1
        );
        assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    }
    wait_for_line(&server, "connection cap reached").await;
    let warnings = server.logs();
    let cap_lines: Vec<&str> = warnings
        .lines()
        .filter(|l| l.contains("connection cap reached"))
        .collect();
    assert_eq!(cap_lines.len(), 1, "one line per episode:\n{warnings}");
    assert!(
        cap_lines[0].contains(r#""level":"WARN""#),
        "{}",
        cap_lines[0]
    );
    assert!(
        cap_lines[0].contains(r#""max_connections":50"#),
        "{}",
        cap_lines[0]
    );

    // The held connections send nothing: the header timeout frees their slots.
    let mut latest = Duration::ZERO;
    for (mut stream, connected) in held {
        let (_, closed) = read_until_closed(&mut stream, connected + TIMEOUT + SLACK).await;
        let closed = closed.expect("a held connection outlived the header timeout");
        latest = latest.max(closed - connected);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = Instant::now();
    let answer = answered_at_once(addr, HEALTH).await;
    assert_eq!(status(answer.as_bytes()), 200, "{answer}");
    println!(
        "{BEYOND} connections beyond the cap of {CAP} closed at once; held ones freed after \
         {latest:?}; a normal request then answered in {:?}",
        asked.elapsed()
    );
    let episode_end = wait_for_line(&server, "connections below the cap again").await;
    assert!(
        episode_end.contains(&format!(r#""refused":{BEYOND}"#)),
        "{episode_end}"
    );
}

/// The first line of the server's log holding `needle`, waited for (at most 5 s): the
/// server's stderr is read by a thread of the harness, so a line written as a request was
/// admitted may reach it a little after the answer does.
async fn wait_for_line(server: &ServerProcess, needle: &str) -> String {
    let read_by = Instant::now() + Duration::from_secs(5);
    loop {
        let logs = server.logs();
        if let Some(line) = logs.lines().find(|l| l.contains(needle)) {
            return line.to_owned();
        }
        assert!(Instant::now() < read_by, "no line with {needle:?}:\n{logs}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts that `answer` announces the end of its connection.
fn assert_closing(answer: &str) {
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
}

/// The standalone server speaks HTTP/1.1 only, as the Apache Fluss Gateway does: an HTTP/2
/// prior-knowledge preface gets no HTTP/2 answer (hyper's HTTP/1.1 connection refuses it) and
/// the connection is closed at once, while HTTP/1.1 requests are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_prior_knowledge_preface_is_refused_and_http1_is_served() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let gw = server(&[]);
    let addr = gw.addr();
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // The client preface, then an empty SETTINGS frame.
    let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    preface.extend_from_slice(&[0, 0, 0, 0x04, 0, 0, 0, 0, 0]);
    stream.write_all(&preface).await.expect("send");
    let (answer, closed) = read_until_closed(&mut stream, started + AT_ONCE).await;
    assert!(closed.is_some(), "the connection stayed open: {answer:?}");
    // An HTTP/2 server answers with its own SETTINGS frame (type 4 in the fifth byte).
    assert!(answer.get(3) != Some(&0x04), "an HTTP/2 answer: {answer:?}");
    let text = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || status(&answer) >= 400,
        "not a refusal: {text:?}"
    );
    println!("[server] HTTP/2 preface answered {text:?}");
    let health = answered_at_once(addr, HEALTH).await;
    assert_eq!(status(health.as_bytes()), 200, "{health}");
}
