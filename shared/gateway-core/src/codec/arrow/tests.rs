//! Arrow write bodies: what each column type takes, exactly, and what a hostile stream gets.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Int8Array, Int32Array, Int64Array, LargeStringArray, NullArray,
    RecordBatch, StringArray, StringViewArray, TimestampNanosecondArray, UInt64Array,
};
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_schema::{DataType as Arrow, Field, Schema};
use fluss::metadata::{DataTypes, RowType};
use fluss::row::{DataGetters, Datum};
use serde_json::{Value, json};

use super::*;
use crate::ErrorCode;
use crate::types::parse_column_type;

const LIMITS: ArrowLimits = ArrowLimits {
    max_rows: 10_000,
    max_decoded_bytes: 1 << 20,
};

fn codec(columns: &[(&str, Value, bool)], pk: &[&str], partitions: &[&str]) -> RowCodec {
    let fields = columns
        .iter()
        .map(|(n, t, nullable)| {
            DataTypes::field(*n, parse_column_type(n, t, *nullable).expect("type"))
        })
        .collect();
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    RowCodec::from_parts(1, 1, RowType::new(fields), &own(pk), &own(partitions)).expect("codec")
}

fn stream_with(columns: Vec<(&str, ArrayRef)>, options: IpcWriteOptions) -> Vec<u8> {
    let batch = RecordBatch::try_from_iter(columns).expect("batch");
    let mut out = Vec::new();
    let mut writer =
        StreamWriter::try_new_with_options(&mut out, &batch.schema(), options).expect("writer");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish");
    drop(writer);
    out
}

fn stream(columns: Vec<(&str, ArrayRef)>) -> Vec<u8> {
    stream_with(columns, IpcWriteOptions::default())
}

fn decode(codec: &RowCodec, body: &[u8]) -> Result<DecodedBatch<'static>, GatewayError> {
    codec.decode_arrow(&ArrowBody::read(body, LIMITS)?)
}

fn refused(codec: &RowCodec, body: &[u8]) -> String {
    match decode(codec, body) {
        Ok(batch) => panic!("accepted: {:?}", batch.entries),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{}", e.message());
            e.message().to_owned()
        }
    }
}

fn log_table() -> RowCodec {
    codec(
        &[
            ("id", json!({"type": "INT"}), false),
            ("name", json!({"type": "STRING"}), true),
            ("at", json!({"type": "TIMESTAMP", "precision": 6}), true),
        ],
        &[],
        &[],
    )
}

#[test]
fn a_log_table_takes_its_columns_by_name_in_any_encoding_that_keeps_every_value() {
    let body = stream(vec![
        // Another order, an int64 whose values fit INT, a large string, microseconds as ns.
        (
            "at",
            Arc::new(TimestampNanosecondArray::from(vec![Some(1_000), None])) as ArrayRef,
        ),
        (
            "name",
            Arc::new(LargeStringArray::from(vec![Some("a"), None])),
        ),
        ("id", Arc::new(Int64Array::from(vec![7, -2_147_483_648]))),
    ]);
    let batch = decode(&log_table(), &body).expect("decoded");
    assert_eq!(batch.target, None);
    let ids: Vec<&str> = batch.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["0", "1"]);
    let first = &batch.entries[0];
    assert_eq!(first.op, WriteOp::Append);
    assert_eq!(first.row.get_int(0).unwrap(), 7);
    assert_eq!(first.row.get_string(1).unwrap(), "a");
    let at = first.row.get_timestamp_ntz(2, 6).unwrap();
    assert_eq!(
        (at.get_millisecond(), at.get_nano_of_millisecond()),
        (0, 1_000)
    );
    assert_eq!(batch.entries[1].row.get_int(0).unwrap(), i32::MIN);
    assert!(matches!(batch.entries[1].row.values[1], Datum::Null));
}

#[test]
fn a_value_the_column_cannot_store_exactly_is_refused_naming_its_row_and_column() {
    let table = log_table();
    let too_big = stream(vec![(
        "id",
        Arc::new(Int64Array::from(vec![1, 1 << 40])) as ArrayRef,
    )]);
    let message = refused(&table, &too_big);
    assert!(message.contains("row 1: column `id`"), "{message}");
    assert!(message.contains("out of range for INT"), "{message}");

    let unsigned = stream(vec![(
        "id",
        Arc::new(UInt64Array::from(vec![u64::MAX])) as ArrayRef,
    )]);
    assert!(refused(&table, &unsigned).contains("out of range for INT"));

    // TIMESTAMP(6) keeps microseconds: a nanosecond digit would be lost.
    let nanos = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("at", Arc::new(TimestampNanosecondArray::from(vec![1_001]))),
    ]);
    let message = refused(&table, &nanos);
    assert!(message.contains("row 0: column `at`"), "{message}");
    assert!(message.contains("TIMESTAMP(6) cannot store"), "{message}");
}

#[test]
fn a_column_of_another_kind_is_refused_naming_both_types() {
    let body = stream(vec![(
        "id",
        Arc::new(StringArray::from(vec!["7"])) as ArrayRef,
    )]);
    let message = refused(&log_table(), &body);
    assert!(message.contains("column `id`"), "{message}");
    assert!(message.contains("INT NOT NULL"), "{message}");
    assert!(message.contains("Utf8"), "{message}");
}

#[test]
fn unknown_missing_repeated_and_null_columns_are_refused() {
    let table = log_table();
    let unknown = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("nope", Arc::new(Int32Array::from(vec![1]))),
    ]);
    let e = decode(&table, &unknown).unwrap_err();
    assert!(e.is_unknown_column());
    assert!(e.message().contains("`nope`"), "{}", e.message());

    let missing = stream(vec![(
        "name",
        Arc::new(StringArray::from(vec!["a"])) as ArrayRef,
    )]);
    assert!(refused(&table, &missing).contains("lacks column `id`, which is NOT NULL"));

    let null = stream(vec![(
        "id",
        Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
    )]);
    assert!(refused(&table, &null).contains("row 1: column `id` is required"));

    let twice = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("id", Arc::new(Int32Array::from(vec![2]))),
    ]);
    assert!(refused(&table, &twice).contains("column `id` twice"));

    let delete_on_log = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("_delete", Arc::new(BooleanArray::from(vec![true]))),
    ]);
    assert!(refused(&table, &delete_on_log).contains("log table"));
}

fn pk_table() -> RowCodec {
    codec(
        &[
            ("id", json!({"type": "INT"}), false),
            ("v", json!({"type": "STRING"}), true),
            ("n", json!({"type": "TINYINT"}), true),
        ],
        &["id"],
        &[],
    )
}

#[test]
fn a_primary_key_table_upserts_deletes_by_flag_and_updates_the_columns_sent() {
    let body = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        (
            "v",
            Arc::new(StringViewArray::from(vec![Some("a"), None, Some("c")])),
        ),
        ("n", Arc::new(Int8Array::from(vec![1, 2, 3]))),
        (
            "_delete",
            Arc::new(BooleanArray::from(vec![Some(false), Some(true), None])),
        ),
    ]);
    let batch = decode(&pk_table(), &body).expect("decoded");
    let ops: Vec<WriteOp> = batch.entries.iter().map(|e| e.op).collect();
    assert_eq!(ops, [WriteOp::Upsert, WriteOp::Delete, WriteOp::Upsert]);
    // A delete carries its key only.
    assert!(matches!(batch.entries[1].row.values[2], Datum::Null));
    assert_eq!(batch.entries[2].row.get_string(1).unwrap(), "c");

    let partial = stream(vec![
        ("v", Arc::new(StringArray::from(vec!["x"])) as ArrayRef),
        ("id", Arc::new(Int32Array::from(vec![9]))),
    ]);
    let batch = decode(&pk_table(), &partial).expect("decoded");
    let target = batch.target.expect("a partial update");
    assert_eq!(target.names(), ["id", "v"]);

    let keyless = stream(vec![(
        "v",
        Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
    )]);
    assert!(refused(&pk_table(), &keyless).contains("lacks primary-key column `id`"));
}

#[test]
fn partition_values_pass_the_identifier_rule() {
    let table = codec(
        &[
            ("id", json!({"type": "INT"}), false),
            ("day", json!({"type": "STRING"}), false),
        ],
        &[],
        &["day"],
    );
    let body = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
        (
            "day",
            Arc::new(StringArray::from(vec!["2026-12-07", "../zookeeper"])),
        ),
    ]);
    let message = refused(&table, &body);
    assert!(message.contains("row 1: column `day`"), "{message}");
}

#[test]
fn hostile_streams_are_refused_before_anything_is_decoded() {
    let table = log_table();
    let good = stream(vec![(
        "id",
        Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
    )]);
    assert!(decode(&table, &good).is_ok());
    // Cut anywhere: 400, never a panic.
    for cut in [1, 4, 8, 20, good.len() / 2, good.len() - 9] {
        let e = decode(&table, &good[..cut]).expect_err("a cut stream");
        assert_eq!(
            e.code(),
            ErrorCode::InvalidArgument,
            "cut {cut}: {}",
            e.message()
        );
    }
    assert_eq!(
        decode(&table, b"").unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        decode(&table, &[0xff; 64]).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    // Every byte of the stream flipped in turn: an answer each time, never a panic.
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x5a;
        let _ = decode(&table, &bad);
    }
    // Ten million rows of a type that takes no bytes.
    let declared = stream(vec![(
        "id",
        Arc::new(NullArray::new(10_000_000)) as ArrayRef,
    )]);
    assert!(declared.len() < 1_000, "{} bytes", declared.len());
    let e = decode(&table, &declared).unwrap_err();
    assert_eq!(e.code(), ErrorCode::LimitExceeded, "{}", e.message());
    assert!(e.message().contains("10000 rows"), "{}", e.message());
}

#[test]
fn compressed_buffers_are_read_and_a_compression_bomb_is_refused() {
    let table = log_table();
    for codec in [
        arrow_ipc::CompressionType::LZ4_FRAME,
        arrow_ipc::CompressionType::ZSTD,
    ] {
        let options = IpcWriteOptions::default()
            .try_with_compression(Some(codec))
            .expect("compression");
        let names: Vec<String> = (0..1000).map(|i| format!("name {i}")).collect();
        let body = stream_with(
            vec![
                (
                    "id",
                    Arc::new(Int32Array::from_iter_values(0..1000)) as ArrayRef,
                ),
                ("name", Arc::new(StringArray::from_iter_values(&names))),
            ],
            options.clone(),
        );
        let batch = decode(&table, &body).expect("a compressed stream");
        assert_eq!(batch.entries.len(), 1000);
        assert_eq!(batch.entries[999].row.get_string(1).unwrap(), "name 999");

        // 16 MiB of one byte compresses to a few KiB: over the 1 MiB decoded limit.
        let bomb = "x".repeat(16 << 20);
        let body = stream_with(
            vec![
                ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
                ("name", Arc::new(StringArray::from(vec![bomb.as_str()]))),
            ],
            options,
        );
        assert!(body.len() < 1 << 20, "{codec:?}: {} bytes", body.len());
        let e = decode(&table, &body).unwrap_err();
        assert_eq!(
            e.code(),
            ErrorCode::LimitExceeded,
            "{codec:?}: {}",
            e.message()
        );
    }
}

#[test]
fn a_dictionary_column_decodes_and_a_missing_dictionary_is_refused() {
    use arrow_array::DictionaryArray;
    use arrow_array::types::Int32Type;
    let dict: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let body = stream(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        ("name", Arc::new(dict)),
    ]);
    let batch = decode(&log_table(), &body).expect("decoded");
    assert_eq!(batch.entries[2].row.get_string(1).unwrap(), "a");

    // The same stream without its dictionary batch: the record batch refers to nothing.
    let schema_end = message_end(&body, 0);
    let dictionary_end = message_end(&body, schema_end);
    let mut without = body[..schema_end].to_vec();
    without.extend_from_slice(&body[dictionary_end..]);
    let e = decode(&log_table(), &without).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{}", e.message());
}

/// Where the message starting at `at` ends (continuation, length, metadata, body).
fn message_end(stream: &[u8], at: usize) -> usize {
    let len = i32::from_le_bytes(stream[at + 4..at + 8].try_into().unwrap()) as usize;
    let metadata = &stream[at + 8..at + 8 + len];
    let message = arrow_ipc::root_as_message(metadata).expect("message");
    at + 8 + len + message.bodyLength() as usize
}

#[test]
fn an_arrow_schema_with_a_lying_type_does_not_pass() {
    // A schema saying Int64 for a column written as Int32: its buffers are half the size.
    let body = stream(vec![(
        "id",
        Arc::new(Int32Array::from(vec![1, 2, 3, 4])) as ArrayRef,
    )]);
    let schema = Schema::new(vec![Field::new("id", Arrow::Int64, false)]);
    let mut lying = Vec::new();
    {
        let mut writer = StreamWriter::try_new(&mut lying, &schema).expect("writer");
        writer.finish().expect("finish");
    }
    // The lying schema (without its end marker), then the honest batch.
    let schema_len = message_end(&lying, 0);
    let batch_at = message_end(&body, 0);
    let mut spliced = lying[..schema_len].to_vec();
    spliced.extend_from_slice(&body[batch_at..]);
    let e = decode(&log_table(), &spliced).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{}", e.message());
}

#[test]
fn decimals_beyond_their_precision_are_refused() {
    use arrow_array::Decimal128Array;
    let table = codec(
        &[(
            "price",
            json!({"type": "DECIMAL", "precision": 5, "scale": 2}),
            true,
        )],
        &[],
        &[],
    );
    // The table's own Arrow type, DECIMAL(5, 2), holding 123456.78 (8 digits): arrow-rs builds
    // the array without looking at its values, and the stream carries them as they are.
    let lying = Decimal128Array::from(vec![12_345_678_i128])
        .with_precision_and_scale(5, 2)
        .expect("type");
    let body = stream(vec![("price", Arc::new(lying) as ArrayRef)]);
    let message = refused(&table, &body);
    assert!(message.contains("precision"), "{message}");
    let fits = Decimal128Array::from(vec![12_345_i128])
        .with_precision_and_scale(5, 2)
        .expect("type");
    let batch = decode(&table, &stream(vec![("price", Arc::new(fits) as ArrayRef)])).unwrap();
    assert_eq!(batch.entries.len(), 1);
}

#[test]
fn the_body_is_read_in_place_and_bytes_after_its_end_are_not_part_of_it() {
    let values: Vec<i64> = (0..1000).collect();
    let mut body = stream(vec![(
        "n",
        Arc::new(Int64Array::from(values.clone())) as ArrayRef,
    )]);
    let length = body.len();
    // Bytes after the end marker, as some writers leave them: the stream ended before them.
    body.extend_from_slice(b"trailing");
    // Taken as it is (hyper's `Bytes` too: `From<bytes::Bytes> for Buffer` does not copy).
    let shared = arrow_buffer::Buffer::from(body);
    let (start, end) = (shared.as_ptr() as usize, shared.as_ptr() as usize + length);
    let read = ArrowBody::read(shared, LIMITS).expect("read");
    assert_eq!(read.rows(), 1000);
    let column = read.batches[0]
        .column(0)
        .as_primitive::<arrow_array::types::Int64Type>();
    assert_eq!(column.values().as_ref(), values.as_slice());
    // An aligned column is a slice of the request's bytes, not a copy of them.
    let at = column.values().as_ptr() as usize;
    assert!(
        at >= start && at < end,
        "the column was copied out of the body"
    );
}
