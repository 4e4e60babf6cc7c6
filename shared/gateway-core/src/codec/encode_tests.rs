//! Encoder rules, one test per rule, each asserting the exact JSON or the message; property
//! tests cover the integer and timestamp ranges.

use std::str::FromStr;
use std::sync::Arc;

use bigdecimal::BigDecimal;
use fluss::metadata::{DataField, DataTypes, KvFormat};
use fluss::record::RowAppendRecordBatchBuilder;
use fluss::row::compacted::CompactedRow;
use fluss::row::encode::{RowEncoder, RowEncoderFactory};
use fluss::row::{
    ColumnarRow, Date, Datum, FlussArrayWriter, FlussMap, FlussMapWriter, GenericRow, Time,
    TimestampLtz, TimestampNtz,
};
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::error::ErrorCode;

/// 2024-01-02T03:04:05.678 UTC, in epoch milliseconds.
const TS_MILLIS: i64 = 1_704_164_645_678;
/// 12:34:56.789 in milliseconds of the day.
const TIME_MILLIS: i32 = 45_296_789;
/// -9999-01-01T00:00:00.000, the first instant jiff's civil calendar holds.
const MIN_MILLIS: i64 = -377_705_116_800_000;
/// 9999-12-31T23:59:59.999, the last millisecond jiff's civil calendar holds.
const MAX_MILLIS: i64 = 253_402_300_799_999;

fn row_type(fields: Vec<(&str, DataType)>) -> RowType {
    RowType::new(
        fields
            .into_iter()
            .map(|(name, data_type)| DataField::new(name, data_type, None))
            .collect(),
    )
}

fn row_dt(fields: Vec<(&str, DataType)>) -> DataType {
    DataType::Row(row_type(fields))
}

fn dec(text: &str, precision: u32, scale: u32) -> Decimal {
    Decimal::from_big_decimal(BigDecimal::from_str(text).unwrap(), precision, scale).unwrap()
}

fn ts_ntz(millis: i64, nanos: i32) -> Datum<'static> {
    Datum::TimestampNtz(TimestampNtz::from_millis_nanos(millis, nanos).unwrap())
}

fn ts_ltz(millis: i64, nanos: i32) -> Datum<'static> {
    Datum::TimestampLtz(TimestampLtz::from_millis_nanos(millis, nanos).unwrap())
}

fn encode(row_type: &RowType, row: &dyn InternalRow) -> Value {
    Value::Object(encode_row(row_type, row).expect("the row encodes"))
}

/// Encodes `datum` as the single column `v` of type `data_type`.
fn encode_one(data_type: DataType, datum: Datum<'_>) -> Result<Value, GatewayError> {
    let rt = row_type(vec![("v", data_type)]);
    let mut object = encode_row(&rt, &GenericRow::from_data(vec![datum]))?;
    Ok(object.remove("v").unwrap_or(Value::Null))
}

/// A row with every one of the 19 types, nested values at several depths and nulls at every
/// level, with the exact JSON it must produce. Temporal values carry no digits beyond their
/// precision, as Fluss stores them (the Arrow builder rejects anything else).
fn every_type_row() -> (RowType, GenericRow<'static>, Value) {
    let row_xyz = row_dt(vec![
        ("x", DataTypes::int()),
        ("y", DataTypes::array(DataTypes::string())),
        ("z", row_dt(vec![("w", DataTypes::date())])),
    ]);
    let row_ab = row_dt(vec![
        ("a", DataTypes::bigint()),
        ("b", DataTypes::timestamp_ltz_with_precision(6)),
    ]);
    let map_sd = DataTypes::map(DataTypes::string(), DataTypes::decimal(5, 1));
    let row_qr = row_dt(vec![
        ("q", DataTypes::decimal(20, 3)),
        ("r", DataTypes::array(DataTypes::bigint())),
    ]);
    let map_cr = DataTypes::map(DataTypes::char(2).as_non_nullable(), row_qr.clone());
    let row_n = row_dt(vec![("n", DataTypes::string())]);

    let rt = row_type(vec![
        ("bool", DataTypes::boolean()),
        ("tiny", DataTypes::tinyint()),
        ("small", DataTypes::smallint()),
        ("int", DataTypes::int()),
        ("big_min", DataTypes::bigint()),
        ("big_max", DataTypes::bigint()),
        ("big_unsafe", DataTypes::bigint()),
        ("float", DataTypes::float()),
        ("float_max", DataTypes::float()),
        ("float_nan", DataTypes::float()),
        ("double", DataTypes::double()),
        ("double_inf", DataTypes::double()),
        ("double_ninf", DataTypes::double()),
        ("chr", DataTypes::char(3)),
        ("str", DataTypes::string()),
        ("dec", DataTypes::decimal(10, 2)),
        ("dec_neg", DataTypes::decimal(10, 2)),
        ("dec_big", DataTypes::decimal(38, 10)),
        ("dec_big_neg", DataTypes::decimal(38, 10)),
        ("dec_int", DataTypes::decimal(38, 0)),
        ("date", DataTypes::date()),
        ("date_neg", DataTypes::date()),
        ("date_min", DataTypes::date()),
        ("time0", DataTypes::time_with_precision(0)),
        ("time3", DataTypes::time_with_precision(3)),
        ("time6", DataTypes::time_with_precision(6)),
        ("time9", DataTypes::time_with_precision(9)),
        ("ts0", DataTypes::timestamp_with_precision(0)),
        ("ts3", DataTypes::timestamp_with_precision(3)),
        ("ts6", DataTypes::timestamp_with_precision(6)),
        ("ts9", DataTypes::timestamp_with_precision(9)),
        ("ltz0", DataTypes::timestamp_ltz_with_precision(0)),
        ("ltz3", DataTypes::timestamp_ltz_with_precision(3)),
        ("ltz6", DataTypes::timestamp_ltz_with_precision(6)),
        ("ltz9", DataTypes::timestamp_ltz_with_precision(9)),
        ("ltz_neg", DataTypes::timestamp_ltz_with_precision(6)),
        ("bytes", DataTypes::bytes()),
        ("bin", DataTypes::binary(4)),
        ("null_int", DataTypes::int()),
        ("arr", DataTypes::array(DataTypes::int())),
        (
            "arr_arr",
            DataTypes::array(DataTypes::array(DataTypes::string())),
        ),
        (
            "smap",
            DataTypes::map(DataTypes::string().as_non_nullable(), DataTypes::bigint()),
        ),
        (
            "imap",
            DataTypes::map(DataTypes::int().as_non_nullable(), DataTypes::date()),
        ),
        ("row", row_xyz.clone()),
        ("row_null", row_xyz),
        ("arr_rows", DataTypes::array(row_ab.clone())),
        ("arr_maps", DataTypes::array(map_sd.clone())),
        (
            "deep",
            DataTypes::map(
                DataTypes::date().as_non_nullable(),
                DataTypes::array(map_cr.clone()),
            ),
        ),
        (
            "map_rows",
            DataTypes::map(DataTypes::string().as_non_nullable(), row_n.clone()),
        ),
    ]);

    let mut arr = FlussArrayWriter::new(3, &DataTypes::int());
    arr.write_int(0, 1);
    arr.set_null_at(1);
    arr.write_int(2, 3);

    let mut inner_a = FlussArrayWriter::new(2, &DataTypes::string());
    inner_a.write_string(0, "a");
    inner_a.set_null_at(1);
    let mut arr_arr = FlussArrayWriter::new(3, &DataTypes::array(DataTypes::string()));
    arr_arr.write_array(0, &inner_a.complete().unwrap());
    arr_arr.set_null_at(1);
    arr_arr.write_array(
        2,
        &FlussArrayWriter::new(0, &DataTypes::string())
            .complete()
            .unwrap(),
    );

    let mut smap = FlussMapWriter::new(2, &DataTypes::string(), &DataTypes::bigint());
    smap.write_entry("a".into(), Datum::Int64(1)).unwrap();
    smap.write_entry("b".into(), Datum::Null).unwrap();

    let mut imap = FlussMapWriter::new(2, &DataTypes::int(), &DataTypes::date());
    imap.write_entry(1.into(), Datum::Date(Date::new(1)))
        .unwrap();
    imap.write_entry((-2).into(), Datum::Null).unwrap();

    let mut y = FlussArrayWriter::new(1, &DataTypes::string());
    y.write_string(0, "p");
    let row = GenericRow::from_data(vec![
        Datum::Int32(1),
        Datum::Array(y.complete().unwrap()),
        Datum::Null,
    ]);

    let mut arr_rows = FlussArrayWriter::new(3, &row_ab);
    arr_rows
        .write_row(
            0,
            &GenericRow::from_data(vec![Datum::Int64(5), ts_ltz(TS_MILLIS, 901_000)]),
        )
        .unwrap();
    arr_rows.set_null_at(1);
    arr_rows.write_row(2, &GenericRow::new(2)).unwrap();

    let mut m1 = FlussMapWriter::new(1, &DataTypes::string(), &DataTypes::decimal(5, 1));
    m1.write_entry("k".into(), dec("1.5", 5, 1).into()).unwrap();
    let m3 = FlussMapWriter::new(0, &DataTypes::string(), &DataTypes::decimal(5, 1));
    let mut arr_maps = FlussArrayWriter::new(3, &map_sd);
    arr_maps.write_map(0, &m1.complete().unwrap());
    arr_maps.set_null_at(1);
    arr_maps.write_map(2, &m3.complete().unwrap());

    let mut r = FlussArrayWriter::new(2, &DataTypes::bigint());
    r.write_long(0, i64::MAX);
    r.set_null_at(1);
    let qr = GenericRow::from_data(vec![
        Datum::Decimal(dec("-1", 20, 3)),
        Datum::Array(r.complete().unwrap()),
    ]);
    let mut inner_map = FlussMapWriter::new(1, &DataTypes::char(2), &row_qr);
    inner_map
        .write_entry("ab".into(), Datum::Row(Box::new(qr)))
        .unwrap();
    let mut maps = FlussArrayWriter::new(2, &map_cr);
    maps.write_map(0, &inner_map.complete().unwrap());
    maps.set_null_at(1);
    let mut deep = FlussMapWriter::new(1, &DataTypes::date(), &DataTypes::array(map_cr.clone()));
    deep.write_entry(
        Datum::Date(Date::new(19_724)),
        Datum::Array(maps.complete().unwrap()),
    )
    .unwrap();

    let mut map_rows = FlussMapWriter::new(2, &DataTypes::string(), &row_n);
    map_rows
        .write_entry("x".into(), Datum::Row(Box::new(GenericRow::new(1))))
        .unwrap();
    map_rows.write_entry("y".into(), Datum::Null).unwrap();

    let values: Vec<Datum<'static>> = vec![
        Datum::Bool(true),
        Datum::Int8(i8::MIN),
        Datum::Int16(i16::MAX),
        Datum::Int32(i32::MIN),
        Datum::Int64(i64::MIN),
        Datum::Int64(i64::MAX),
        Datum::Int64(9_007_199_254_740_993),
        1.1f32.into(),
        f32::MAX.into(),
        f32::NAN.into(),
        (-0.25f64).into(),
        f64::INFINITY.into(),
        f64::NEG_INFINITY.into(),
        "abc".into(),
        "héllo \"q\"".into(),
        dec("1.5", 10, 2).into(),
        dec("-0.05", 10, 2).into(),
        dec("9999999999999999999999999999.9999999999", 38, 10).into(),
        dec("-0.0000000001", 38, 10).into(),
        dec("-12345678901234567890123456789012345678", 38, 0).into(),
        Datum::Date(Date::new(19_724)),
        Datum::Date(Date::new(-719_529)),
        Datum::Date(Date::new(-4_371_587)),
        Datum::Time(Time::new(TIME_MILLIS - 789)),
        Datum::Time(Time::new(TIME_MILLIS)),
        Datum::Time(Time::new(TIME_MILLIS)),
        Datum::Time(Time::new(TIME_MILLIS)),
        ts_ntz(TS_MILLIS - 678, 0),
        ts_ntz(TS_MILLIS, 0),
        ts_ntz(TS_MILLIS, 901_000),
        ts_ntz(TS_MILLIS, 901_234),
        ts_ltz(TS_MILLIS - 678, 0),
        ts_ltz(TS_MILLIS, 0),
        ts_ltz(TS_MILLIS, 901_000),
        ts_ltz(TS_MILLIS, 901_234),
        ts_ltz(-1, 500_000),
        b"hello".to_vec().into(),
        vec![0u8, 1, 2, 255].into(),
        Datum::Null,
        Datum::Array(arr.complete().unwrap()),
        Datum::Array(arr_arr.complete().unwrap()),
        Datum::Map(smap.complete().unwrap()),
        Datum::Map(imap.complete().unwrap()),
        Datum::Row(Box::new(row)),
        Datum::Null,
        Datum::Array(arr_rows.complete().unwrap()),
        Datum::Array(arr_maps.complete().unwrap()),
        Datum::Map(deep.complete().unwrap()),
        Datum::Map(map_rows.complete().unwrap()),
    ];
    assert_eq!(values.len(), rt.fields().len());

    // Several `json!` calls: one would exceed the default macro recursion limit.
    let parts = [
        json!({
        "bool": true,
        "tiny": -128,
        "small": 32767,
        "int": -2147483648,
        "big_min": "-9223372036854775808",
        "big_max": "9223372036854775807",
        "big_unsafe": "9007199254740993",
        "float": 1.1,
        "float_max": 3.4028235e38,
        "float_nan": "NaN",
        "double": -0.25,
        "double_inf": "Infinity",
        "double_ninf": "-Infinity",
        }),
        json!({
        "chr": "abc",
        "str": "héllo \"q\"",
        "dec": "1.50",
        "dec_neg": "-0.05",
        "dec_big": "9999999999999999999999999999.9999999999",
        "dec_big_neg": "-0.0000000001",
        "dec_int": "-12345678901234567890123456789012345678",
        }),
        json!({
        "date": "2024-01-02",
        "date_neg": "-0001-12-31",
        "date_min": "-9999-01-01",
        "time0": "12:34:56",
        "time3": "12:34:56.789",
        "time6": "12:34:56.789",
        "time9": "12:34:56.789",
        "ts0": "2024-01-02T03:04:05",
        "ts3": "2024-01-02T03:04:05.678",
        "ts6": "2024-01-02T03:04:05.678901",
        "ts9": "2024-01-02T03:04:05.678901234",
        "ltz0": "2024-01-02T03:04:05Z",
        "ltz3": "2024-01-02T03:04:05.678Z",
        "ltz6": "2024-01-02T03:04:05.678901Z",
        "ltz9": "2024-01-02T03:04:05.678901234Z",
        "ltz_neg": "1969-12-31T23:59:59.999500Z",
        }),
        json!({
        "bytes": "aGVsbG8=",
        "bin": "AAEC/w==",
        "null_int": null,
        "arr": [1, null, 3],
        "arr_arr": [["a", null], null, []],
        "smap": {"a": "1", "b": null},
        "imap": [{"key": 1, "value": "1970-01-02"}, {"key": -2, "value": null}],
        "row": {"x": 1, "y": ["p"], "z": null},
        "row_null": null,
        }),
        json!({
        "arr_rows": [
            {"a": "5", "b": "2024-01-02T03:04:05.678901Z"},
            null,
            {"a": null, "b": null}
        ],
        "arr_maps": [{"k": "1.5"}, null, {}],
        "deep": [{
            "key": "2024-01-02",
            "value": [{"ab": {"q": "-1.000", "r": ["9223372036854775807", null]}}, null]
        }],
        "map_rows": {"x": {"n": null}, "y": null},
        }),
    ];
    let mut expected = Map::new();
    for part in parts {
        if let Value::Object(fields) = part {
            expected.extend(fields);
        }
    }
    (rt, GenericRow::from_data(values), Value::Object(expected))
}

#[test]
fn every_type_and_every_null_level_encodes_exactly() {
    let (rt, row, expected) = every_type_row();
    assert_eq!(encode(&rt, &row), expected);
}

#[test]
fn keys_are_the_schema_field_names_one_per_column() {
    let (rt, row, _) = every_type_row();
    let object = encode_row(&rt, &row).unwrap();
    let mut names: Vec<&str> = rt.fields().iter().map(|f| f.name()).collect();
    names.sort_unstable();
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let mut sorted_keys = keys.clone();
    sorted_keys.sort_unstable();
    assert_eq!(sorted_keys, names);
}

#[test]
fn compacted_lookup_rows_encode_like_the_generic_row() {
    let (rt, row, expected) = every_type_row();
    let mut encoder = RowEncoderFactory::create(KvFormat::COMPACTED, rt.clone()).unwrap();
    encoder.start_new_row().unwrap();
    for (pos, datum) in row.values.iter().enumerate() {
        encoder.encode_field(pos, datum.clone()).unwrap();
    }
    let bytes = encoder.finish_row().unwrap();
    let compacted = CompactedRow::from_bytes(&rt, &bytes);
    assert_eq!(encode(&rt, &compacted), expected);
}

#[test]
fn arrow_columnar_rows_encode_like_the_generic_row() {
    let (rt, row, expected) = every_type_row();
    let mut builder = RowAppendRecordBatchBuilder::new(&rt).unwrap();
    builder.append(&row).unwrap();
    // A second row checks that nested columnar slices start at the right offset.
    builder.append(&row).unwrap();
    let batch = builder.build_arrow_record_batch().unwrap();
    let columnar = ColumnarRow::new(batch, Arc::new(rt.clone()), 1, None).unwrap();
    assert_eq!(encode(&rt, &columnar), expected);
}

#[test]
fn bigint_limits_are_strings() {
    for (v, text) in [
        (i64::MIN, "-9223372036854775808"),
        (i64::MAX, "9223372036854775807"),
        (0, "0"),
        (-9_007_199_254_740_993, "-9007199254740993"),
    ] {
        assert_eq!(
            encode_one(DataTypes::bigint(), Datum::Int64(v)).unwrap(),
            json!(text)
        );
    }
}

#[test]
fn non_finite_floats_are_the_strings_the_decoder_accepts() {
    for (datum, text) in [
        (Datum::from(f32::NAN), "NaN"),
        (Datum::from(f32::INFINITY), "Infinity"),
        (Datum::from(f32::NEG_INFINITY), "-Infinity"),
    ] {
        assert_eq!(encode_one(DataTypes::float(), datum).unwrap(), json!(text));
    }
    for (datum, text) in [
        (Datum::from(f64::NAN), "NaN"),
        (Datum::from(f64::INFINITY), "Infinity"),
        (Datum::from(f64::NEG_INFINITY), "-Infinity"),
    ] {
        assert_eq!(encode_one(DataTypes::double(), datum).unwrap(), json!(text));
    }
    assert_eq!(
        encode_one(DataTypes::float(), 0.1f32.into()).unwrap(),
        json!(0.1)
    );
    assert_eq!(
        encode_one(DataTypes::double(), f64::MAX.into()).unwrap(),
        json!(f64::MAX)
    );
}

#[test]
fn decimals_have_exactly_the_declared_scale() {
    for (text, precision, scale, expected) in [
        ("1.5", 10, 2, "1.50"),
        ("0", 10, 2, "0.00"),
        ("-7", 3, 0, "-7"),
        ("0.001", 3, 3, "0.001"),
        ("-0.001", 18, 3, "-0.001"),
        ("999999999999999.999", 18, 3, "999999999999999.999"),
        ("12345678901234567890.5", 21, 1, "12345678901234567890.5"),
        ("1e20", 38, 10, "100000000000000000000.0000000000"),
        (
            "-9999999999999999999999999999.9999999999",
            38,
            10,
            "-9999999999999999999999999999.9999999999",
        ),
        ("0.0000000001", 38, 10, "0.0000000001"),
        ("0", 38, 38, "0.00000000000000000000000000000000000000"),
    ] {
        let value = encode_one(
            DataTypes::decimal(precision, scale),
            dec(text, precision, scale).into(),
        )
        .unwrap();
        assert_eq!(
            value,
            json!(expected),
            "DECIMAL({precision},{scale}) {text}"
        );
    }
}

#[test]
fn a_decimal_stored_with_another_scale_is_rescaled_half_up() {
    let value = encode_one(DataTypes::decimal(10, 1), dec("1.25", 10, 2).into()).unwrap();
    assert_eq!(value, json!("1.3"));
    let value = encode_one(DataTypes::decimal(30, 4), dec("1.25", 30, 2).into()).unwrap();
    assert_eq!(value, json!("1.2500"));
}

#[test]
fn dates_cover_the_whole_civil_range() {
    for (days, text) in [
        (0, "1970-01-01"),
        (-1, "1969-12-31"),
        (-719_528, "0000-01-01"),
        (-719_529, "-0001-12-31"),
        (-4_371_587, "-9999-01-01"),
        (2_932_896, "9999-12-31"),
        (2_932_897, "+10000-01-01"),
        (-4_371_588, "-10000-12-31"),
        (i32::MAX, "+5881580-07-11"),
        (i32::MIN, "-5877641-06-23"),
    ] {
        assert_eq!(
            encode_one(DataTypes::date(), Datum::Date(Date::new(days))).unwrap(),
            json!(text),
            "{days}"
        );
    }
}

#[test]
fn every_date_is_read_back_by_the_decoder_as_the_same_day() {
    let mut days = vec![i32::MIN, i32::MIN + 1, i32::MAX, i32::MAX - 1, 0];
    days.extend((-60..60).map(|n| n * 35_000_000 + 146_096));
    for day in days {
        let text = encode_one(DataTypes::date(), Datum::Date(Date::new(day))).unwrap();
        let decoded = read_back(DataTypes::date(), &text);
        assert_eq!(decoded.get_date(0).unwrap().get_inner(), day, "{text}");
    }
}

#[test]
fn time_has_at_most_millisecond_digits() {
    for (precision, millis, text) in [
        (0, 0, "00:00:00"),
        (0, TIME_MILLIS, "12:34:56"),
        (1, TIME_MILLIS, "12:34:56.7"),
        (3, TIME_MILLIS, "12:34:56.789"),
        (3, 5, "00:00:00.005"),
        (6, 86_399_999, "23:59:59.999"),
        (9, TIME_MILLIS, "12:34:56.789"),
    ] {
        let value = encode_one(
            DataTypes::time_with_precision(precision),
            Datum::Time(Time::new(millis)),
        )
        .unwrap();
        assert_eq!(value, json!(text), "TIME({precision}) {millis}");
    }
}

#[test]
fn time_outside_the_day_is_an_error() {
    for millis in [-1, 86_400_000, i32::MIN, i32::MAX] {
        let e = encode_one(DataTypes::time(), Datum::Time(Time::new(millis))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Internal);
        assert!(e.message().starts_with("column `v`: "), "{}", e.message());
    }
}

#[test]
fn timestamps_have_exactly_the_declared_precision() {
    for (precision, millis, nanos, text) in [
        (0, 0, 0, "1970-01-01T00:00:00"),
        (3, 0, 0, "1970-01-01T00:00:00.000"),
        (6, 0, 0, "1970-01-01T00:00:00.000000"),
        (9, 0, 0, "1970-01-01T00:00:00.000000000"),
        (9, -1, 999_999, "1969-12-31T23:59:59.999999999"),
        (2, TS_MILLIS, 0, "2024-01-02T03:04:05.67"),
        (9, TS_MILLIS, 901_234, "2024-01-02T03:04:05.678901234"),
    ] {
        let ntz = encode_one(
            DataTypes::timestamp_with_precision(precision),
            ts_ntz(millis, nanos),
        )
        .unwrap();
        assert_eq!(ntz, json!(text), "TIMESTAMP({precision})");
        let ltz = encode_one(
            DataTypes::timestamp_ltz_with_precision(precision),
            ts_ltz(millis, nanos),
        )
        .unwrap();
        assert_eq!(ltz, json!(format!("{text}Z")), "TIMESTAMP_LTZ({precision})");
    }
}

#[test]
fn timestamps_of_every_year_are_written_and_read_back() {
    let ltz3 = DataTypes::timestamp_ltz_with_precision(3);
    assert_eq!(
        encode_one(ltz3.clone(), ts_ltz(MIN_MILLIS, 0)).unwrap(),
        json!("-9999-01-01T00:00:00.000Z")
    );
    assert_eq!(
        encode_one(ltz3.clone(), ts_ltz(MAX_MILLIS, 0)).unwrap(),
        json!("9999-12-31T23:59:59.999Z")
    );
    assert_eq!(
        encode_one(ltz3.clone(), ts_ltz(MAX_MILLIS + 1, 0)).unwrap(),
        json!("+10000-01-01T00:00:00.000Z")
    );
    for millis in [MIN_MILLIS - 1, MAX_MILLIS + 1, i64::MIN, i64::MAX] {
        let text = encode_one(ltz3.clone(), ts_ltz(millis, 0)).unwrap();
        assert_eq!(read_back_ltz3(&text), millis, "{text}");
    }
}

/// The epoch milliseconds the decoder reads from a TIMESTAMP_LTZ(3) value the encoder wrote.
fn read_back_ltz3(text: &serde_json::Value) -> i64 {
    read_back(DataTypes::timestamp_ltz_with_precision(3), text)
        .get_timestamp_ltz(0, 3)
        .unwrap()
        .get_epoch_millisecond()
}

/// A value the encoder wrote, decoded again as the only column of a row of `data_type`.
fn read_back(data_type: DataType, text: &serde_json::Value) -> GenericRow<'static> {
    let codec =
        crate::codec::RowCodec::from_parts(1, 1, row_type(vec![("v", data_type)]), &[], &[])
            .unwrap();
    let row = serde_json::Map::from_iter([("v".to_owned(), text.clone())]);
    codec
        .decode_full(crate::codec::RowRef::Entry("e"), &row)
        .unwrap()
}

#[test]
fn bytes_are_padded_standard_base64() {
    for (bytes, text) in [
        (&b""[..], ""),
        (&b"f"[..], "Zg=="),
        (&b"fo"[..], "Zm8="),
        (&[0xfb, 0xff][..], "+/8="),
    ] {
        assert_eq!(
            encode_one(DataTypes::bytes(), bytes.into()).unwrap(),
            json!(text)
        );
    }
    assert_eq!(
        encode_one(DataTypes::binary(2), (&[0xfb, 0xff][..]).into()).unwrap(),
        json!("+/8=")
    );
}

#[test]
fn a_cell_of_another_type_is_an_internal_error_without_the_value() {
    let e = encode_one(DataTypes::bigint(), Datum::Int32(424_242)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Internal);
    assert_eq!(
        e.message(),
        "column `v`: the stored value cannot be read as BIGINT"
    );
    assert!(!e.message().contains("424242"));
}

#[test]
fn an_unreadable_nested_cell_names_its_path() {
    let mut items = FlussArrayWriter::new(2, &DataTypes::string());
    items.write_string(0, "ok");
    items.write_binary_bytes(1, &[0xff, 0xfe, 0xfd]);
    let inner = GenericRow::from_data(vec![Datum::Array(items.complete().unwrap())]);
    let e = encode_one(
        row_dt(vec![("items", DataTypes::array(DataTypes::string()))]),
        Datum::Row(Box::new(inner)),
    )
    .unwrap_err();
    assert_eq!(
        e.message(),
        "column `v.items[1]`: the stored value cannot be read as STRING"
    );
}

#[test]
fn an_unreadable_map_value_names_its_entry() {
    let mut keys = FlussArrayWriter::new(1, &DataTypes::int());
    keys.write_int(0, 7);
    let mut values = FlussArrayWriter::new(1, &DataTypes::string());
    values.write_binary_bytes(0, &[0xff]);
    let map = FlussMap::from_arrays(
        &keys.complete().unwrap(),
        &values.complete().unwrap(),
        &DataTypes::int(),
        &DataTypes::string(),
    )
    .unwrap();
    let map_type = DataTypes::map(DataTypes::int(), DataTypes::string());
    let e = encode_one(DataTypes::array(map_type.clone()), {
        let mut outer = FlussArrayWriter::new(1, &map_type);
        outer.write_map(0, &map);
        Datum::Array(outer.complete().unwrap())
    })
    .unwrap_err();
    assert_eq!(
        e.message(),
        "column `v[0][0].value`: the stored value cannot be read as STRING"
    );
}

#[test]
fn a_row_that_does_not_match_the_schema_is_an_error() {
    let rt = row_type(vec![("a", DataTypes::int()), ("b", DataTypes::int())]);
    let e = encode_row(&rt, &GenericRow::from_data(vec![Datum::Int32(1)])).unwrap_err();
    assert_eq!(
        e.message(),
        "the stored row has 1 fields but the schema declares 2"
    );

    let nested = row_dt(vec![("x", DataTypes::int())]);
    let e = encode_one(nested, Datum::Row(Box::new(GenericRow::new(3)))).unwrap_err();
    assert_eq!(
        e.message(),
        "column `v`: the stored row has 3 fields but the schema declares 1"
    );
}

/// Epoch milliseconds of a civil `YYYY-MM-DDTHH:MM:SS.fff` text, computed with jiff.
fn millis_of(text: &str) -> i128 {
    let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    jiff::civil::DateTime::from_str(&super::super::temporal::six_digit_year(text))
        .unwrap()
        .duration_since(epoch)
        .as_millis()
}

proptest! {
    #[test]
    fn bigint_is_the_exact_decimal_string(v in any::<i64>()) {
        let value = encode_one(DataTypes::bigint(), Datum::Int64(v)).unwrap();
        let text = value.as_str().unwrap();
        prop_assert_eq!(text.parse::<i64>().unwrap(), v);
    }

    #[test]
    fn timestamp_ltz_3_round_trips_in_jiffs_range(
        millis in prop_oneof![
            MIN_MILLIS..=MIN_MILLIS + 1_000_000,
            MIN_MILLIS..=MAX_MILLIS,
            MAX_MILLIS - 1_000_000..=MAX_MILLIS,
        ]
    ) {
        let value = encode_one(
            DataTypes::timestamp_ltz_with_precision(3),
            ts_ltz(millis, 0),
        )
        .unwrap();
        let text = value.as_str().unwrap();
        let civil = text.strip_suffix('Z').unwrap();
        prop_assert_eq!(civil.rsplit('.').next().unwrap().len(), 3);
        prop_assert_eq!(millis_of(civil), i128::from(millis));
    }

    #[test]
    fn timestamp_ltz_3_beyond_jiffs_range_is_written_and_read_back(
        millis in prop_oneof![i64::MIN..MIN_MILLIS, MAX_MILLIS + 1..=i64::MAX]
    ) {
        let text = encode_one(
            DataTypes::timestamp_ltz_with_precision(3),
            ts_ltz(millis, 0),
        )
        .unwrap();
        prop_assert_eq!(read_back_ltz3(&text), millis);
    }

    #[test]
    fn any_timestamp_value_encodes_or_fails_without_panicking(
        millis in any::<i64>(),
        nanos in 0..=999_999i32,
        precision in 0..=9u32,
    ) {
        let _ = encode_one(
            DataTypes::timestamp_with_precision(precision),
            ts_ntz(millis, nanos),
        );
    }
}
