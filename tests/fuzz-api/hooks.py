"""Schemathesis hooks of the API fuzz run (tests/fuzz-api/run.py loads them via SCHEMATHESIS_HOOKS).

- `before_call` points a share of the generated requests at the fixtures run.py created (the
  cluster, database, tables and partitions), so the data routes reach real tables, and replaces a
  share of the write, lookup, prefix-lookup and read bodies by valid ones for the table in the
  path (a read's long poll is kept under 300 ms).
  It runs in every phase (examples, coverage, fuzzing, stateful); draws come from a seeded RNG.
  Destructive operations (DELETE, PATCH) never target the fixtures: they get scratch names that
  the run's own create requests may have made.
- `after_call`, `after_network_error` and the `fuzz_tally` check count, per request: the status,
  the answer time, network errors (no answer within --request-timeout) and the schema, content
  type and header violations, independently of schemathesis' de-duplication. Each event is one
  JSON line appended to $FUZZ_TALLY; run.py sums them.
"""

import base64
import datetime
import json
import os
import random
import threading
import time
from decimal import Decimal

import schemathesis

FX = json.loads(os.environ.get("FUZZ_FIXTURES", "{}"))
SLOW_AFTER = float(os.environ.get("FUZZ_SLOW_AFTER", "6"))
TALLY = os.environ.get("FUZZ_TALLY")
RNG = random.Random(int(os.environ.get("FUZZ_SEED", "0")))
# Share of requests sent to the fixtures, and of their bodies replaced by valid ones.
REAL_SHARE = float(os.environ.get("FUZZ_REAL_SHARE", "0.6"))
VALID_BODY_SHARE = float(os.environ.get("FUZZ_VALID_BODY_SHARE", "0.5"))
_lock = threading.Lock()
_sent = {}  # id(case) -> (monotonic start, mapped)


def _emit(event):
    if not TALLY:
        return
    line = json.dumps(event, default=str)
    with _lock, open(TALLY, "a") as f:
        f.write(line + "\n")


# --- valid values for the fixture columns ---------------------------------------------------


def _text(rng, n=12):
    alphabet = "abcXYZ09 _-é€😀\\\"'\t"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


def _value(rng, col):
    t = col["type"]
    if t == "BOOLEAN":
        return rng.choice([True, False])
    if t == "INTEGER":
        v = rng.choice([0, 1, -1, 2**31 - 1, -(2**31), rng.randint(-1000, 1000)])
        return str(v) if rng.random() < 0.2 else v
    if t == "BIGINT":
        v = rng.choice([0, 2**63 - 1, -(2**63), rng.randint(-(10**12), 10**12)])
        return str(v) if rng.random() < 0.5 else v
    if t == "DOUBLE":
        return rng.choice([0.0, -1.5, 1e308, 5e-324, rng.uniform(-1e6, 1e6), "NaN", "Infinity", "-Infinity"])
    if t == "DECIMAL":
        p, s = col["precision"], col["scale"]
        digits = rng.randint(0, p - s)
        whole = rng.randint(0, 10**digits - 1) if digits else 0
        frac = rng.randint(0, 10**s - 1)
        v = Decimal(f"{rng.choice(['', '-'])}{whole}.{frac:0{s}d}")
        return str(v) if rng.random() < 0.7 else float(v)
    if t == "STRING":
        return _text(rng)
    if t == "BYTES":
        return base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randint(0, 16)))).decode()
    if t == "DATE":
        return (datetime.date(2026, 1, 1) + datetime.timedelta(days=rng.randint(-3000, 3000))).isoformat()
    if t == "TIMESTAMP_WITHOUT_TIME_ZONE":
        if rng.random() < 0.3:
            return rng.randint(0, 4_000_000_000_000)
        ts = datetime.datetime(2026, 1, 1) + datetime.timedelta(milliseconds=rng.randint(-10**11, 10**11))
        return ts.isoformat(timespec="milliseconds")
    if t == "PARTITION":
        return rng.choice(col["values"])
    raise ValueError(t)


def _row(rng, table, only=None, all_columns=False):
    row = {}
    for col in table["columns"]:
        name = col["name"]
        if only is not None and name not in only:
            continue
        key = name in table.get("primary_key", []) or not col.get("nullable", True)
        if not key and not all_columns and rng.random() < 0.2:
            continue  # a nullable column may be omitted
        row[name] = None if (not key and rng.random() < 0.1) else _value(rng, col)
    return row


def _write_body(rng, table):
    pk = table.get("primary_key", [])
    entries = []
    for i in range(rng.randint(1, 8)):
        if not pk:
            entries.append({"id": f"e{i}", "append": _row(rng, table)})
        elif rng.random() < 0.25:
            entries.append({"id": f"e{i}", "delete": _row(rng, table, only=pk)})
        else:
            entries.append({"id": f"e{i}", "upsert": _row(rng, table)})
    body = {"entries": entries}
    if pk and rng.random() < 0.2:
        cols = [c["name"] for c in table["columns"]]
        body["partial_update_columns"] = pk + [c for c in cols if c not in pk and rng.random() < 0.5]
        for e in entries:
            if "upsert" in e:
                e["upsert"] = {k: v for k, v in e["upsert"].items() if k in body["partial_update_columns"]}
                for k in pk:
                    e["upsert"].setdefault(k, _value(rng, next(c for c in table["columns"] if c["name"] == k)))
    return body


def _lookup_body(rng, table):
    pk = table.get("primary_key") or ["id"]
    keys = [_row(rng, table, only=pk, all_columns=True) for _ in range(rng.randint(1, 6))]
    if table.get("known_keys") and rng.random() < 0.5:
        keys.append(rng.choice(table["known_keys"]))
    return {"keys": keys}


def _prefix_body(rng, table):
    cols = table.get("prefix_columns") or table.get("primary_key") or ["id"]
    prefixes = [_row(rng, table, only=cols, all_columns=True) for _ in range(rng.randint(1, 4))]
    if table.get("known_prefixes") and rng.random() < 0.6:
        prefixes.append(rng.choice(table["known_prefixes"]))
    body = {"prefix_columns": cols, "prefixes": prefixes}
    if rng.random() < 0.5:
        body["max_rows_per_prefix"] = rng.choice([1, 2, 10, 1000])
    return body


def _read_body(rng, table):
    body = {"from": rng.choice(["earliest", "latest", {"timestamp": 0}]),
            "max_records": rng.choice([1, 2, 100])}
    if table.get("partitions"):
        body["partition"] = {"dt": rng.choice(table["partitions"] + ["2030-12-31"])}
    return body


@schemathesis.serializer("application/x-ndjson")
def ndjson_serializer(ctx, value):
    """The write route's NDJSON body: a generated string is sent as is (any other generated value
    as JSON lines, a list one line per element)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(v) + "\n" for v in items).encode()


def _is_unsupported_501(response):
    if response is None or response.status_code != 501:
        return False
    try:
        return json.loads(response.content)["error"]["code"] == "unsupported"
    except (ValueError, KeyError, TypeError):
        return False


def is_emulator_answer(response):
    """Under `cargo lambda watch`, an answer without `x-request-id` never reached our function:
    the emulator gave it (its 500 for a body that is not UTF-8 under a JSON or text content type,
    its 404 for /lambda-url/<unknown function>/...). API Gateway passes such bodies on (base64)."""
    return os.environ.get("FUZZ_TARGET") == "watch" and "x-request-id" not in {
        k.lower() for k in response.headers}


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """501 `unsupported` is a declared answer, not a server fault (a lookup on a log table).
    The emulator's own answers are counted apart by run.py, not failed on."""
    if response is None:
        return True
    if getattr(failure, "code", "") == "ST101" and _is_unsupported_501(response):
        return False
    return not is_emulator_answer(response)


# --- mapping generated requests to the fixtures -----------------------------------------------


def _map_to_fixtures(case):
    if not FX:
        return False
    params = case.path_parameters
    if not params or RNG.random() >= REAL_SHARE:
        return False
    method = case.method.upper()
    path = case.path
    tables = FX["tables"]
    destructive = method in ("DELETE", "PATCH")
    params["cluster"] = FX["cluster"] if RNG.random() < 0.95 else "nope"
    if "database" in params:
        if path.endswith("{database}") and destructive:
            # Dropping a database: the fixture one is not empty (409), or a scratch one.
            params["database"] = RNG.choice([FX["database"], FX["scratch_database"]])
        else:
            params["database"] = FX["database"] if RNG.random() < 0.9 else FX["scratch_database"]
    if "table" in params:
        if path.endswith("{table}") and destructive:
            params["table"] = FX["scratch_table"]
        elif path.endswith("/partitions") or "{partition}" in path:
            params["table"] = RNG.choice([t for t, d in tables.items() if d.get("partitions")] + [RNG.choice(list(tables))])
        elif path.endswith("/prefix-lookup"):
            params["table"] = RNG.choice([t for t, d in tables.items() if d.get("prefix_columns")] * 3 + list(tables))
        else:
            params["table"] = RNG.choice(list(tables) + [FX["scratch_table"]])
    if "partition" in params:
        params["partition"] = FX["scratch_partition"] if destructive else RNG.choice(
            [p for d in tables.values() for p in d.get("partitions", [])] + [FX["scratch_partition"]])
    return True


def _valid_body(case):
    name = case.path_parameters.get("table")
    table = FX.get("tables", {}).get(name) if isinstance(name, str) else None
    if table is None or RNG.random() >= VALID_BODY_SHARE:
        return False
    path = case.path
    if path.endswith("/records"):
        body = _write_body(RNG, table)
        if RNG.random() < 0.3:
            # The NDJSON form: bare rows (appended or upserted) or entries, one per line.
            lines = []
            for e in body["entries"]:
                if "delete" in e or RNG.random() < 0.3:
                    lines.append(json.dumps(e))
                else:
                    lines.append(json.dumps(e.get("append", e.get("upsert"))))
            case.body = "\n".join(lines) + RNG.choice(["", "\n", "\n\n"])
            case.media_type = "application/x-ndjson"
            _drop_body_headers(case)
            return True
    elif path.endswith("/records/lookup"):
        body = _lookup_body(RNG, table)
    elif path.endswith("/records/prefix-lookup"):
        body = _prefix_body(RNG, table)
    elif path.endswith("/records/read"):
        body = _read_body(RNG, table)
    else:
        return False
    case.body = body
    case.media_type = "application/json"
    _drop_body_headers(case)
    return True


def _drop_body_headers(case):
    # A generated Content-Type or Content-Encoding header would contradict the new body.
    for h in list(case.headers or {}):
        if h.lower() in ("content-type", "content-encoding", "content-length"):
            del case.headers[h]


def _scratch_create(case):
    """Create requests sometimes name the scratch database, table or partition, so that the
    drops mapped above sometimes find something to drop (a create -> drop chain)."""
    body = case.body
    if not FX or not isinstance(body, dict) or RNG.random() >= 0.3:
        return
    path = case.path
    if path.endswith("/databases") and "database" in body:
        body["database"] = FX["scratch_database"]
    elif path.endswith("/tables") and "table_name" in body:
        body["table_name"] = FX["scratch_table"]
    elif path.endswith("/partitions") and "partition" in body:
        body["partition"] = {"dt": FX["scratch_partition"]}


def _short_polls(case):
    """A log read waits up to `wait_ms` for a record (a long poll, up to the 5 s deadline here):
    kept under 300 ms, so that the CI-sized run stays short; the wait itself is tested apart."""
    body = case.body
    if case.path.endswith("/records/read") and isinstance(body, dict):
        wait = body.get("wait_ms")
        if isinstance(wait, int) and not isinstance(wait, bool) and 300 < wait <= 20000:
            body["wait_ms"] = wait % 300


@schemathesis.hook
def before_call(context, case, kwargs):
    _short_polls(case)
    mapped = _map_to_fixtures(case)
    valid = _valid_body(case) if mapped else False
    if mapped and case.method.upper() == "POST":
        _scratch_create(case)
    with _lock:
        _sent[id(case)] = (time.monotonic(), mapped, valid)


def _label(case):
    return f"{case.method.upper()} {case.path}"


@schemathesis.hook
def after_call(context, case, response):
    with _lock:
        start = _sent.pop(id(case), (None, False, False))
    _emit({
        "kind": "response",
        "op": _label(case),
        "status": response.status_code,
        "elapsed": response.elapsed,
        "fixture": start[1],
        "valid_body": start[2],
        "emulator": is_emulator_answer(response),
        "request": _request_record(response.request),
        "body": response.content[:600].decode("utf-8", "replace") if response.status_code >= 500 or response.elapsed > SLOW_AFTER else None,
    })


@schemathesis.hook
def after_network_error(context, case, request):
    with _lock:
        start = _sent.pop(id(case), (None, False, False))
    waited = time.monotonic() - start[0] if start[0] else None
    _emit({"kind": "network_error", "op": _label(case), "waited": waited, "request": _request_record(request)})


def _request_record(req):
    body = req.body
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogateescape")
    headers = {k: v for k, v in req.headers.items() if k.lower() not in ("user-agent", "accept-encoding", "connection")}
    return {
        "method": req.method,
        "url": req.url,
        "headers": {k: (v.decode("latin-1") if isinstance(v, bytes) else v) for k, v in headers.items()},
        "body_b64": base64.b64encode(body).decode() if body else None,
    }


@schemathesis.check
def fuzz_tally(ctx, response, case):
    """Counts (never fails): schema, content-type and header violations of every response."""
    from schemathesis.specs.openapi import checks as oc

    found = []
    for name in ("response_schema_conformance", "content_type_conformance", "response_headers_conformance"):
        try:
            getattr(oc, name)(ctx, response, case)
        except Exception as exc:  # noqa: BLE001 - any failure is a violation
            found.append({"check": name, "message": str(exc)[:800]})
    if found and not is_emulator_answer(response):
        _emit({
            "kind": "violation",
            "op": _label(case),
            "status": response.status_code,
            "violations": found,
            "request": _request_record(response.request),
            "body": response.content[:600].decode("utf-8", "replace"),
        })
    return None
