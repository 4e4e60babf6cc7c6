"""pyarrow and polars (from PyPI) write Arrow IPC streams through the gateway's write route.

Usage: arrow_write.py BASE_URL DATABASE SUFFIX (tables are named `<name>_<SUFFIX>`)

A data team's journey, every step checked against what Fluss gives back:
1. pyarrow: a log table of every supported column type, written as Arrow in the encodings
   libraries produce (int64 for INT, large strings and lists, string views, dictionaries, a
   zoned timestamp for TIMESTAMP_LTZ, nanoseconds), in two requests (LZ4 buffers, then ZSTD
   buffers inside a gzip body), read back through the read route (Arrow): equal, value by value.
2. polars: a DataFrame into a table partitioned by a string column, read back: equal.
3. pyarrow on a primary-key table: upserts, a partial update (only some columns sent) and
   deletes (`_delete`), checked by lookups.
4. Hostile bodies (cut, garbage, ten million declared rows, a compression bomb, a batch whose
   dictionary was never sent, a schema that lies about its buffers): each 4xx, nothing written,
   and the table still takes a good write.
Prints one JSON summary line; exits 1 on the first difference.
"""

import datetime
import decimal
import gzip
import io
import json
import sys
import urllib.error
import urllib.request

import polars as pl
import pyarrow as pa
import pyarrow.ipc

ARROW = "application/vnd.apache.arrow.stream"


def request(
    url, body, content_type="application/json", accept="application/json", encoding=None,
    minimal=False,
):
    headers = {"Content-Type": content_type, "Accept": accept}
    if minimal:
        headers["Prefer"] = "return=minimal"
    if encoding:
        headers["Content-Encoding"] = encoding
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
    except urllib.error.URLError as e:
        raise SystemExit(f"POST {url} ({len(data)} bytes): no answer: {e}") from e


class Journey:
    def __init__(self, base, database, suffix):
        self.base = base
        self.database = database
        self.suffix = suffix
        self.summary = {}

    def url(self, table, suffix=""):
        return f"{self.base}/v1/clusters/default/databases/{self.database}/tables/{table}{suffix}"

    def create(self, table, columns, primary_key=None, partitions=None):
        table = f"{table}_{self.suffix}"
        spec = {"table_name": table, "columns": columns, "distribution": {"bucket_count": 2}}
        if primary_key:
            spec["primary_key"] = primary_key
        if partitions:
            spec["partitioned_by"] = partitions
        status, _, body = request(
            f"{self.base}/v1/clusters/default/databases/{self.database}/tables", spec
        )
        if status != 201:
            raise SystemExit(f"create {table}: {status} {body[:300]!r}")
        return table

    def write(self, table, stream, encoding=None, want=200, minimal=False):
        body = gzip.compress(stream) if encoding == "gzip" else stream
        status, headers, answer = request(
            self.url(table, "/records"), body, ARROW, encoding=encoding, minimal=minimal
        )
        if status != want:
            raise SystemExit(f"write {table}: {status} (wanted {want}) {answer[:500]!r}")
        if minimal and headers.get("preference-applied") != "return=minimal":
            raise SystemExit(f"write {table}: Prefer: return=minimal not applied: {headers}")
        return json.loads(answer)

    def read_all(self, table, partitions=(None,)):
        tables = []
        for partition in partitions:
            tables += self.read_partition(table, partition)
        return pa.concat_tables(tables).sort_by("id") if tables else None

    def read_partition(self, table, partition):
        tables, req = [], {"from": "earliest", "max_records": 10000}
        if partition:
            req["partition"] = partition
        while True:
            status, headers, body = request(self.url(table, "/records/read"), req, accept=ARROW)
            if status != 200:
                raise SystemExit(f"read {table}: {status} {body[:300]!r}")
            got = pa.ipc.open_stream(body).read_all()
            if got.num_rows == 0:
                break
            tables.append(got)
            req = {"cursor": headers["fluss-next-cursor"], "max_records": 10000}
        return tables


def stream(table, compression=None, chunk=25):
    """`table` as an Arrow IPC stream of batches of `chunk` rows (`None`: one batch)."""
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        for batch in table.to_batches(max_chunksize=chunk):
            writer.write_batch(batch)
    return sink.getvalue()


def comparable(column):
    """Values to compare: timestamps as integers of their unit (no nanosecond lost in Python)."""
    if pa.types.is_time32(column.type):
        return column.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(column.type) or pa.types.is_time64(column.type):
        return column.cast(pa.int64()).to_pylist()
    return column.to_pylist()


def every_type(journey):
    table = journey.create(
        "arrow_types",
        [
            {"name": "id", "data_type": {"type": "INT"}, "nullable": False},
            {"name": "big", "data_type": {"type": "BIGINT"}},
            {"name": "small", "data_type": {"type": "SMALLINT"}},
            {"name": "tiny", "data_type": {"type": "TINYINT"}},
            {"name": "name", "data_type": {"type": "STRING"}},
            {"name": "code", "data_type": {"type": "CHAR", "length": 4}},
            {"name": "score", "data_type": {"type": "DOUBLE"}},
            {"name": "ratio", "data_type": {"type": "FLOAT"}},
            {"name": "ok", "data_type": {"type": "BOOLEAN"}},
            {"name": "price", "data_type": {"type": "DECIMAL", "precision": 10, "scale": 2}},
            {"name": "day", "data_type": {"type": "DATE"}},
            {"name": "clock", "data_type": {"type": "TIME", "precision": 3}},
            {"name": "at", "data_type": {"type": "TIMESTAMP", "precision": 9}},
            {"name": "instant", "data_type": {"type": "TIMESTAMP_LTZ", "precision": 6}},
            {"name": "blob", "data_type": {"type": "BYTES"}},
            {"name": "fixed", "data_type": {"type": "BINARY", "length": 3}},
            {"name": "tags", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}},
            {
                "name": "attrs",
                "data_type": {
                    "type": "MAP",
                    "key_type": {"type": "STRING", "nullable": False},
                    "value_type": {"type": "INT"},
                },
            },
            {
                "name": "point",
                "data_type": {
                    "type": "ROW",
                    "fields": [
                        {"name": "x", "field_type": {"type": "INT"}},
                        {"name": "y", "field_type": {"type": "DOUBLE"}},
                    ],
                },
            },
            {"name": "kind", "data_type": {"type": "STRING"}},
        ],
    )
    n = 60
    ids = list(range(n))
    base = datetime.datetime(2026, 12, 7, 1, 2, 3)
    null = lambda i, every: i % every == 3  # noqa: E731
    values = {
        "id": ids,
        "big": [None if null(i, 7) else 9007199254740993 + i for i in ids],
        "small": [None if null(i, 11) else i - 30 for i in ids],
        "tiny": [None if null(i, 13) else (i % 100) - 50 for i in ids],
        "name": [None if null(i, 5) else f"name-{i}-ünï" for i in ids],
        "code": [None if null(i, 6) else f"c{i:03d}"[:4] for i in ids],
        "score": [i * 1.25 - 7.5 for i in ids],
        "ratio": [None if null(i, 8) else i / 4 for i in ids],
        "ok": [None if null(i, 9) else i % 2 == 0 for i in ids],
        "price": [None if null(i, 10) else decimal.Decimal(f"{i}.{i % 100:02d}") for i in ids],
        "day": [datetime.date(2026, 12, 7) + datetime.timedelta(days=i) for i in ids],
        "clock": [datetime.time(1, 2, 3, (i % 1000) * 1000) for i in ids],
        # Nanoseconds, as integers: Python's datetime stops at microseconds.
        "at": [None if null(i, 12) else 1_796_600_000_123_456_789 + i * 1_000_000_007 for i in ids],
        "instant": [base + datetime.timedelta(seconds=i, microseconds=i) for i in ids],
        "blob": [None if null(i, 4) else bytes([i, 0, 255]) * (i % 3) for i in ids],
        "fixed": [None if null(i, 14) else bytes([i, i, 0]) for i in ids],
        "tags": [None if null(i, 15) else [f"t{j}" for j in range(i % 4)] for i in ids],
        "attrs": [None if null(i, 16) else [(f"k{j}", j * i) for j in range(i % 3)] for i in ids],
        "point": [None if null(i, 17) else {"x": i, "y": i / 2} for i in ids],
        "kind": [["red", "green", None][i % 3] for i in ids],
    }
    # The encodings libraries produce, not the table's own.
    sent = pa.table(
        {
            "id": pa.array(values["id"], pa.int64()),
            "big": pa.array(values["big"], pa.int64()),
            "small": pa.array(values["small"], pa.int8()),
            "tiny": pa.array(values["tiny"], pa.int64()),
            "name": pa.array(values["name"], pa.large_string()),
            "code": pa.array(values["code"], pa.string_view()),
            "score": pa.array(values["score"], pa.float32()),
            "ratio": pa.array(values["ratio"], pa.float32()),
            "ok": pa.array(values["ok"], pa.bool_()),
            "price": pa.array(values["price"], pa.decimal128(12, 2)),
            "day": pa.array(values["day"], pa.date32()),
            "clock": pa.array(values["clock"], pa.time64("us")),
            "at": pa.array(values["at"], pa.int64()).cast(pa.timestamp("ns")),
            "instant": pa.array(values["instant"], pa.timestamp("us", tz="UTC")).cast(
                pa.timestamp("ns", tz="Europe/Berlin")
            ),
            "blob": pa.array(values["blob"], pa.large_binary()),
            "fixed": pa.array(values["fixed"], pa.binary(3)),
            "tags": pa.array(values["tags"], pa.large_list(pa.string())),
            "attrs": pa.array(values["attrs"], pa.map_(pa.string(), pa.int32())),
            "point": pa.array(values["point"], pa.struct([("x", pa.int32()), ("y", pa.float64())])),
            "kind": pa.array(values["kind"]).dictionary_encode(),
        }
    )
    first = journey.write(table, stream(sent.slice(0, 30), "lz4"))
    second = journey.write(table, stream(sent.slice(30), "zstd"), encoding="gzip")
    if first["success_count"] != 30 or second["success_count"] != 30:
        raise SystemExit(f"not every row acknowledged: {first} {second}")
    if [s["id"] for s in first["successes"]][:3] != ["0", "1", "2"]:
        raise SystemExit(f"entry ids are not stream positions: {first['successes'][:3]}")
    got = journey.read_all(table)
    if got is None or got.num_rows != n:
        raise SystemExit(f"read back {0 if got is None else got.num_rows} rows of {n}")
    epoch = datetime.datetime(1970, 1, 1)
    expected = {
        **values,
        "instant": [(t - epoch) // datetime.timedelta(microseconds=1) for t in values["instant"]],
        "clock": [
            (t.hour * 3600 + t.minute * 60 + t.second) * 1000 + t.microsecond // 1000
            for t in values["clock"]
        ],
    }
    for column, want in expected.items():
        have = comparable(got.column(column))
        if have != want:
            diff = next(i for i, (h, w) in enumerate(zip(have, want)) if h != w)
            raise SystemExit(
                f"column {column} differs at id {diff}: got {have[diff]!r}, sent {want[diff]!r} "
                f"(read type {got.column(column).type})"
            )
    journey.summary["every_type"] = {"rows": n, "columns": len(values), "equal": True}
    return table


def with_polars(journey):
    table = journey.create(
        "arrow_polars",
        [
            {"name": "id", "data_type": {"type": "INT"}, "nullable": False},
            {"name": "region", "data_type": {"type": "STRING"}, "nullable": False},
            {"name": "v", "data_type": {"type": "DOUBLE"}},
            {"name": "at", "data_type": {"type": "TIMESTAMP", "precision": 9}},
            {"name": "labels", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}},
        ],
        partitions=["region"],
    )
    for region in ("eu", "us"):
        status, _, body = request(
            journey.url(table, "/partitions"), {"partition": {"region": region}}
        )
        if status not in (200, 201):
            raise SystemExit(f"partition {region}: {status} {body[:300]!r}")
    n = 200
    frame = pl.DataFrame(
        {
            "id": list(range(n)),
            "region": ["eu" if i % 2 else "us" for i in range(n)],
            "v": [None if i % 10 == 0 else i * 0.5 for i in range(n)],
            "at": pl.Series(
                [1_796_600_000_000_000_001 + i * 999 for i in range(n)], dtype=pl.Int64
            ).cast(pl.Datetime("ns")),
            "labels": [[f"l{j}" for j in range(i % 3)] for i in range(n)],
        }
    )
    sink = io.BytesIO()
    frame.write_ipc_stream(sink, compression="zstd")
    answer = journey.write(table, sink.getvalue(), minimal=True)
    if answer["success_count"] != n or answer["successes"] or answer["error_count"]:
        raise SystemExit(f"polars (minimal answer): {answer}")
    got = journey.read_all(table, [{"region": "eu"}, {"region": "us"}])
    got = pl.from_arrow(got).sort("id")
    if not got.select(frame.columns).equals(frame.with_columns(pl.col("id").cast(pl.Int32))):
        raise SystemExit(f"polars frame differs:\n{got.head()}\nsent:\n{frame.head()}")
    journey.summary["polars"] = {"rows": n, "equal": True, "dtype_of_region": str(frame.schema["region"])}


def primary_key(journey):
    table = journey.create(
        "arrow_pk",
        [
            {"name": "id", "data_type": {"type": "INT"}, "nullable": False},
            {"name": "v", "data_type": {"type": "STRING"}},
            {"name": "n", "data_type": {"type": "BIGINT"}},
        ],
        primary_key=["id"],
    )
    ids = list(range(100))
    journey.write(table, stream(pa.table({"id": ids, "v": [f"v{i}" for i in ids], "n": ids})))
    partial = pa.table({"id": pa.array(range(10), pa.int32()), "v": [f"new{i}" for i in range(10)]})
    journey.write(table, stream(partial))
    deletes = pa.table({"id": list(range(90, 100)), "_delete": [True] * 10})
    answer = journey.write(table, stream(deletes))
    if answer["success_count"] != 10:
        raise SystemExit(f"deletes: {answer}")
    status, _, body = request(
        journey.url(table, "/records/lookup"), {"keys": [{"id": i} for i in ids]}
    )
    if status != 200:
        raise SystemExit(f"lookup: {status} {body[:300]!r}")
    results = json.loads(body)["results"]
    for i, result in zip(ids, results):
        if i >= 90:
            want = None
        elif i < 10:
            want = {"id": i, "v": f"new{i}", "n": i}
        else:
            want = {"id": i, "v": f"v{i}", "n": i}
        have = result.get("row") if result["found"] else None
        if have is not None:
            have = {**have, "n": int(have["n"])}
        if have != want:
            raise SystemExit(f"pk row {i}: {have} (wanted {want})")
    # The same lookup answered as Arrow: the rows found, each with its key's position.
    status, headers, body = request(
        journey.url(table, "/records/lookup"), {"keys": [{"id": i} for i in ids]}, accept=ARROW
    )
    if status != 200 or headers.get("content-type") != ARROW:
        raise SystemExit(f"arrow lookup: {status} {headers} {body[:300]!r}")
    found = pa.ipc.open_stream(body).read_all()
    if found.column_names != ["_index", "id", "v", "n"] or found.num_rows != 90:
        raise SystemExit(f"arrow lookup: {found.schema} with {found.num_rows} rows")
    if int(headers["fluss-record-count"]) != 90:
        raise SystemExit(f"arrow lookup count header: {headers['fluss-record-count']}")
    for index, row in zip(found.column("_index").to_pylist(), found.to_pylist()):
        want = {"id": index, "v": f"new{index}" if index < 10 else f"v{index}", "n": index}
        if {k: row[k] for k in ("id", "v", "n")} != want:
            raise SystemExit(f"arrow lookup row {index}: {row} (wanted {want})")
    journey.summary["primary_key"] = {
        "upserted": 100,
        "partial": 10,
        "deleted": 10,
        "arrow_lookup_rows": found.num_rows,
        "equal": True,
    }


def hostile(journey, table):
    before = journey.read_all(table).num_rows
    good = stream(pa.table({"id": pa.array([1000, 1001], pa.int32())}))
    dictionary = stream(pa.table({"id": pa.array([2000], pa.int32()), "kind": pa.array(["x"]).dictionary_encode()}))
    messages = list(pa.ipc.MessageReader.open_stream(dictionary))
    no_dictionary = b"".join(m.serialize().to_pybytes() for m in messages if m.type != "dictionary")
    schema_only = io.BytesIO()
    with pa.ipc.new_stream(schema_only, pa.schema([("id", pa.int64())])):
        pass
    lying = schema_only.getvalue()[:-8] + b"".join(
        m.serialize().to_pybytes()
        for m in pa.ipc.MessageReader.open_stream(
            stream(pa.table({"id": pa.array([3000, 3001, 3002], pa.int32())}))
        )
        if m.type == "record batch"
    )
    bomb = stream(pa.table({"id": pa.array([4000], pa.int32()), "name": ["x" * (64 << 20)]}), "zstd", None)
    cases = {
        "cut": (good[: len(good) // 2], (400,)),
        "garbage": (b"\xff" * 100, (400,)),
        "ten million declared rows": (
            stream(pa.table({"id": pa.nulls(10_000_000)}), chunk=None),
            (413,),
        ),
        "compression bomb": (bomb, (413,)),
        "missing dictionary": (no_dictionary, (400,)),
        "lying schema": (lying, (400,)),
    }
    answers = {}
    for name, (body, wanted) in cases.items():
        status, _, answer = request(journey.url(table, "/records"), body, ARROW)
        text = answer.decode(errors="replace")
        if status not in wanted or "java" in text.lower():
            raise SystemExit(f"{name}: {status} {text[:300]} (wanted {wanted})")
        answers[name] = {"status": status, "bytes": len(body), "message": json.loads(answer)["error"]["message"][:120]}
    after = journey.read_all(table).num_rows
    if after != before:
        raise SystemExit(f"hostile bodies wrote rows: {before} before, {after} after")
    journey.write(table, good)
    if journey.read_all(table).num_rows != before + 2:
        raise SystemExit("the good write after the hostile ones did not land")
    journey.summary["hostile"] = answers


def main():
    journey = Journey(*sys.argv[1:4])
    status, _, body = request(
        f"{journey.base}/v1/clusters/default/databases", {"database": journey.database}
    )
    if status not in (201, 409):
        raise SystemExit(f"database: {status} {body[:300]!r}")
    table = every_type(journey)
    with_polars(journey)
    primary_key(journey)
    hostile(journey, table)
    print(json.dumps(journey.summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
