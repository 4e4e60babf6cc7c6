"""pyarrow (from PyPI) reads a log table back through the gateway's read route.

Usage: pyarrow_read.py BASE_URL DATABASE TABLE

Writes rows of every column type of the test table through `POST …/records` (JSON), reads the
table from the start through `POST …/records/read` with `Accept: application/vnd.apache.arrow.stream`,
a few records per answer, following the `Fluss-Next-Cursor` header until an answer is empty,
and compares the concatenated pyarrow table with the one built here from the same values
with the Arrow types Fluss stores. Prints one JSON summary line; exits 1 on any difference.
"""

import base64
import datetime
import decimal
import json
import sys
import urllib.request

import pyarrow as pa
import pyarrow.ipc

ARROW = "application/vnd.apache.arrow.stream"


def post(url, body, accept="application/json"):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": accept},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.status, dict(resp.headers), resp.read()


def main():
    base, database, table = sys.argv[1:4]
    records = f"{base}/v1/clusters/default/databases/{database}/tables/{table}/records"

    n = 40
    ids = list(range(n))
    values = {
        "id": ids,
        "big": [None if i == 3 else 9007199254740993 + i for i in ids],
        "name": [None if i == 5 else f"name-{i}-ünï" for i in ids],
        "score": [i * 1.25 - 7.5 for i in ids],
        "ok": [i % 2 == 0 for i in ids],
        "price": [decimal.Decimal(f"{i}.{i % 100:02d}") for i in ids],
        "day": [datetime.date(2026, 12, 7) + datetime.timedelta(days=i) for i in ids],
        "at": [datetime.datetime(2026, 12, 7, 1, 2, 3, 123456) + datetime.timedelta(seconds=i) for i in ids],
        "blob": [None if i == 7 else bytes([i, 0, 255]) for i in ids],
    }
    entries = []
    for i in ids:
        row = {
            "id": i,
            "big": None if values["big"][i] is None else str(values["big"][i]),
            "name": values["name"][i],
            "score": values["score"][i],
            "ok": values["ok"][i],
            "price": str(values["price"][i]),
            "day": values["day"][i].isoformat(),
            "at": values["at"][i].isoformat(),
            "blob": None if values["blob"][i] is None else base64.b64encode(values["blob"][i]).decode(),
        }
        entries.append({"id": f"e{i}", "append": row})
    status, _, body = post(records, {"entries": entries})
    written = json.loads(body)
    if status != 200 or written.get("success_count") != n:
        print(f"write failed: {status} {body[:500]!r}")
        return 1

    tables = []
    answers = 0
    request = {"from": "earliest", "max_records": 7}
    while True:
        status, headers, body = post(f"{records}/read", request, accept=ARROW)
        answers += 1
        lower = {k.lower(): v for k, v in headers.items()}
        if status != 200 or lower.get("content-type") != ARROW:
            print(f"read failed: {status} {headers} {body[:300]!r}")
            return 1
        got = pa.ipc.open_stream(body).read_all()
        if got.num_rows != int(lower["fluss-record-count"]):
            print(f"count header {lower['fluss-record-count']} but {got.num_rows} rows")
            return 1
        if got.num_rows > 7:
            print(f"an answer of {got.num_rows} rows; max_records was 7")
            return 1
        if got.num_rows == 0:
            break
        tables.append(got)
        request = {"cursor": lower["fluss-next-cursor"], "max_records": 7}

    schema = pa.schema(
        [
            ("id", pa.int32()),
            ("big", pa.int64()),
            ("name", pa.string()),
            ("score", pa.float64()),
            ("ok", pa.bool_()),
            ("price", pa.decimal128(10, 2)),
            ("day", pa.date32()),
            ("at", pa.timestamp("us")),
            ("blob", pa.binary()),
        ]
    )
    expected = pa.table(values, schema=schema)
    got = pa.concat_tables(tables).sort_by("id")
    if got.schema.remove_metadata() != schema:
        print(f"schema differs:\n{got.schema}\nexpected:\n{schema}")
        return 1
    got = got.cast(schema)
    if not got.equals(expected):
        for column in schema.names:
            if not got.column(column).equals(expected.column(column)):
                print(f"column {column} differs:\n{got.column(column)}\nexpected:\n{expected.column(column)}")
        return 1
    print(json.dumps({"rows": got.num_rows, "answers": answers, "equal": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
