//! Metric data points: what every point type has ([`Point`]) and the values of the columns
//! of each type's own.

use fluss::row::Datum;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::exponential_histogram_data_point::Buckets;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumberValue;
use opentelemetry_proto::tonic::metrics::v1::{
    Exemplar, ExponentialHistogramDataPoint, HistogramDataPoint, NumberDataPoint, SummaryDataPoint,
};

use super::schema::NestedTypes;
use super::value::{Columns, array, count, double};
use crate::error::GatewayError;

/// What every metric data point has, whatever its type.
pub(super) trait Point {
    fn attributes(&self) -> &[KeyValue];
    /// Start and observation times.
    fn times(&self) -> (u64, u64);
    fn flags(&self) -> u32;
    fn exemplars(&self) -> &[Exemplar];
}

macro_rules! point {
    ($t:ty, |$d:ident| $exemplars:expr) => {
        impl Point for $t {
            fn attributes(&self) -> &[KeyValue] {
                &self.attributes
            }
            fn times(&self) -> (u64, u64) {
                (self.start_time_unix_nano, self.time_unix_nano)
            }
            fn flags(&self) -> u32 {
                self.flags
            }
            fn exemplars(&self) -> &[Exemplar] {
                let $d = self;
                $exemplars
            }
        }
    };
}

point!(NumberDataPoint, |d| &d.exemplars);
point!(HistogramDataPoint, |d| &d.exemplars);
point!(ExponentialHistogramDataPoint, |d| &d.exemplars);
point!(SummaryDataPoint, |_d| &[]);

/// The own columns of an exponential histogram point.
pub(super) fn exponential_columns<'a>(
    types: &NestedTypes,
    d: &ExponentialHistogramDataPoint,
    temporality: i32,
    what: &dyn Fn(&str) -> String,
) -> Result<Columns<'a>, GatewayError> {
    let buckets = |b: Option<&Buckets>, f: &str| -> Result<(Datum<'a>, Datum<'a>), GatewayError> {
        match b {
            None => Ok((Datum::Null, counts(types, &[], &|| what(f))?)),
            Some(b) => Ok((
                Datum::Int32(b.offset),
                counts(types, &b.bucket_counts, &|| what(f))?,
            )),
        }
    };
    let (pos_offset, pos_counts) = buckets(d.positive.as_ref(), "positive")?;
    let (neg_offset, neg_counts) = buckets(d.negative.as_ref(), "negative")?;
    Ok(vec![
        ("count", count(d.count, &|| what("count"))?),
        ("sum", optional(d.sum)),
        ("scale", Datum::Int32(d.scale)),
        ("zero_count", count(d.zero_count, &|| what("zero_count"))?),
        ("zero_threshold", double(d.zero_threshold)),
        ("positive_offset", pos_offset),
        ("positive_bucket_counts", pos_counts),
        ("negative_offset", neg_offset),
        ("negative_bucket_counts", neg_counts),
        ("min", optional(d.min)),
        ("max", optional(d.max)),
        ("aggregation_temporality", Datum::Int32(temporality)),
    ])
}

/// `value` and `int_value` of a gauge or sum point.
pub(super) fn number_columns(v: Option<NumberValue>) -> [(&'static str, Datum<'static>); 2] {
    let (value, int_value) = number(v);
    [("value", value), ("int_value", int_value)]
}

/// An optional double (`sum`, `min`, `max` of a histogram).
pub(super) fn optional(d: Option<f64>) -> Datum<'static> {
    d.map_or(Datum::Null, double)
}

/// Bucket counts as a `BIGINT` array.
pub(super) fn counts(
    types: &NestedTypes,
    counts: &[u64],
    what: &dyn Fn() -> String,
) -> Result<Datum<'static>, GatewayError> {
    let values = counts
        .iter()
        .map(|n| count(*n, what))
        .collect::<Result<Vec<_>, _>>()?;
    array(&types.bucket_count, values, what)
}

/// A number point as `value` (a double, also for an integer point, for queries that want one
/// column) and `int_value` (the exact integer of an integer point, `null` for a double one).
pub(super) fn number(v: Option<NumberValue>) -> (Datum<'static>, Datum<'static>) {
    match v {
        #[allow(clippy::cast_precision_loss)] // `int_value` keeps the exact value beside it.
        Some(NumberValue::AsInt(n)) => (double(n as f64), Datum::Int64(n)),
        Some(NumberValue::AsDouble(d)) => (double(d), Datum::Null),
        None => (Datum::Null, Datum::Null),
    }
}
