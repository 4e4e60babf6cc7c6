//! HTTPS on the standalone server with the Fluss Gateway's `gateway.tls.*` keys, against the real
//! `fluss-gateway` binary and a real client (`curl`), with certificates `openssl` makes for the
//! test: the certificate is served, rotated without a restart (a broken rotation keeps the
//! previous one), plain HTTP on the TLS port is a 400 that says why, a silent client is
//! disconnected at the handshake timeout, and a profile whose files do not load stops the
//! server at start-up, naming the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use integration_tests::server::ServerProcess;
use integration_tests::{unique_name, workspace_bin};
use tokio::io::AsyncReadExt;

/// A fresh directory for one test's certificates.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(unique_name("gw-tls"));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A self-signed certificate for `localhost` and its key, as `<name>.pem` and `<name>.key`.
fn certificate(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    integration_tests::output_of(
        Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
            .args(["-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert),
        "openssl req",
    );
    (cert, key)
}

/// The settings of a server serving `cert` and `key` as profile `public`.
fn tls_env(cert: &Path, key: &Path) -> BTreeMap<String, String> {
    [
        ("FLUSS_GATEWAY__CLUSTERS", "default"),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            "127.0.0.1:1",
        ),
        ("FLUSS_GATEWAY__REST__TLS__PROFILE", "public"),
        ("FLUSS_GATEWAY__TLS__PROFILES", "public"),
        ("gateway.tls.profile.public.handshake-timeout", "1s"),
        ("gateway.tls.profile.public.reload-interval", "200ms"),
        ("RUST_LOG", "info"),
        ("GATEWAY_LOG_FORMAT", "json"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .chain([
        (
            "gateway.tls.profile.public.certificate-file".to_owned(),
            cert.display().to_string(),
        ),
        (
            "gateway.tls.profile.public.private-key-file".to_owned(),
            key.display().to_string(),
        ),
    ])
    .collect()
}

/// `curl` of `url`, trusting only `ca` when given: (exit code, HTTP status, body).
fn curl(url: &str, ca: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "5", "-w", "\n%{http_code}"]);
    if let Some(ca) = ca {
        cmd.arg("--cacert").arg(ca);
    }
    let out = cmd.arg(url).output().expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    (
        out.status.code().unwrap_or(-1),
        status.to_owned(),
        body.to_owned(),
    )
}

/// Replaces `to` with `from` in one rename, as a rotation tool does.
fn install(from: &Path, to: &Path) {
    let staging = to.with_extension("new");
    std::fs::copy(from, &staging).expect("copy");
    std::fs::rename(&staging, to).expect("rename");
}

/// Waits (at most 10 s) until `check` holds.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < until, "not within 10 s: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_is_served_rotated_without_a_restart_and_plain_http_is_told_to_use_it() {
    let _turn = super::server_limits::ONE_AT_A_TIME.lock().await;
    let dir = scratch();
    let (first_cert, first_key) = certificate(&dir, "first");
    let (second_cert, second_key) = certificate(&dir, "second");
    let (cert, key) = (dir.join("tls.pem"), dir.join("tls.key"));
    install(&first_cert, &cert);
    install(&first_key, &key);
    let server = ServerProcess::start(&tls_env(&cert, &key));
    let https = format!("https://localhost:{}/health", server.addr().port());

    let (code, status, body) = curl(&https, Some(&first_cert));
    assert_eq!((code, status.as_str()), (0, "200"), "{body}");
    assert!(body.contains("\"status\""), "{body}");
    // A client that does not trust the certificate refuses it (curl: 60, peer certificate).
    let (code, _, _) = curl(&https, Some(&second_cert));
    assert_eq!(code, 60, "the second certificate is not in service yet");

    // Plain HTTP on the TLS port: a 400 in the error envelope that says what to do.
    let (code, status, body) = curl(&format!("http://{}/health", server.addr()), None);
    assert_eq!((code, status.as_str()), (0, "400"), "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON envelope");
    assert_eq!(v["error"]["code"], "invalid_argument", "{body}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("https://"),
        "{body}"
    );

    // Rotation: the new pair is served by the same process, the old one no more.
    let pid = server.pid();
    install(&second_key, &key);
    install(&second_cert, &cert);
    eventually("the rotated certificate is served", || {
        curl(&https, Some(&second_cert)).0 == 0
    });
    assert_eq!(curl(&https, Some(&first_cert)).0, 60);
    assert_eq!(server.pid(), pid);
    assert!(
        server.logs().contains("TLS certificate reloaded"),
        "{}",
        server.logs()
    );

    // A broken rotation (not PEM) keeps the certificate in service, with a warning.
    std::fs::write(&cert, b"not a certificate").expect("write");
    eventually("the broken rotation is reported", || {
        server
            .logs()
            .contains("do not load; the previous certificate stays in service")
    });
    let (code, status, _) = curl(&https, Some(&second_cert));
    assert_eq!((code, status.as_str()), (0, "200"));
    let logs = server.logs();
    assert!(
        !logs.contains("PRIVATE KEY"),
        "a key file's content was logged"
    );

    // A client that never starts its handshake is disconnected at the handshake timeout (1 s).
    let mut silent = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0) | Err(_))),
        "still open after 5 s: {read:?}"
    );
    let held = started.elapsed();
    assert!(
        held >= Duration::from_millis(800) && held < Duration::from_secs(3),
        "{held:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_profile_whose_files_do_not_load_stops_the_server_naming_the_file() {
    let dir = scratch();
    let (cert, _) = certificate(&dir, "only");
    let missing = dir.join("missing.key");
    let out = Command::new(workspace_bin("fluss-gateway"))
        .env_clear()
        .envs(tls_env(&cert, &missing))
        .env("GATEWAY_LISTEN", "127.0.0.1:0")
        .output()
        .expect("fluss-gateway runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains(&missing.display().to_string()),
        "{stdout}{stderr}"
    );

    // A profile selected but not listed is a configuration error at start-up, naming the keys.
    let mut env = tls_env(&cert, &missing);
    env.insert("FLUSS_GATEWAY__TLS__PROFILES".into(), "internal".into());
    let out = Command::new(workspace_bin("fluss-gateway"))
        .env_clear()
        .envs(env)
        .output()
        .expect("fluss-gateway runs");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("profile `public` is not listed"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
