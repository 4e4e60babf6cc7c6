//! The scalar value rules: integers, floats, DECIMAL, text and bytes. Numbers never pass
//! through a wider or lossier form than the one sent, and a refusal shows the value as sent.
//!
//! Also the dispatch of a scalar by its type ([`decode_scalar_into`]), to these rules or to the
//! temporal ones (`crate::codec::temporal`).

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bigdecimal::BigDecimal;
use fluss::metadata::DataType;
use fluss::row::{Date, Datum, Decimal, Time, TimestampLtz, TimestampNtz};

use crate::codec::json_scalar::{Scalar, expected_scalar, string};
use crate::codec::number_texts::{Text, text_of};
use crate::codec::temporal::{date, time, timestamp_ltz, timestamp_ntz};
use crate::codec::value_error::{VResult, ValueError, clip};
use crate::wire::has_nonzero_mantissa;

/// BYTES and BINARY take standard base64 with its `=` padding and nothing else (the Fluss
/// Gateway's rule): one spelling per value, so a retry that spells the bytes differently is not
/// silently the same write, and the padding shows the text was not cut short.
const BASE64_FORM: &str = "standard base64, `=`-padded to a multiple of 4 characters";

/// 2^63: a JSON integer literal this large in magnitude reaches the codec as a float (serde_json
/// keeps no wider integers), and no such integer fits a BIGINT.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

pub(super) fn bytes(v: &Scalar<'_>) -> VResult<Vec<u8>> {
    BASE64
        .decode(string(v).map_err(|_| expected_scalar("a base64 string", v))?)
        .map_err(|_| ValueError::new(format!("is not {BASE64_FORM}")))
}

/// The integer forms accepted, for messages.
const INTEGER_FORMS: &str = "a JSON integer or a string of base-10 digits";

/// An integer from a JSON integer or a string of base-10 digits (an optional sign, then digits),
/// range-checked, never through `f64`. A fraction or an exponent is refused even when the value
/// is integral (`1.0`, `1e3`, `"1e2"`): the JSON parser reads such a number as a double, so
/// `1.0000000000000001` would arrive as 1 and be written as a value the caller did not send.
pub(super) fn integer(v: &Scalar<'_>, ty: &str, min: i64, max: i64) -> VResult<i64> {
    let out_of_range = || ValueError::new(format!("is out of range for {ty}"));
    let n: i64 = match v {
        Scalar::Number(n) => {
            if let Some(i) = n.as_i64() {
                i
            } else if n.is_u64() {
                return Err(out_of_range());
            } else {
                // A JSON integer outside i64 reaches here as a float: from 2^63 on every value
                // is outside BIGINT, however it was written (`-9223372036854775809` included).
                // Below that, only a fraction or an exponent makes a float.
                if n.as_f64().is_some_and(|f| f.abs() >= I64_BOUND) {
                    return Err(out_of_range());
                }
                return Err(ValueError::new(format!(
                    "expects an integer for {ty} ({INTEGER_FORMS}), got a number with a fraction or an exponent"
                )));
            }
        }
        Scalar::Str(s) => match s.parse::<i64>() {
            Ok(i) => i,
            Err(_) => {
                let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(out_of_range());
                }
                return Err(ValueError::new(format!(
                    "expects an integer for {ty} ({INTEGER_FORMS}), got \"{}\"",
                    clip(s)
                )));
            }
        },
        _ => {
            return Err(expected_scalar(
                &format!("an integer for {ty} ({INTEGER_FORMS})"),
                v,
            ));
        }
    };
    if n < min || n > max {
        return Err(out_of_range());
    }
    Ok(n)
}

/// A FLOAT or DOUBLE (`ty`) from a JSON number, a numeric string or one of the names `"NaN"`,
/// `"Infinity"`, `"-Infinity"`. A JSON number that is not zero but reads as zero never gets
/// here: the body is refused as it is parsed (`crate::wire::first_vanishing_number`), as the
/// number's text is gone once it is a double.
pub(super) fn float(v: &Scalar<'_>, ty: &str) -> VResult<f64> {
    match v {
        Scalar::Number(n) => n
            .as_f64()
            .ok_or_else(|| ValueError::new("is not a valid floating-point number")),
        Scalar::Str(s) => match *s {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => {
                let f: f64 = s.parse().map_err(|_| {
                    ValueError::new(format!("expects a number, got \"{}\"", clip(s)))
                })?;
                // Rust parses "inf"/"1e999" to infinity; only the spelled-out names are accepted.
                if !f.is_finite() {
                    return Err(ValueError::new(format!(
                        "\"{}\" is out of range (use \"Infinity\" for infinity)",
                        clip(s)
                    )));
                }
                // Underflow is refused as overflow is: "1e-400" is not 0.
                if f == 0.0 && has_nonzero_mantissa(s) {
                    return Err(too_small(&format!("\"{}\"", clip(s)), ty));
                }
                Ok(f)
            }
        },
        _ => Err(expected_scalar("a number", v)),
    }
}

/// A number or a string as a message shows it: a JSON number as serde_json writes it (`1e-46`), a
/// string quoted and cut short.
pub(super) fn shown_scalar(v: &Scalar<'_>) -> String {
    match v {
        Scalar::Number(n) => n.to_string(),
        Scalar::Str(s) => format!("\"{}\"", clip(s)),
        other => other.kind().to_owned(),
    }
}

/// A non-zero value that `ty` would store as zero. The value comes last, after `: `, where
/// every value of a codec message goes (the ingest log cuts it off there).
pub(super) fn too_small(shown: &str, ty: &str) -> ValueError {
    ValueError::new(format!(
        "is not zero but is too small for {ty} and would be stored as 0: {shown}"
    ))
}

/// A DECIMAL(p, s) from a string or number. Extra fraction digits are accepted only when they
/// are zeros; nothing is rounded. A JSON number is taken as the text it was sent as: the
/// streaming decoder hands that text over as [`Scalar::Str`], the reference path finds it by
/// the double the parser made of it (`number_texts`).
pub(super) fn decimal(v: &Scalar<'_>, precision: u32, scale: u32) -> VResult<Decimal> {
    let (text, number): (std::borrow::Cow<'_, str>, bool) = match v {
        Scalar::Str(s) => ((*s).into(), false),
        Scalar::Number(n) if n.is_f64() => match text_of(n.as_f64().unwrap_or(f64::NAN)) {
            Text::Sent(text) => (String::from(text).into(), true),
            Text::Several => {
                return Err(ValueError::new(format!(
                    "is one of several different JSON numbers in this body that read as the same double ({n}), so which one it was is lost; send DECIMAL values as strings to keep them exact"
                )));
            }
            Text::Deferred => return Err(ValueError::new("deferred to the reference path")),
            Text::Unknown => return shortest_text_decimal(n, precision, scale),
        },
        Scalar::Number(n) => (n.to_string().into(), true),
        _ => return Err(expected_scalar("a decimal string or number", v)),
    };
    if let Some(d) = plain_compact_decimal(&text, precision, scale) {
        return Ok(d);
    }
    big_decimal(&text, number, precision, scale)
}

/// A DECIMAL from a double whose text is not at hand (a row built in code, an event record
/// parsed elsewhere): its shortest text, refused when that cannot be trusted to be the number
/// sent.
fn shortest_text_decimal(n: &serde_json::Number, precision: u32, scale: u32) -> VResult<Decimal> {
    let text = n.to_string();
    // Only up to 15 significant digits are guaranteed to survive a double.
    if significant_digits(&text) > F64_EXACT_DIGITS {
        return Err(ValueError::new(format!(
            "has more than {F64_EXACT_DIGITS} significant digits as a JSON number; send DECIMAL values as strings to keep them exact"
        )));
    }
    // An integer literal beyond i64 reached the codec as a double, rounded to 16 or 17 digits
    // (`100000000000000000001` reads as 1e20): one that still fits cannot be trusted.
    if n.as_f64().is_some_and(|f| f.abs() >= I64_BOUND) {
        return Err(ValueError::new(format!(
            "is too large to be exact as a JSON number (send DECIMAL values as strings to keep them exact): {}",
            shown_decimal(&text, true)
        )));
    }
    if let Some(d) = plain_compact_decimal(&text, precision, scale) {
        return Ok(d);
    }
    big_decimal(&text, true, precision, scale)
}

/// A DECIMAL value as its refusal shows it: a string as sent (quoted, cut short), a JSON number
/// in plain digits (`-100000000000000000000`, not the parser's `-1e20`), which is the number
/// sent for every JSON number the codec takes (at most 15 significant digits).
fn shown_decimal(text: &str, number: bool) -> String {
    if !number {
        return format!("\"{}\"", clip(text));
    }
    match BigDecimal::from_str(text) {
        Ok(d) => clip(&d.to_plain_string()),
        Err(_) => clip(text),
    }
}

/// A DECIMAL(p, s) from its text through BigDecimal: every form (exponents, wide precisions),
/// and the words of every refusal, which name the reason (too many integer digits for the
/// precision, or too many fraction digits for the scale) and the value as sent.
pub(super) fn big_decimal(
    text: &str,
    number: bool,
    precision: u32,
    scale: u32,
) -> VResult<Decimal> {
    let ty = || format!("DECIMAL({precision}, {scale})");
    let int_room = precision - scale.min(precision);
    let too_many_fraction = |n: &dyn fmt::Display| {
        ValueError::new(format!(
            "has {n} fraction digits, more than {} allows ({scale}): {}",
            ty(),
            shown_decimal(text, number)
        ))
    };
    let too_many_integer = |n: &dyn fmt::Display| {
        ValueError::new(format!(
            "has {n} integer digits, more than {} allows ({int_room}): {}",
            ty(),
            shown_decimal(text, number)
        ))
    };
    if let Some(negative) = huge_exponent(text) {
        // Refused before BigDecimal would materialise a number with thousands of digits.
        return Err(if negative {
            too_many_fraction(&"thousands of")
        } else {
            too_many_integer(&"thousands of")
        });
    }
    let d = BigDecimal::from_str(text).map_err(|_| {
        ValueError::new(format!(
            "expects a decimal string or number for {}, got \"{}\"",
            ty(),
            clip(text)
        ))
    })?;
    let d = d.normalized();
    let fraction_digits = d.fractional_digit_count().max(0);
    if fraction_digits > i64::from(scale) {
        return Err(too_many_fraction(&fraction_digits));
    }
    let integer_digits = if d.sign() == bigdecimal::num_bigint::Sign::NoSign {
        0
    } else {
        (d.digits() as i64 - d.fractional_digit_count()).max(0)
    };
    if integer_digits > i64::from(int_room) {
        return Err(too_many_integer(&integer_digits));
    }
    let scaled = d.with_scale(i64::from(scale));
    Decimal::from_big_decimal(scaled, precision, scale).map_err(|e| {
        ValueError::new(format!(
            "could not be stored as {}: {e}: {}",
            ty(),
            shown_decimal(text, number)
        ))
    })
}

/// Digits of a plain decimal text (`-?D+(.D+)?`) that fits a compact DECIMAL(p, s) (p ≤ 18),
/// turned into the unscaled value with integer arithmetic. Any other text, and any value the
/// BigDecimal path would refuse, is `None`: that path decides it (and words the error). Gives the
/// same value as that path for every text it takes (checked by a property test).
pub(super) fn plain_compact_decimal(text: &str, precision: u32, scale: u32) -> Option<Decimal> {
    if precision > fluss::row::MAX_COMPACT_PRECISION || scale > precision {
        return None;
    }
    // Bytes, not `str` patterns: this runs for every decimal written.
    let b = text.as_bytes();
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[digits.len()..]),
    };
    let all_digits = |p: &[u8]| p.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !all_digits(int) || (frac.is_empty() && int.len() != digits.len()) {
        return None;
    }
    if !all_digits(frac) {
        return None;
    }
    // Extra fraction digits are accepted only when they are zeros; nothing is rounded.
    let frac = &frac[..frac.len() - frac.iter().rev().take_while(|&&c| c == b'0').count()];
    let int = &int[int.iter().take_while(|&&c| c == b'0').count()..];
    if frac.len() > scale as usize || int.len() + scale as usize > precision as usize {
        return None;
    }
    // At most 18 digits in all: no overflow of an i64.
    let mut unscaled: i64 = 0;
    for &c in int.iter().chain(frac) {
        unscaled = unscaled * 10 + i64::from(c - b'0');
    }
    unscaled *= 10i64.pow(scale - frac.len() as u32);
    if negative {
        unscaled = -unscaled;
    }
    Decimal::from_unscaled_long(unscaled, precision, scale).ok()
}

/// Whether a number's text has an exponent so large that BigDecimal would materialise an
/// enormous value from it (`Some(true)` when it is negative); such text is refused before
/// parsing.
fn huge_exponent(text: &str) -> Option<bool> {
    let pos = text.find(['e', 'E'])?;
    let signed = &text[pos + 1..];
    let exp = signed.trim_start_matches(['+', '-']);
    // Not all digits: the parser rejects it with its own message.
    (!exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit()) && exp.len() > 3)
        .then(|| signed.starts_with('-'))
}

/// Decimal digits an f64 round-trips exactly (DBL_DIG).
const F64_EXACT_DIGITS: usize = 15;

/// Significant digits of a number's text (mantissa only, leading zeros dropped).
fn significant_digits(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    let digits = mantissa.bytes().filter(u8::is_ascii_digit);
    let trimmed: Vec<u8> = digits.skip_while(|&b| b == b'0').collect();
    let trailing_zeros = trimmed.iter().rev().take_while(|&&b| b == b'0').count();
    trimmed.len() - trailing_zeros
}

/// Whether values of `dt` are JSON scalars (everything but ARRAY, MAP and ROW).
pub(in crate::codec) fn is_scalar_type(dt: &DataType) -> bool {
    !matches!(dt, DataType::Array(_) | DataType::Map(_) | DataType::Row(_))
}

/// One scalar value of the scalar type `dt` (see [`is_scalar_type`]).
pub(super) fn decode_scalar(dt: &DataType, v: Scalar<'_>) -> VResult<Datum<'static>> {
    let mut datum = Datum::Null;
    decode_scalar_into(dt, v, &mut datum)?;
    Ok(datum)
}

/// [`decode_scalar`] written straight into `slot` (left as it was on error). A fluss-rs `Datum`
/// is large (192 bytes in fluss-rs 1.0.0, 56 with the vendored patch): each variant is stored in
/// place, so a value is not built on the stack and then copied whole into the row (a quarter of
/// the streaming decoder's time under perf, at 192 bytes).
pub(in crate::codec) fn decode_scalar_into(
    dt: &DataType,
    v: Scalar<'_>,
    slot: &mut Datum<'_>,
) -> VResult<()> {
    if let Scalar::Null = v {
        return if dt.is_nullable() {
            *slot = Datum::Null;
            Ok(())
        } else {
            Err(ValueError::new("must not be null"))
        };
    }
    match dt {
        DataType::Boolean(_) => match v {
            Scalar::Bool(b) => *slot = Datum::Bool(b),
            _ => return Err(expected_scalar("a boolean", &v)),
        },
        DataType::TinyInt(_) => {
            *slot = Datum::Int8(integer(&v, "TINYINT", i8::MIN as i64, i8::MAX as i64)? as i8)
        }
        DataType::SmallInt(_) => {
            *slot = Datum::Int16(integer(&v, "SMALLINT", i16::MIN as i64, i16::MAX as i64)? as i16)
        }
        DataType::Int(_) => {
            *slot = Datum::Int32(integer(&v, "INT", i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        DataType::BigInt(_) => *slot = Datum::Int64(integer(&v, "BIGINT", i64::MIN, i64::MAX)?),
        DataType::Float(_) => {
            let f = float(&v, "FLOAT")?;
            let narrowed = f as f32;
            if f.is_finite() && !narrowed.is_finite() {
                return Err(ValueError::new(format!(
                    "is out of range for FLOAT: {}",
                    shown_scalar(&v)
                )));
            }
            // A subnormal FLOAT is a value like any other; only a non-zero value that FLOAT
            // would store as 0 is refused, as overflow is.
            if f != 0.0 && narrowed == 0.0 {
                return Err(too_small(&shown_scalar(&v), "FLOAT"));
            }
            *slot = Datum::Float32(narrowed.into())
        }
        DataType::Double(_) => *slot = Datum::Float64(float(&v, "DOUBLE")?.into()),
        DataType::Char(c) => {
            let s = string(&v)?;
            let len = c.length() as usize;
            if s.chars().count() > len {
                return Err(ValueError::new(format!(
                    "expects CHAR({len}) (a JSON string of at most {len} code points), got {} code points",
                    s.chars().count()
                )));
            }
            *slot = Datum::String(s.to_owned().into())
        }
        DataType::String(_) => *slot = Datum::String(string(&v)?.to_owned().into()),
        DataType::Bytes(_) => *slot = Datum::Blob(bytes(&v)?.into()),
        DataType::Binary(b) => {
            let data = bytes(&v)?;
            let len = b.length();
            if data.len() != len {
                return Err(ValueError::new(format!(
                    "expects exactly {len} bytes for BINARY({len}), got {}",
                    data.len()
                )));
            }
            *slot = Datum::Blob(data.into())
        }
        DataType::Decimal(d) => *slot = Datum::Decimal(decimal(&v, d.precision(), d.scale())?),
        DataType::Date(_) => *slot = Datum::Date(Date::new(date(&v)?)),
        DataType::Time(t) => *slot = Datum::Time(Time::new(time(&v, t.precision())?)),
        DataType::Timestamp(t) => {
            let (ms, ns) = timestamp_ntz(&v, t.precision())?;
            *slot = Datum::TimestampNtz(
                TimestampNtz::from_millis_nanos(ms, ns)
                    .map_err(|_| ValueError::new("is out of the TIMESTAMP range"))?,
            )
        }
        DataType::TimestampLTz(t) => {
            let (ms, ns) = timestamp_ltz(&v, t.precision())?;
            *slot = Datum::TimestampLtz(
                TimestampLtz::from_millis_nanos(ms, ns)
                    .map_err(|_| ValueError::new("is out of the TIMESTAMP_LTZ range"))?,
            )
        }
        DataType::Array(_) => return Err(expected_scalar("an array", &v)),
        DataType::Map(_) => {
            return Err(expected_scalar(
                "an object or an array of {\"key\",\"value\"} entries",
                &v,
            ));
        }
        DataType::Row(_) => return Err(expected_scalar("an object", &v)),
    }
    Ok(())
}
