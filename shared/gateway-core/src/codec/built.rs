//! Rows a producer built itself in a table's column order (the OTLP receiver's, straight from
//! the decoded message): taken as appends when the table's row type is exactly the one they
//! were built for, after the same partition-value rule as decoded rows.

use fluss::metadata::{DataType, RowType};
use fluss::row::{DataGetters, Datum, FlussArray, GenericRow};

use super::{DecodedBatch, DecodedEntry, RowCodec};
use crate::error::GatewayError;
use crate::names::check_partition_value;
use crate::wire::WriteOp;

impl RowCodec {
    /// `rows`, built for `row_type`, as a batch of appends to this table: 400 naming the
    /// first column that differs when this table's row type is not `row_type` (a table of the
    /// same name created otherwise), or when it has a primary key (the refusal of an append
    /// every write path gives, naming the first row). The entries' ids are empty:
    /// the producer knows its rows by position (outcomes come back in input order).
    pub fn append_rows<'b>(
        &self,
        row_type: &RowType,
        rows: Vec<GenericRow<'b>>,
    ) -> Result<DecodedBatch<'b>, GatewayError> {
        if let Some(problem) = difference(&self.row_type, row_type) {
            return Err(GatewayError::invalid(format!(
                "the table's columns are not the ones these rows are for: {problem}"
            )));
        }
        if !rows.is_empty() {
            self.check_op("row 0", WriteOp::Append)?;
        }
        let mut checked: Option<String> = None;
        let mut entries = Vec::with_capacity(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            for &p in &self.partition_keys {
                let value = row.get_string(p).map_err(|e| {
                    GatewayError::invalid(format!("row {i}: partition column {p}: {e}"))
                })?;
                // Rows of one export share their partition: checked once.
                if checked.as_deref() != Some(value) {
                    let column = &self.columns[p].name;
                    check_partition_value(&format!("row {i}: column `{column}`"), value)?;
                    checked = Some(value.to_owned());
                }
            }
            entries.push(DecodedEntry {
                id: String::new(),
                op: WriteOp::Append,
                row,
            });
        }
        Ok(DecodedBatch {
            target: None,
            entries,
        })
    }
}

/// The first column where `table` and `built` differ (name, type or nullability), or a
/// different column count.
fn difference(table: &RowType, built: &RowType) -> Option<String> {
    for (i, (t, b)) in table.fields().iter().zip(built.fields()).enumerate() {
        if t.name() != b.name() || t.data_type() != b.data_type() {
            return Some(format!(
                "column {} is `{}` {}, expected `{}` {}",
                i + 1,
                t.name(),
                t.data_type(),
                b.name(),
                b.data_type()
            ));
        }
    }
    let (t, b) = (table.fields().len(), built.fields().len());
    (t != b).then(|| format!("the table has {t} columns, expected {b}"))
}

/// An ARRAY value of `element` from values each already of that type (the OTLP rows' nested
/// values), written by the rules the decoder writes arrays with; `None` when one cannot be
/// encoded.
pub(crate) fn array_of_values(
    element: &DataType,
    mut values: Vec<Datum<'_>>,
) -> Option<FlussArray> {
    super::decode::array_of(element, &mut values)
}
