#!/usr/bin/env python3
"""API fuzzing of docs/openapi.yaml with schemathesis, against the running local stack, through
two targets:

- `standalone`: the all-in-one server (`fluss-gateway`), auth `trust`, Fluss plaintext listener;
- `watch`: the functions served by `cargo lambda watch` as `make run` serves them (auth
  `api-key`, Fluss SASL listener as the `admin` service account, an idempotency table in moto).

Before each target's run, fixtures are created through that target: a database with a log table,
a primary-key table, a partitioned primary-key table (two partitions) and a table that serves
prefix lookups, each with a few rows. The hooks (hooks.py) aim a share of the generated requests
at them and send valid write and lookup bodies for them. Config routes stay disabled (the
default): they would change the shared cluster's dynamic configuration.

Checks: no 5xx, response bodies, content types and headers as the spec declares them, and every
answer within the request deadline + 1 s. Figures are printed per target; the exit status is 1
when any is non-zero (or schemathesis itself failed).

Usage: run.py [--short] [--target standalone|watch|both] [--max-examples N] [--seed N]
Needs a running stack (make stack-up, or infra/local/with-stack.sh) and the debug binaries.
"""

import argparse
import collections
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CACHE = Path(os.environ.get("FLUSS_GW_CACHE", Path.home() / ".cache/fluss-lambda-gateway"))
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", CACHE / "target"))
BIN = TARGET_DIR / "debug"
FUZZ_VENV = Path(os.environ.get("FUZZ_VENV", CACHE / "fuzz-venv"))
PY_VENV = CACHE / "venv"
STACK_ENV = Path(os.environ.get("FLUSS_STACK_ENV", CACHE / "stack/stack.env"))
SPEC = ROOT / "docs/openapi.yaml"

# gateway.rest.request-timeout of the servers under test; an answer later than DEADLINE + 1 s
# is a hang. Shorter than the 30 s default so that a hang costs little run time.
DEADLINE_S = 5
HANG_AFTER_S = DEADLINE_S + 1
# Past this, the client gives up (a network error, counted as a hang too).
REQUEST_TIMEOUT_S = 3 * DEADLINE_S
WATCH_PORT = int(os.environ.get("FUZZ_WATCH_PORT", "9100"))
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance"


def log(msg):
    print(f"fuzz-api: {msg}", flush=True)


def read_env_file(path):
    env = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            env[k] = v.strip('"')
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, base, headers=None):
        self.base = base
        self.headers = headers or {}

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        for k, v in self.headers.items():
            req.add_header(k, v)
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode("utf-8", "replace")

    def must(self, method, path, body=None, ok=(200, 201, 204), timeout=30):
        status, out = self.call(method, path, body, timeout)
        if status not in ok:
            raise RuntimeError(f"{method} {path}: {status} {out}")
        return out


def wait_http(url, proc, seconds, what):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer {url} within {seconds} s")


def stop_group(proc):
    """Stops the process group `proc` leads (started with start_new_session)."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, 15)
    except ProcessLookupError:
        return
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait(5)


# --- fixtures -------------------------------------------------------------------------------

LOGS = {
    "columns": [
        {"name": "id", "type": "INTEGER"},
        {"name": "msg", "type": "STRING"},
        {"name": "amount", "type": "DOUBLE"},
        {"name": "ts", "type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3},
        {"name": "flag", "type": "BOOLEAN"},
        {"name": "raw", "type": "BYTES"},
        {"name": "day", "type": "DATE"},
    ],
}
USERS = {
    "columns": [
        {"name": "id", "type": "BIGINT"},
        {"name": "name", "type": "STRING"},
        {"name": "score", "type": "INTEGER"},
        {"name": "balance", "type": "DECIMAL", "precision": 10, "scale": 2},
    ],
    "primary_key": ["id"],
}
ORDERS = {
    "columns": [
        {"name": "order_id", "type": "BIGINT"},
        {"name": "dt", "type": "STRING"},
        {"name": "amount", "type": "DECIMAL", "precision": 12, "scale": 2},
        {"name": "note", "type": "STRING"},
    ],
    "primary_key": ["order_id", "dt"],
    "partitioned_by": ["dt"],
    "partitions": ["2026-01-01", "2026-01-02"],
}
KV = {
    "columns": [
        {"name": "tenant", "type": "STRING"},
        {"name": "id", "type": "INTEGER"},
        {"name": "v", "type": "STRING"},
    ],
    "primary_key": ["tenant", "id"],
    "bucket_keys": ["tenant"],
    "prefix_columns": ["tenant"],
}


def data_type(col):
    dt = {"type": col["type"]}
    for k in ("precision", "scale", "length"):
        if k in col:
            dt[k] = col[k]
    return dt


def create_fixtures(client, cluster="default"):
    db = f"fuzz_{uuid.uuid4().hex[:8]}"
    base = f"/v1/clusters/{cluster}/databases"
    client.must("POST", base, {"database": db})
    tables = {"logs": LOGS, "users": USERS, "orders": ORDERS, "kv": KV}
    fx_tables = {}
    for name, spec in tables.items():
        body = {
            "table_name": name,
            "columns": [{"name": c["name"], "data_type": data_type(c)} for c in spec["columns"]],
        }
        if spec.get("primary_key"):
            body["primary_key"] = spec["primary_key"]
        if spec.get("partitioned_by"):
            body["partitioned_by"] = spec["partitioned_by"]
            body["configs"] = {"table.auto-partition.enabled": "false"}
        if spec.get("bucket_keys"):
            body["distribution"] = {"bucket_count": 2, "bucket_keys": spec["bucket_keys"]}
        client.must("POST", f"{base}/{db}/tables", body)
        for p in spec.get("partitions", []):
            client.must("POST", f"{base}/{db}/tables/{name}/partitions", {"partition": {"dt": p}})
        cols = [dict(c) for c in spec["columns"]]
        if spec.get("partitions"):
            for c in cols:
                if c["name"] == "dt":
                    c["type"] = "PARTITION"
                    c["values"] = spec["partitions"] + ["2030-12-31"]
        fx_tables[name] = {
            "columns": cols,
            "primary_key": spec.get("primary_key", []),
            "partitions": spec.get("partitions", []),
            "prefix_columns": spec.get("prefix_columns"),
        }
    # A few rows, so that lookups find something.
    rows = {
        "logs": [{"id": i, "msg": f"m{i}", "amount": i * 1.5} for i in range(3)],
        "users": [{"id": i, "name": f"u{i}", "score": i, "balance": f"{i}.25"} for i in range(1, 4)],
        "orders": [{"order_id": i, "dt": "2026-01-01", "amount": "12.50"} for i in range(1, 4)],
        "kv": [{"tenant": "acme", "id": i, "v": f"v{i}"} for i in range(1, 4)],
    }
    for name, rs in rows.items():
        op = "upsert" if tables[name].get("primary_key") else "append"
        entries = [{"id": str(i), op: r} for i, r in enumerate(rs)]
        # A table created a moment ago may not have its bucket leaders yet: its rows come back
        # `unavailable` (or `timeout`), which a client retries; only those rows are sent again.
        deadline = time.monotonic() + 30
        while entries:
            out = client.must("POST", f"{base}/{db}/tables/{name}/records", {"entries": entries})
            failed = {f["id"]: f for f in out["failures"]}
            retry = all(f["error_code"] in ("unavailable", "timeout") for f in failed.values())
            if failed and (not retry or time.monotonic() > deadline):
                raise RuntimeError(f"seeding {name}: {out}")
            entries = [e for e in entries if e["id"] in failed]
            if entries:
                log(f"seeding {name}: {len(entries)} rows {sorted({f['error_code'] for f in failed.values()})}, retrying")
                time.sleep(1)
    fx_tables["users"]["known_keys"] = [{"id": 1}, {"id": "2"}]
    fx_tables["orders"]["known_keys"] = [{"order_id": 1, "dt": "2026-01-01"}]
    fx_tables["kv"]["known_keys"] = [{"tenant": "acme", "id": 1}]
    fx_tables["kv"]["known_prefixes"] = [{"tenant": "acme"}]
    return {
        "cluster": cluster,
        "database": db,
        "scratch_database": f"{db}_scratch",
        "scratch_table": "scratch",
        "scratch_partition": "2099-12-31",
        "tables": fx_tables,
    }


def drop_fixtures(client, fx):
    base = f"/v1/clusters/{fx['cluster']}/databases"
    for db in (fx["database"], fx["scratch_database"]):
        token = None
        names = []
        while True:
            q = "?max_results=1000" + (f"&page_token={urllib.parse.quote(token)}" if token else "")
            status, out = client.call("GET", f"{base}/{db}/tables{q}")
            if status != 200:
                break
            names += out["tables"]
            token = out.get("next_page_token")
            if not token:
                break
        for t in names:
            client.call("DELETE", f"{base}/{db}/tables/{urllib.parse.quote(t, safe='')}")
        client.call("DELETE", f"{base}/{db}")


# --- targets --------------------------------------------------------------------------------


def gateway_settings():
    return {"FLUSS_GATEWAY__REST__REQUEST_TIMEOUT": f"{DEADLINE_S}s"}


def start_standalone(stack, workdir):
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GATEWAY_LISTEN": f"127.0.0.1:{port}",
        "FLUSS_GATEWAY__CLUSTERS": stack["FLUSS_GATEWAY__CLUSTERS"],
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": stack["FLUSS_BOOTSTRAP_PLAINTEXT"],
        **gateway_settings(),
    }
    out = open(workdir / "standalone.log", "w")
    proc = subprocess.Popen([str(BIN / "fluss-gateway")], env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/health", proc, 60, "fluss-gateway")
    return proc, base, {}, "trust"


def aws_json(stack, target, body):
    req = urllib.request.Request(stack["AWS_ENDPOINT_URL"], data=json.dumps(body).encode(), method="POST")
    req.add_header("content-type", "application/x-amz-json-1.0")
    req.add_header("x-amz-target", target)
    req.add_header("authorization",
                   f"AWS4-HMAC-SHA256 Credential={stack['AWS_ACCESS_KEY_ID']}/20260101/{stack['AWS_REGION']}"
                   "/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def start_watch(stack, workdir):
    """The functions through `cargo lambda watch`, configured as infra/local/run.sh does."""
    keys_secret = "fluss-gateway/fuzz/keys"
    idem_table = "fluss-gateway-fuzz-idempotency"
    env = dict(os.environ)
    env.update(stack)
    key = subprocess.run(
        [str(BIN / "fluss-gateway-keys"), "--secret-id", keys_secret, "create", "--principal", "fuzz",
         "--scope", "ops=*"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    aws_json(stack, "DynamoDB_20120810.CreateTable", {
        "TableName": idem_table, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    if aws_json(stack, "DynamoDB_20120810.DescribeTable", {"TableName": idem_table}) != 200:
        raise RuntimeError("the idempotency table is missing in moto")
    run_env = {k: v for k, v in stack.items()
               if k != "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS" and not k.endswith("_API_KEY")}
    run_env.update({
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": stack["FLUSS_BOOTSTRAP_SASL"],
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT": "admin",
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ENV": "FLUSS_SASL_ADMIN_PASSWORD",
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__IDENTITY_MODE": "user",
        "FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "api-key",
        "FLUSS_GATEWAY__SECURITY__SECRET_ID": keys_secret,
        "FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE": idem_table,
        **gateway_settings(),
    })
    env_file = workdir / "watch.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in run_env.items()))
    env_file.chmod(0o600)
    penv = dict(os.environ)
    penv["PATH"] = f"{PY_VENV / 'bin'}:{penv.get('PATH', '')}"
    penv["CARGO_TARGET_DIR"] = str(TARGET_DIR)
    out = open(workdir / "cargo-lambda.log", "w")
    # --ignore-changes: another edit of the tree must not rebuild and restart the functions mid-run.
    proc = subprocess.Popen(
        ["cargo", "lambda", "watch", "--ignore-changes", "--disable-cors", "-A", "127.0.0.1",
         "-P", str(WATCH_PORT), "--env-file", str(env_file)],
        cwd=ROOT, env=penv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{WATCH_PORT}"
    headers = {"x-api-key": key}
    # The first invocation of each function runs `cargo run` (a build if the tree changed since
    # the last one): warm every function up before timing anything.
    wait_http(base + "/health", proc, 900, "cargo lambda watch")
    c = Client(base, headers)
    for method, path, body in [
        ("POST", "/v1/clusters/default/databases/warmup/tables/warmup/records", {"entries": [{"id": "a", "append": {}}]}),
        ("POST", "/v1/clusters/default/databases/warmup/tables/warmup/records/lookup", {"keys": [{"id": 1}]}),
        ("GET", "/v1/clusters/default/configs", None),
    ]:
        c.call(method, path, body, timeout=900)
    return proc, base, headers, "api-key"


# --- one schemathesis run ---------------------------------------------------------------------


def run_schemathesis(name, base, headers, fx, args, workdir):
    tally = workdir / f"{name}.tally.ndjson"
    tally.unlink(missing_ok=True)
    env = dict(os.environ)
    env.update({
        "SCHEMATHESIS_HOOKS": "hooks",
        "PYTHONPATH": f"{HERE}:{env.get('PYTHONPATH', '')}",
        "FUZZ_FIXTURES": json.dumps(fx),
        "FUZZ_TALLY": str(tally),
        "FUZZ_SEED": str(args.seed),
        "FUZZ_TARGET": name,
        "FUZZ_SLOW_AFTER": str(HANG_AFTER_S),
    })
    cmd = [
        str(FUZZ_VENV / "bin/st"), "run", str(SPEC), "--url", base,
        "--checks", CHECKS,
        "--max-response-time", str(HANG_AFTER_S),
        "--request-timeout", str(REQUEST_TIMEOUT_S),
        "--max-examples", str(args.max_examples),
        "--seed", str(args.seed),
        # The coverage phase (every boundary and negative value of every parameter) costs
        # minutes of CPU on two cores whatever --max-examples says: long runs only.
        "--phases", "examples,fuzzing,stateful" if args.short else "examples,coverage,fuzzing,stateful",
        "--workers", str(args.workers if name == "standalone" else 1),
        "--generation-database", "none",
        "--continue-on-failure",
        "--suppress-health-check", "all",
        "--no-color",
        "--warnings", "off",
    ]
    if args.short:
        # Each call of the OTLP tables route creates seven auto-partitioned tables (seconds of
        # the coordinator's time each): the CI size leaves it to the long run and to
        # tests/tests/stack/otlp.rs.
        cmd += ["--exclude-path-regex", "/otlp/tables$"]
    if args.max_time:
        cmd += ["--max-time", str(args.max_time)]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    log(f"[{name}] {' '.join(shlex.quote(c) for c in cmd if not c.startswith('x-api-key'))}")
    started = time.monotonic()
    out_path = workdir / f"{name}.schemathesis.txt"
    with open(out_path, "w") as out:
        rc = subprocess.run(cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    took = time.monotonic() - started
    return rc, took, tally, out_path


def curl_of(req, redact):
    parts = ["curl", "-sS", "-i", "-X", req["method"]]
    for k, v in req["headers"].items():
        if k.lower() == "x-api-key" and redact:
            v = "$FUZZ_API_KEY"
            parts += ["-H", f'"{k}: {v}"']
            continue
        parts += ["-H", shlex.quote(f"{k}: {v}")]
    if req.get("body_b64"):
        import base64
        raw = base64.b64decode(req["body_b64"])
        try:
            text = raw.decode("utf-8")
            parts += ["--data-binary", shlex.quote(text)]
        except UnicodeDecodeError:
            parts = ["printf", "%s", shlex.quote(req["body_b64"]), "|", "base64", "-d", "|"] + parts + ["--data-binary", "@-"]
    parts.append(shlex.quote(req["url"]))
    return " ".join(parts)


def summarize(name, auth, rc, took, tally, out_path):
    events = [json.loads(line) for line in tally.read_text().splitlines()] if tally.exists() else []
    responses = [e for e in events if e["kind"] == "response"]
    net = [e for e in events if e["kind"] == "network_error"]
    viol = [e for e in events if e["kind"] == "violation"]
    # 501 `unsupported` is declared and by design (a lookup on a log table): counted apart.
    unsupported = [e for e in responses if e["status"] == 501 and '"unsupported"' in (e.get("body") or "")]
    # Under `cargo lambda watch`: answers the emulator gave without invoking a function.
    emulator = [e for e in responses if e.get("emulator")]
    fivexx = [e for e in responses if e["status"] >= 500 and e not in unsupported and not e.get("emulator")]
    slow = [e for e in responses if e["elapsed"] > HANG_AFTER_S]
    timeouts = [e for e in net if (e.get("waited") or 0) >= REQUEST_TIMEOUT_S - 0.5]
    statuses = collections.Counter(e["status"] for e in responses)
    fixture = sum(1 for e in responses if e["fixture"])
    valid = sum(1 for e in responses if e["valid_body"])
    data_2xx = sum(1 for e in responses if e["fixture"] and 200 <= e["status"] < 300 and "/records" in e["op"])
    figures = {
        "target": name,
        "auth": auth,
        "requests": len(responses) + len(net),
        "5xx": len(fivexx),
        "emulator_answers": len(emulator),
        "schema_violations": len(viol),
        "hangs": len(slow) + len(timeouts),
        "network_errors": len(net),
        "seconds": round(took, 1),
    }
    print()
    print(f"== {name} (auth {auth}): {figures['requests']} requests, {figures['5xx']} 5xx, "
          f"{figures['schema_violations']} schema violations, {figures['hangs']} hangs "
          f"(answers > {HANG_AFTER_S} s or none within {REQUEST_TIMEOUT_S} s), "
          f"{len(net)} network errors, {took:.0f} s; schemathesis exit {rc}")
    print(f"   declared 501 unsupported (lookups on the log table): {len(unsupported)}")
    if name == "watch":
        em = collections.Counter(e["status"] for e in emulator)
        print(f"   the emulator's own answers (no x-request-id; not the gateway's, see docs/deploy.md): {dict(em)}")
    print(f"   statuses: {dict(sorted(statuses.items()))}")
    print(f"   aimed at fixtures: {fixture}, valid data bodies: {valid}, 2xx on the data routes: {data_2xx}; "
          f"slowest answer {max((e['elapsed'] for e in responses), default=0):.2f} s")
    redact = name == "watch"
    shown = 0
    for label, group in (("emulator", emulator[:3]), ("5xx", fivexx), ("slow", slow), ("no answer", net), ("violation", viol)):
        seen = set()
        for e in group:
            key = (e["op"], e.get("status"), json.dumps([v["check"] for v in e.get("violations", [])]))
            if key in seen:
                continue
            seen.add(key)
            shown += 1
            if shown > 20:
                break
            detail = ""
            if label == "violation":
                detail = "; ".join(f"{v['check']}: {v['message'].splitlines()[0]}" for v in e["violations"])
            elif label in ("5xx", "slow", "emulator"):
                detail = f"{e['status']} in {e['elapsed']:.2f} s: {e.get('body')}"
            print(f"   {label}: {e['op']} {detail}")
            print(f"     {curl_of(e['request'], redact)}")
    print(f"   schemathesis output: {out_path}")
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="CI size: 20 examples per operation")
    ap.add_argument("--target", choices=["standalone", "watch", "both"], default="both")
    ap.add_argument("--max-examples", type=int)
    ap.add_argument("--max-time", type=int, help="time budget of each schemathesis run (s)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", "0")) or int(time.time()) % 100000)
    ap.add_argument("--workers", type=int, default=2, help="schemathesis workers (standalone; watch uses 1)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if args.max_examples is None:
        args.max_examples = 20 if args.short else 300
    if not STACK_ENV.exists():
        sys.exit(f"fuzz-api: no running stack ({STACK_ENV} missing): make stack-up, or run under infra/local/with-stack.sh")
    stack = read_env_file(STACK_ENV)
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-api-", dir=STACK_ENV.parent))
    log(f"seed {args.seed}, {args.max_examples} examples per operation, deadline {DEADLINE_S} s, "
        f"hang > {HANG_AFTER_S} s; work directory {workdir}")
    targets = ["standalone", "watch"] if args.target == "both" else [args.target]
    results = []
    failed = False
    for name in targets:
        proc = None
        fx = None
        client = None
        try:
            proc, base, headers, auth = (start_standalone if name == "standalone" else start_watch)(stack, workdir)
            client = Client(base, headers)
            fx = create_fixtures(client)
            log(f"[{name}] serving on {base}; fixtures in database {fx['database']}")
            rc, took, tally, out_path = run_schemathesis(name, base, headers, fx, args, workdir)
            fig = summarize(name, auth, rc, took, tally, out_path)
            results.append(fig)
            if rc != 0 or fig["5xx"] or fig["schema_violations"] or fig["hangs"]:
                failed = True
        except Exception as exc:  # noqa: BLE001 - report and go on with the next target
            log(f"[{name}] could not run: {exc}")
            failed = True
        finally:
            if client is not None and fx is not None:
                try:
                    drop_fixtures(client, fx)
                except Exception as exc:  # noqa: BLE001
                    log(f"[{name}] fixture cleanup failed: {exc}")
            stop_group(proc)
    print()
    print("fuzz-api figures:")
    for f in results:
        print("  " + json.dumps(f))
    if not args.keep and not failed:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
