//! DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ as text, both ways: the forms the decoder accepts
//! and the forms the encoder prints, in one place, so that what is printed is read back.
//!
//! Decoding is strict: a fraction finer than the column keeps is refused, as are leap seconds,
//! zones on zone-free types and offsets beyond ±18:00. Printing writes exactly the declared
//! precision and Java's `-YYYY` years, which the decoder takes back.

use std::fmt::Write as _;
use std::str::FromStr;

use fluss::row::{TimestampLtz, TimestampNtz};

use super::json_scalar::{Scalar, expected_scalar, string};
use super::value_error::{VResult, ValueError, clip};

// Printing, for the encoder.

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i32 = 1_000_000;
const MAX_NANO_OF_MILLI: i32 = 999_999;
/// Fluss TIME values are stored as milliseconds of the day, so finer digits would only be zeros.
const MAX_TIME_FRACTION_DIGITS: u32 = 3;
/// jiff prints at most nanoseconds; TIMESTAMP precision cannot exceed it either.
const MAX_TIMESTAMP_FRACTION_DIGITS: u32 = 9;
const UNIX_EPOCH: jiff::civil::Date = jiff::civil::date(1970, 1, 1);
const NANOS_PER_DAY: i128 = 86_400_000_000_000;

/// A `u32` of the schema (a precision, a length) as a `usize`. The encoder's too: it lives here
/// because the encoder depends on this module, never the other way round.
pub(super) fn to_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Days in 400 Gregorian years: the calendar repeats after them, day for day, which is how
/// years beyond jiff's ±9999 are read and written (shifted by whole cycles into its range).
const DAYS_PER_400_YEARS: i64 = 146_097;

/// The civil date `days_since_epoch` days from 1970-01-01, as its year (any, however far out)
/// and a date of jiff's with the same month and day. Civil arithmetic rather than
/// `jiff::Timestamp`: the timestamp range stops a day short of the civil one, and TIMESTAMP
/// (no zone) is a civil value anyway.
fn civil_date(days_since_epoch: i64) -> Option<(i64, jiff::civil::Date)> {
    // Whole 400-year cycles taken off leave a date in 1970..2370, well inside jiff's range.
    let cycles = days_since_epoch.div_euclid(DAYS_PER_400_YEARS);
    let days = days_since_epoch.rem_euclid(DAYS_PER_400_YEARS);
    let span = jiff::Span::new().try_days(days).ok()?;
    let date = UNIX_EPOCH.checked_add(span).ok()?;
    let year = i64::from(date.year()).checked_add(cycles.checked_mul(400)?)?;
    Some((year, date))
}

fn civil_time(millis_of_day: i64, nano_of_milli: i32) -> Option<jiff::civil::Time> {
    if !(0..MILLIS_PER_DAY).contains(&millis_of_day)
        || !(0..=MAX_NANO_OF_MILLI).contains(&nano_of_milli)
    {
        return None;
    }
    let hour = i8::try_from(millis_of_day / 3_600_000).ok()?;
    let minute = i8::try_from(millis_of_day / 60_000 % 60).ok()?;
    let second = i8::try_from(millis_of_day / 1_000 % 60).ok()?;
    let milli = i32::try_from(millis_of_day % 1_000).ok()?;
    jiff::civil::Time::new(
        hour,
        minute,
        second,
        milli * NANOS_PER_MILLI + nano_of_milli,
    )
    .ok()
}

/// Fluss stores a timestamp as epoch milliseconds plus a non-negative nanosecond-of-millisecond
/// adjustment; the text carries exactly `precision` fraction digits.
fn timestamp_string(
    epoch_millis: i64,
    nano_of_milli: i32,
    precision: u32,
    suffix: &str,
) -> Option<String> {
    let (year, date) = civil_date(epoch_millis.div_euclid(MILLIS_PER_DAY))?;
    let time = civil_time(epoch_millis.rem_euclid(MILLIS_PER_DAY), nano_of_milli)?;
    let digits = to_usize(precision.min(MAX_TIMESTAMP_FRACTION_DIGITS));
    let mut out = iso_date(year, date);
    write!(out, "T{time:.digits$}{suffix}").ok()?;
    Some(out)
}

/// `YYYY-MM-DD` as Java's `LocalDate` and the Fluss Gateway print it: at least four year
/// digits, a `-` for years before year 0 and a `+` for years past 9999 (ISO 8601's expanded
/// form), which the decoder accepts back; jiff would print six-digit years. `date` gives the
/// month and day.
fn iso_date(year: i64, date: jiff::civil::Date) -> String {
    let sign = match year {
        ..0 => "-",
        10_000.. => "+",
        _ => "",
    };
    format!(
        "{sign}{:04}-{:02}-{:02}",
        year.unsigned_abs(),
        date.month(),
        date.day()
    )
}

/// A DATE (days since the epoch) as `YYYY-MM-DD`, for any year a DATE holds (`None` cannot
/// happen: 400-year cycles of an `i32` day count fit an `i64`).
pub(super) fn date_string(days_since_epoch: i32) -> Option<String> {
    civil_date(i64::from(days_since_epoch)).map(|(year, date)| iso_date(year, date))
}

/// A TIME (milliseconds of the day) with `precision` fraction digits (at most the 3 Fluss
/// keeps); `None` for a value that is not a time of day.
pub(super) fn time_string(millis_of_day: i32, precision: u32) -> Option<String> {
    let time = civil_time(i64::from(millis_of_day), 0)?;
    let digits = to_usize(precision.min(MAX_TIME_FRACTION_DIGITS));
    Some(format!("{time:.digits$}"))
}

/// A TIMESTAMP with exactly `precision` fraction digits and no zone; `None` for a nanosecond
/// of millisecond outside 0..=999999 (a corrupt value).
pub(super) fn timestamp_ntz_string(ts: &TimestampNtz, precision: u32) -> Option<String> {
    timestamp_string(
        ts.get_millisecond(),
        ts.get_nano_of_millisecond(),
        precision,
        "",
    )
}

/// A TIMESTAMP_LTZ as a UTC instant (`Z`) with exactly `precision` fraction digits; `None`
/// for a nanosecond of millisecond outside 0..=999999 (a corrupt value).
pub(super) fn timestamp_ltz_string(ts: &TimestampLtz, precision: u32) -> Option<String> {
    timestamp_string(
        ts.get_epoch_millisecond(),
        ts.get_nano_of_millisecond(),
        precision,
        "Z",
    )
}

// Reading, for the decoder: every form printed above is among those read.

/// ISO 8601 wants six-digit years once a sign is written ("-000044-03-15"), which jiff enforces;
/// Java and our encoder write "-0044-03-15". Pads a signed short year so both forms parse.
pub(super) fn six_digit_year(s: &str) -> std::borrow::Cow<'_, str> {
    let Some(sign) = s.chars().next().filter(|c| *c == '-' || *c == '+') else {
        return s.into();
    };
    let digits = s[1..].bytes().take_while(u8::is_ascii_digit).count();
    if digits >= 6 || digits == 0 {
        return s.into();
    }
    format!("{sign}{}{}", "0".repeat(6 - digits), &s[1..]).into()
}

/// `YYYY-MM-DD` (a leading `-` for years before year 0, `+` and five or more digits for years
/// past 9999) → days since 1970-01-01.
pub(super) fn date(v: &Scalar<'_>) -> VResult<i32> {
    let s = string(v).map_err(|_| expected_scalar("a date string \"YYYY-MM-DD\"", v))?;
    let bad = || {
        ValueError::new(format!(
            "expects a date \"YYYY-MM-DD\", got \"{}\"",
            clip(s)
        ))
    };
    if let Some(d) = parse_date(s) {
        return Ok(days_since_epoch(d));
    }
    let days = date_days(s).ok_or_else(bad)?;
    i32::try_from(days)
        .map_err(|_| ValueError::new(format!("is out of range for DATE: \"{}\"", clip(s))))
}

/// A DATE (days since 1970-01-01) from a date text's bytes, any form [`date`] takes: the
/// streaming decoder's path, which never builds a message (`None` lets the reference path
/// give it).
pub(super) fn date_of_bytes(b: &[u8]) -> Option<i32> {
    if let Some(d) = parse_date_bytes(b) {
        return Some(days_since_epoch(d));
    }
    i32::try_from(date_days(std::str::from_utf8(b).ok()?)?).ok()
}

/// Days since 1970-01-01 of a date text of any year ([`parse_date`]'s forms and
/// [`expanded_year`]'s).
fn date_days(s: &str) -> Option<i64> {
    if let Some(d) = parse_date(s) {
        return Some(i64::from(days_since_epoch(d)));
    }
    let (text, cycles) = expanded_year(s)?;
    let d = parse_date(&text)?;
    i64::from(days_since_epoch(d)).checked_add(cycles.checked_mul(DAYS_PER_400_YEARS)?)
}

/// A text starting with a year in a form jiff does not read — ISO 8601's expanded form (a
/// sign, then four or more digits: `+10000-01-01`, `-12345-06-07T…`, `+2026-01-31`) or five or
/// more digits without a sign (`10000-01-01`), as the Fluss Gateway reads them — rewritten
/// with a year of 2000..2400 that has the same calendar (whole 400-year cycles taken off), and
/// the cycles taken. `None` for any other text, which the plain rules then decide.
pub(super) fn expanded_year(s: &str) -> Option<(String, i64)> {
    let (negative, start, min_digits) = match s.as_bytes().first()? {
        b'+' => (false, 1, 4),
        b'-' => (true, 1, 4),
        _ => (false, 0, 5),
    };
    let digits = s[start..].bytes().take_while(u8::is_ascii_digit).count();
    let end = start + digits;
    // Eighteen digits stay inside an i64; no DATE or timestamp reaches that far anyway.
    if !(min_digits..=18).contains(&digits) || s.as_bytes().get(end) != Some(&b'-') {
        return None;
    }
    let magnitude: i64 = s[start..end].parse().ok()?;
    let year = if negative { -magnitude } else { magnitude };
    let cycles = (year - 2000).div_euclid(400);
    let shifted = year - cycles * 400;
    Some((format!("{shifted:04}{}", &s[end..]), cycles))
}

/// `[-]YYYY[YY]-MM-DD` (a four- to six-digit year) → the date, when it exists. Read as bytes:
/// splitting on `-` with `str` patterns cost more than the date arithmetic.
fn parse_date(s: &str) -> Option<jiff::civil::Date> {
    parse_date_bytes(s.as_bytes())
}

/// [`parse_date`] of the text's bytes (non-ASCII never parses).
pub(super) fn parse_date_bytes(b: &[u8]) -> Option<jiff::civil::Date> {
    let (neg, rest) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    // The year is what precedes `-MM-DD`.
    let year_len = rest.len().checked_sub(6)?;
    if !(4..=6).contains(&year_len) || rest[year_len] != b'-' || rest[year_len + 3] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| -> Option<i32> {
        digits.iter().try_fold(0i32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i32::from(d - b'0'))
        })
    };
    let year = i16::try_from(number(&rest[..year_len])?).ok()?;
    let month = i8::try_from(number(&rest[year_len + 1..year_len + 3])?).ok()?;
    let day = i8::try_from(number(&rest[year_len + 4..])?).ok()?;
    jiff::civil::Date::new(if neg { -year } else { year }, month, day).ok()
}

pub(super) fn days_since_epoch(d: jiff::civil::Date) -> i32 {
    // Days from civil (proleptic Gregorian), exact for jiff's whole year range.
    let y = i64::from(d.year()) - i64::from(d.month() <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(d.month());
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(d.day()) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i32
}

/// Number of fraction digits of an ISO time-of-day part (after the seconds), or `None` if absent.
fn fraction_digits(time_part: &str) -> usize {
    match time_part.find(['.', ',']) {
        Some(pos) => time_part[pos + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count(),
        None => 0,
    }
}

/// `ty(precision)` names the type in the message, formatted only when it is needed: this runs
/// for every time value written.
fn check_fraction(s: &str, digits: usize, max: u32, ty: &str, precision: u32) -> VResult<()> {
    if digits > max as usize {
        return Err(ValueError::new(format!(
            "has {digits} fraction digits, more than {ty}({precision}) allows ({max}): \"{}\"",
            clip(s)
        )));
    }
    Ok(())
}

/// Fraction digits of TIME that Fluss keeps: it stores a time of day as milliseconds, whatever
/// the declared precision (the gateway refuses TIME above 3 for new columns; a column made
/// elsewhere may still declare more).
const TIME_STORED_DIGITS: u32 = crate::types::MAX_STORED_TIME_PRECISION as u32;

/// `HH:MM:SS[.fff]` → milliseconds of the day. Fluss stores TIME with millisecond resolution.
pub(super) fn time(v: &Scalar<'_>, precision: u32) -> VResult<i32> {
    let s = string(v).map_err(|_| expected_scalar("a time string \"HH:MM:SS[.fff]\"", v))?;
    if let Some(full) = seconds_added(s, 0) {
        return time(&Scalar::Str(&full), precision);
    }
    let bad = || {
        ValueError::new(format!(
            "expects a time \"HH:MM:SS[.fff]\", got \"{}\"",
            clip(s)
        ))
    };
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return Err(bad());
    }
    check_not_leap_second(s, b)?;
    // jiff takes a trailing offset and drops it; a time of day with one is not a TIME.
    if b[8..]
        .iter()
        .any(|c| matches!(c, b'+' | b'-' | b'Z' | b'z' | b'['))
    {
        return Err(bad());
    }
    let nanos = time_of_day_nanos(s).ok_or_else(bad)?;
    let digits = fraction_digits(s);
    if precision > TIME_STORED_DIGITS && digits > TIME_STORED_DIGITS as usize {
        return Err(ValueError::new(format!(
            "has {digits} fraction digits, more than a TIME({precision}) column keeps ({TIME_STORED_DIGITS}, as Fluss stores TIME to the millisecond): \"{}\"",
            clip(s)
        )));
    }
    check_fraction(s, digits, precision, "TIME", precision)?;
    Ok((nanos / 1_000_000) as i32)
}

/// A time of day written without its seconds (`HH:MM`, then the end or a zone), as the Fluss
/// Gateway reads it, with `:00` added after the minutes; `t_at` is where the time of day starts
/// in `s`. `None` for every other text, which is read as it is.
fn seconds_added(s: &str, t_at: usize) -> Option<String> {
    let t = s.as_bytes().get(t_at..)?;
    let digits =
        |r: std::ops::Range<usize>| t.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let minutes_end = matches!(t.get(5), None | Some(b'Z' | b'z' | b'+' | b'-'));
    (digits(0..2) && t.get(2) == Some(&b':') && digits(3..5) && minutes_end)
        .then(|| format!("{}:00{}", &s[..t_at + 5], &s[t_at + 5..]))
}

/// Refuses second 60 of a time of day (`t`, `HH:MM:SS…` or jiff's basic `HHMMSS…`): jiff reads
/// a leap second as second 59, which would store a different time than the one sent, and Fluss
/// has no leap seconds to store it as.
fn check_not_leap_second(s: &str, t: &[u8]) -> VResult<()> {
    let second = if t.get(2) == Some(&b':') {
        (t.get(5) == Some(&b':')).then(|| t.get(6..8)).flatten()
    } else {
        t.get(..4)
            .filter(|hm| hm.iter().all(u8::is_ascii_digit))
            .and_then(|_| t.get(4..6))
    };
    if second == Some(b"60") {
        return Err(ValueError::new(format!(
            "has second 60 (a leap second), which Fluss cannot store: \"{}\"",
            clip(s)
        )));
    }
    Ok(())
}

/// Nanoseconds of the day of an ISO time `HH:MM:SS[.f]`: the plain form by
/// [`plain_time_nanos`], any other by jiff.
fn time_of_day_nanos(s: &str) -> Option<i64> {
    if let Some(nanos) = plain_time_nanos(s.as_bytes()) {
        return Some(nanos);
    }
    let t = jiff::civil::Time::from_str(s).ok()?;
    Some(
        ((i64::from(t.hour()) * 60 + i64::from(t.minute())) * 60 + i64::from(t.second()))
            * 1_000_000_000
            + i64::from(t.subsec_nanosecond()),
    )
}

/// `HH:MM:SS` with an optional `.` and 1 to 9 fraction digits → nanoseconds of the day, with
/// integer arithmetic: the form nearly every client sends, and a third of a 10-column row's
/// decode when jiff parsed it. Anything else (a leap second, a comma, ten digits) is `None` and
/// jiff decides it, so the accepted texts and their values are jiff's (a property test checks).
pub(super) fn plain_time_nanos(t: &[u8]) -> Option<i64> {
    let two = |i: usize| -> Option<i64> {
        let (a, b) = (*t.get(i)?, *t.get(i + 1)?);
        (a.is_ascii_digit() && b.is_ascii_digit())
            .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
    };
    if t.len() < 8 || t[2] != b':' || t[5] != b':' {
        return None;
    }
    let (h, m, sec) = (two(0)?, two(3)?, two(6)?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let mut nanos = 0i64;
    match &t[8..] {
        [] => {}
        [b'.', frac @ ..]
            if (1..=9).contains(&frac.len()) && frac.iter().all(u8::is_ascii_digit) =>
        {
            for &d in frac {
                nanos = nanos * 10 + i64::from(d - b'0');
            }
            nanos *= 10i64.pow(9 - frac.len() as u32);
        }
        _ => return None,
    }
    Some(((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos)
}

/// `YYYY-MM-DDTHH:MM:SS[.f]Z` with a year from 0001 to 9998 → (epoch millis, nanos of milli),
/// without jiff and without 128-bit division: the form nearly every client sends. Any other
/// text is `None` and jiff decides it; the years are bounded so that nothing outside jiff's own
/// range is taken here.
pub(super) fn plain_utc(s: &str) -> Option<(i64, i32)> {
    let b = s.as_bytes();
    if b.len() < 20 || b[10] != b'T' || !b[0].is_ascii_digit() || *b.last()? != b'Z' {
        return None;
    }
    let date = parse_date(&s[..10])?;
    if !(1..=9998).contains(&date.year()) {
        return None;
    }
    let time = plain_time_nanos(&b[11..b.len() - 1])?;
    let millis = i64::from(days_since_epoch(date)) * 86_400_000 + time / 1_000_000;
    Some((millis, (time % 1_000_000) as i32))
}

fn split_millis(nanos_total: i128) -> VResult<(i64, i32)> {
    let ms = nanos_total.div_euclid(1_000_000);
    let ns = nanos_total.rem_euclid(1_000_000) as i32;
    let ms = i64::try_from(ms).map_err(|_| ValueError::new("is out of range"))?;
    Ok((ms, ns))
}

fn epoch_millis(n: &serde_json::Number, ty: &str) -> VResult<(i64, i32)> {
    let ms = n.as_i64().ok_or_else(|| {
        ValueError::new(format!(
            "expects an ISO-8601 string or integer epoch milliseconds for {ty}, got {n}"
        ))
    })?;
    // Every i64 of milliseconds is read back as text (years past 9999 with a `+`).
    Ok((ms, 0))
}

/// Zone-free ISO date-time (`T` separator) or epoch millis → (epoch millis, nanos of milli).
pub(super) fn timestamp_ntz(v: &Scalar<'_>, precision: u32) -> VResult<(i64, i32)> {
    let s = match v {
        Scalar::Number(n) => return epoch_millis(n, "TIMESTAMP"),
        Scalar::Str(s) => *s,
        _ => {
            return Err(expected_scalar(
                "an ISO-8601 date-time string or epoch milliseconds",
                v,
            ));
        }
    };
    if let Some(full) = s.find('T').and_then(|t| seconds_added(s, t + 1)) {
        return timestamp_ntz(&Scalar::Str(&full), precision);
    }
    let bad = || {
        ValueError::new(format!(
            "expects a date-time without zone \"YYYY-MM-DDTHH:MM:SS[.f]\", got \"{}\"",
            clip(s)
        ))
    };
    let (date_part, time_part) = s.split_once('T').ok_or_else(bad)?;
    if time_part.contains(['Z', 'z', '+', '-', '[']) {
        return Err(ValueError::new(format!(
            "is TIMESTAMP without time zone but \"{}\" has a zone or offset",
            clip(s)
        )));
    }
    let days = date_days(date_part).ok_or_else(bad)?;
    let tb = time_part.as_bytes();
    if tb.len() < 8 || tb[2] != b':' || tb[5] != b':' {
        return Err(bad());
    }
    check_not_leap_second(s, tb)?;
    let time = time_of_day_nanos(time_part).ok_or_else(bad)?;
    check_fraction(
        s,
        fraction_digits(time_part),
        precision,
        "TIMESTAMP",
        precision,
    )?;
    let nanos = i128::from(days) * NANOS_PER_DAY + i128::from(time);
    split_millis(nanos)
}

/// The largest zone offset accepted, ±18:00, as `java.time.ZoneOffset` bounds it.
const MAX_OFFSET_SECONDS: i32 = 18 * 3600;

/// ISO date-time with `Z` or an offset, or epoch millis → (epoch millis, nanos of milli).
pub(super) fn timestamp_ltz(v: &Scalar<'_>, precision: u32) -> VResult<(i64, i32)> {
    let s = match v {
        Scalar::Number(n) => return epoch_millis(n, "TIMESTAMP_LTZ"),
        Scalar::Str(s) => *s,
        _ => {
            return Err(expected_scalar(
                "an ISO-8601 date-time string or epoch milliseconds",
                v,
            ));
        }
    };
    if let Some(full) = s.find('T').and_then(|t| seconds_added(s, t + 1)) {
        return timestamp_ltz(&Scalar::Str(&full), precision);
    }
    if let Some((millis, nanos)) = plain_utc(s) {
        // `YYYY-MM-DDTHH:MM:SS` is 19 bytes, then `.` and the fraction, then `Z`.
        let digits = s.len().saturating_sub(21);
        check_fraction(s, digits, precision, "TIMESTAMP_LTZ", precision)?;
        return Ok((millis, nanos));
    }
    let Some((_, time_part)) = s.split_once('T') else {
        return Err(ValueError::new(format!(
            "expects a date-time with zone \"YYYY-MM-DDTHH:MM:SS[.f]Z\" or an offset, got \"{}\"",
            clip(s)
        )));
    };
    if !time_part.contains(['Z', 'z', '+', '-']) {
        return Err(ValueError::new(format!(
            "is TIMESTAMP_LTZ and needs a zone (`Z` or an offset): \"{}\"",
            clip(s)
        )));
    }
    check_not_leap_second(s, time_part.as_bytes())?;
    let (text, cycles) = match expanded_year(s) {
        Some((text, cycles)) => (text.into(), cycles),
        None => (six_digit_year(s), 0),
    };
    let bad = || {
        ValueError::new(format!(
            "expects a date-time with zone \"YYYY-MM-DDTHH:MM:SS[.f]Z\", got \"{}\"",
            clip(s)
        ))
    };
    let nanos = jiff::Timestamp::from_str(&text)
        .map_err(|_| bad())?
        .as_nanosecond()
        + i128::from(cycles) * i128::from(DAYS_PER_400_YEARS) * NANOS_PER_DAY;
    // jiff takes offsets up to ±25:59:59; beyond ±18:00 (java.time's bound, and no zone has
    // ever been further out) the text is almost surely a typo, and the instant it gives is
    // not one the caller meant.
    let offset = jiff::fmt::temporal::Pieces::parse(text.as_bytes())
        .map_err(|_| bad())?
        .to_numeric_offset()
        .map_or(0, |o| o.seconds());
    if offset.abs() > MAX_OFFSET_SECONDS {
        return Err(ValueError::new(format!(
            "has a zone offset beyond ±18:00: \"{}\"",
            clip(s)
        )));
    }
    check_fraction(
        s,
        fraction_digits(time_part),
        precision,
        "TIMESTAMP_LTZ",
        precision,
    )?;
    split_millis(nanos)
}
