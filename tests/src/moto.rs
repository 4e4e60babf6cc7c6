//! A PRIVATE moto server (AWS APIs in server mode, from the project's virtualenv) for tests
//! that freeze it with SIGSTOP: a frozen process keeps its socket open, so connections are
//! accepted and requests written, but nothing answers — a hanging Secrets Manager or DynamoDB.
//! The shared stack's moto keeps serving every other test meanwhile.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A moto server on a free loopback port, stopped when dropped (thawed first).
pub struct PrivateMoto {
    child: Child,
    endpoint: String,
}

/// The virtualenv's `moto_server` (`make tools` creates it), else one on `PATH`.
fn moto_bin() -> std::path::PathBuf {
    let cache = std::env::var("FLUSS_GW_CACHE").map_or_else(
        |_| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/fluss-lambda-gateway")
        },
        std::path::PathBuf::from,
    );
    let bin = cache.join("venv/bin/moto_server");
    if bin.exists() {
        bin
    } else {
        "moto_server".into()
    }
}

impl PrivateMoto {
    /// Starts moto and waits (at most 60 s) until it answers HTTP.
    pub fn start() -> PrivateMoto {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(moto_bin())
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server runs (make tools installs it)");
        let moto = PrivateMoto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = s.write_all(b"GET /moto-api/ HTTP/1.0\r\n\r\n");
                let mut head = [0u8; 12];
                if s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.") {
                    break;
                }
            }
            assert!(Instant::now() < until, "private moto did not start in 60 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        moto
    }

    /// The AWS variables of a function talking to this moto.
    pub fn env(&self) -> BTreeMap<String, String> {
        [
            ("AWS_ENDPOINT_URL", self.endpoint.as_str()),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_REGION", "us-east-1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    /// Freezes moto (SIGSTOP), returning once every thread is stopped.
    pub fn freeze(&self) {
        self.signal("STOP");
        crate::private_stack::wait_stopped(self.child.id());
    }

    /// Thaws moto (SIGCONT).
    pub fn thaw(&self) {
        self.signal("CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal} moto");
    }
}

impl Drop for PrivateMoto {
    fn drop(&mut self) {
        self.signal("CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
