//! A function under a real Lambda runtime API: the AWS Lambda Runtime Interface Emulator
//! (`aws-lambda-rie`, built from the Go module proxy by `make rie`). It runs a function binary as
//! a `provided.al2023` function runs in Lambda and takes invocations on
//! `POST /2015-03-31/functions/function/invocations`. With `AWS_LAMBDA_MAX_CONCURRENCY` set it
//! runs as Lambda Managed Instances do: the function's runtime polls with that many workers and
//! an invocation that finds no idle worker is refused, so N invocations answered at once prove
//! that one process served them side by side. That mode runs the function as Lambda does, from
//! `/var/task/bootstrap` in `/var/task` (or `/opt`, `/var/runtime`), and ignores the command
//! line, so the emulator then runs in a mount namespace of its own (`unshare`) with a `tmpfs` on
//! `/var` and the function mounted on `/var/task/bootstrap` (a bind mount, not a link: the
//! runtime runs as an unprivileged user, uid 993 as in Lambda, who may not traverse the path of
//! the build). The machine's `/var` is untouched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

/// The emulator built by `make rie` (or the one `AWS_LAMBDA_RIE` names); an error naming the
/// command to run when it is missing.
pub fn rie_path() -> Result<PathBuf, String> {
    let path = std::env::var_os("AWS_LAMBDA_RIE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("FLUSS_GW_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                        .join(".cache/fluss-lambda-gateway")
                });
            cache.join("bin/aws-lambda-rie")
        });
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{} not found: run `make rie`", path.display()))
    }
}

/// A running emulator with its function, both killed on drop. Their output goes to a file,
/// read by [`Rie::output`] (the emulator's `REPORT` lines among it).
pub struct Rie {
    child: Child,
    port: u16,
    log_path: PathBuf,
    /// When the emulator was spawned (a cold start is timed from here).
    pub spawned: Instant,
}

impl Rie {
    /// Spawns the emulator running `function` with only `env` (plus the function's name, 128 MB
    /// and a 30 s timeout, as a deployment sets them) on free loopback ports. `max_concurrency`
    /// sets `AWS_LAMBDA_MAX_CONCURRENCY` (the emulator's Managed Instances mode).
    pub fn start(
        function: &Path,
        env: &BTreeMap<String, String>,
        max_concurrency: Option<u32>,
    ) -> Result<Rie, String> {
        let rie = rie_path()?;
        let (port, runtime_port) = (crate::free_port()?, crate::free_port()?);
        let name = function
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let log_path = std::env::temp_dir().join(format!(
            "rie-{name}-{}-{}.log",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let log = std::fs::File::create(&log_path).map_err(|e| e.to_string())?;
        let mut command = match max_concurrency {
            None => Command::new(&rie),
            Some(_) => {
                let mut command = Command::new("unshare");
                command.args(["--mount", "--propagation", "private"]);
                // A user other than root needs a user namespace of its own to mount.
                if !is_root() {
                    command.arg("--map-root-user");
                }
                command
                    .args([
                        "sh",
                        "-c",
                        "mount -t tmpfs lambda /var && mkdir /var/task \
                         && touch /var/task/bootstrap \
                         && mount --bind \"$0\" /var/task/bootstrap && exec \"$@\"",
                    ])
                    .arg(function)
                    .arg(&rie);
                command
            }
        };
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env)
            .env("AWS_LAMBDA_FUNCTION_NAME", &name)
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
            .env("AWS_LAMBDA_FUNCTION_TIMEOUT", "30");
        if let Some(n) = max_concurrency {
            command.env("AWS_LAMBDA_MAX_CONCURRENCY", n.to_string());
        }
        let spawned = Instant::now();
        let child = command
            .arg("--runtime-interface-emulator-address")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--runtime-api-address")
            .arg(format!("127.0.0.1:{runtime_port}"))
            .arg(function)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", rie.display()))?;
        Ok(Rie {
            child,
            port,
            log_path,
            spawned,
        })
    }

    /// Where invocations go (`POST` an event).
    pub fn invoke_url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/2015-03-31/functions/function/invocations",
            self.port
        )
    }

    /// Everything the emulator and the function wrote so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// The process id of the function (the emulator's child), once it runs.
    pub fn function_pid(&self) -> Option<u32> {
        let children =
            std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", self.child.id()))
                .ok()?;
        if let Some(pid) = children.split_whitespace().next() {
            return pid.parse().ok();
        }
        // The emulator's Go runtime may have forked from another of its threads.
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        tasks.flatten().find_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .ok()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
    }
}

impl Drop for Rie {
    fn drop(&mut self) {
        if let Some(pid) = self.function_pid() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log_path);
    }
}

/// Whether this process runs as root (`/proc/self/status`: real uid 0).
fn is_root() -> bool {
    crate::proc_status("self", "Uid").is_some_and(|uid| uid == "0")
}

/// An API Gateway HTTP API (payload 2.0) event of `method path` with a JSON `body`, the API
/// key in `x-api-key` and `path_parameters` as the route's template fills them.
pub fn http_api_event(
    method: &str,
    route: &str,
    path: &str,
    path_parameters: Value,
    body: &Value,
    api_key: &str,
    request_id: &str,
) -> Value {
    json!({
        "version": "2.0",
        "routeKey": format!("{method} {route}"),
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json", "x-api-key": api_key, "host": "localhost"},
        "requestContext": {
            "accountId": "123456789012", "apiId": "local", "domainName": "localhost",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "integration-tests"},
            "requestId": request_id, "routeKey": format!("{method} {route}"),
            "stage": "$default", "time": "05/Dec/2026:00:00:00 +0000", "timeEpoch": 1796428800000i64
        },
        "pathParameters": path_parameters,
        "body": body.to_string(),
        "isBase64Encoded": false
    })
}

/// The event of a write of `entries` to `database.table` of the `default` cluster.
pub fn write_event(
    database: &str,
    table: &str,
    entries: Value,
    api_key: &str,
    request_id: &str,
) -> Value {
    http_api_event(
        "POST",
        "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records",
        &format!("/v1/clusters/default/databases/{database}/tables/{table}/records"),
        json!({"cluster": "default", "database": database, "table": table}),
        &json!({ "entries": entries }),
        api_key,
        request_id,
    )
}

/// The status and JSON body of an API Gateway answer the emulator returned (`statusCode`,
/// `body`); an error quoting the answer when it is not one (e.g. the emulator refused the
/// invocation).
pub fn http_answer(reply: &[u8]) -> Result<(u16, Value), String> {
    let text = String::from_utf8_lossy(reply);
    let reply: Value =
        serde_json::from_slice(reply).map_err(|e| format!("not JSON ({e}): {text}"))?;
    let status = reply["statusCode"]
        .as_u64()
        .ok_or_else(|| format!("no statusCode: {text}"))? as u16;
    let body = reply["body"]
        .as_str()
        .map(|b| serde_json::from_str(b).unwrap_or(Value::String(b.to_owned())))
        .unwrap_or(Value::Null);
    Ok((status, body))
}

/// The established TCP connections of process `pid` to each of `ports` on the loopback
/// (read from `/proc`: the process's socket inodes, matched in the kernel's TCP tables).
pub fn established_to(pid: u32, ports: &[u16]) -> Vec<(u16, usize)> {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter_map(|l| {
                    l.to_string_lossy()
                        .strip_prefix("socket:[")
                        .and_then(|s| s.strip_suffix(']'))
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut counts: BTreeMap<u16, usize> = ports.iter().map(|p| (*p, 0)).collect();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if f.len() < 10 || f[3] != "01" || !inodes.contains(f[9]) {
                continue;
            }
            let remote_port = f[2]
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if let Some(count) = remote_port.and_then(|p| counts.get_mut(&p)) {
                *count += 1;
            }
        }
    }
    counts.into_iter().collect()
}
