//! Arrow IPC stream write bodies (`application/vnd.apache.arrow.stream`): read within the
//! request's limits ([`ArrowBody::read`]), then decoded against a table into the entries every
//! write takes ([`RowCodec::decode_arrow`]), by the same rules as JSON: columns by name, values
//! stored exactly or refused, partition values through the identifier rule, nothing submitted
//! from a body with one bad value.
//!
//! On a primary-key table each row upserts; a BOOLEAN column `_delete` (when the table has no
//! column of that name) deletes the rows where it is true; a body without some non-key columns
//! is a partial update of the columns it has. On a log table each row appends; a missing
//! nullable column is null.

mod conform;
mod frames;
mod place;
mod temporal;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{DataType as Arrow, Field, Schema, SchemaRef};
use fluss::row::field_getter::FieldGetter;
use fluss::row::{ColumnarRow, Datum, GenericRow};

use super::{DecodedBatch, DecodedEntry, PartialTarget, RowCodec};
use crate::error::GatewayError;
use crate::names::check_partition_value;
use crate::wire::WriteOp;
use conform::{conform, target_type};
pub use frames::ArrowLimits;
use place::Place;

/// The media type of an Arrow IPC stream.
pub const ARROW_STREAM: &str = "application/vnd.apache.arrow.stream";

/// The column that marks rows to delete from a primary-key table (unless the table has a
/// column of that name).
pub const DELETE_COLUMN: &str = "_delete";

/// An Arrow IPC stream read and checked: its schema and record batches.
#[derive(Debug, Clone)]
pub struct ArrowBody {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    rows: usize,
}

impl ArrowBody {
    /// Reads `stream` after checking what its messages declare against `limits` (413 over a
    /// limit; 400 for a stream that is cut short, lies about its buffers or refers to a
    /// dictionary it never sent). Every batch is validated by arrow-ipc as it is decoded.
    ///
    /// The batches' buffers are slices of `stream` where they are aligned (the body is not
    /// copied: a request's `Bytes` become the buffer as they are); a misaligned one is copied.
    pub fn read(
        stream: impl Into<arrow_buffer::Buffer>,
        limits: ArrowLimits,
    ) -> Result<Self, GatewayError> {
        let stream: arrow_buffer::Buffer = stream.into();
        if stream.is_empty() {
            return Err(GatewayError::invalid(
                "the body is empty; an Arrow IPC stream starts with its schema",
            ));
        }
        // Bytes after the end marker are no part of the stream (arrow-ipc's decoder would
        // refuse them).
        let end = frames::check(&stream, limits)?;
        let stream = stream.slice_with_length(0, end);
        let invalid = |e: arrow_schema::ArrowError| {
            GatewayError::invalid(format!("the body is not a valid Arrow IPC stream: {e}"))
        };
        // arrow-ipc panics (`unimplemented!`, `panic!`) on some malformed schema messages
        // instead of returning an error: caught here, the caller gets its 400 like any other
        // malformed stream, and the container keeps its connections.
        let decoded = std::panic::catch_unwind(move || {
            let mut rest = stream;
            let mut decoder = arrow_ipc::reader::StreamDecoder::new();
            let mut batches = Vec::new();
            while !rest.is_empty() {
                if let Some(batch) = decoder.decode(&mut rest)? {
                    batches.push(batch);
                }
            }
            decoder.finish()?;
            let schema = decoder.schema().ok_or_else(|| {
                arrow_schema::ArrowError::IpcError("the stream has no schema message".into())
            })?;
            Ok((schema, batches))
        });
        let (schema, batches) = match decoded {
            Ok(decoded) => decoded.map_err(invalid)?,
            Err(_) => {
                return Err(GatewayError::invalid(
                    "the body is not a valid Arrow IPC stream: its schema or a batch is \
                     malformed (the Arrow reader gave up on it)",
                ));
            }
        };
        let rows = batches.iter().map(RecordBatch::num_rows).sum();
        Ok(ArrowBody {
            schema,
            batches,
            rows,
        })
    }

    /// Rows in all batches.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The stream's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

/// Where each column of the body goes.
#[derive(Debug, Clone)]
struct Layout {
    /// For each table column: the body column holding it, if any.
    sources: Vec<Option<usize>>,
    /// The body's `_delete` column.
    delete: Option<usize>,
    /// The columns of a partial update (a primary-key table, some non-key column absent).
    target: Option<PartialTarget>,
}

/// An Arrow body conformed to a table: each batch in the table's own Arrow types and column
/// order (absent columns null), every value checked.
#[derive(Debug, Clone)]
pub struct ConformedArrow {
    /// The batches, in stream order, with the stream position of each one's first row.
    pub batches: Vec<(usize, RecordBatch)>,
    /// Each batch's `_delete` flags, when the body has the column.
    deletes: Vec<Option<Vec<bool>>>,
    layout: Layout,
    rows: usize,
}

impl ConformedArrow {
    /// Rows in all batches.
    pub fn rows(&self) -> usize {
        self.rows
    }
}

impl RowCodec {
    /// Conforms `body` to this table: columns by name in the table's Arrow types, every value
    /// checked (NOT NULL, CHAR and BINARY lengths, digits, partition values). The first
    /// problem rejects the whole body (400 naming the row and column, or the column and both
    /// types).
    pub fn conform_arrow(&self, body: &ArrowBody) -> Result<ConformedArrow, GatewayError> {
        let layout = self.arrow_layout(&body.schema)?;
        // Every column nullable: NOT NULL is checked per row (a delete needs the key only).
        let table_schema: SchemaRef = Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| Ok(Field::new(&c.name, target_type(&c.data_type)?, true)))
                .collect::<Result<Vec<_>, GatewayError>>()?,
        ));
        let mut batches = Vec::with_capacity(body.batches.len());
        let mut all_deletes = Vec::with_capacity(body.batches.len());
        let mut first_row = 0usize;
        for batch in &body.batches {
            let rows = batch.num_rows();
            let deletes = Self::deletes(batch, &layout);
            let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
            for (pos, (col, source)) in self.columns.iter().zip(&layout.sources).enumerate() {
                let column = match source {
                    Some(i) => {
                        let at = Place {
                            what: format!("column `{}`", col.name),
                            first_row: Some(first_row),
                        };
                        let column = conform(batch.column(*i), &col.data_type, &at)?;
                        self.check_column(pos, &column, deletes.as_deref(), &at)?;
                        column
                    }
                    None => new_null_array(table_schema.field(pos).data_type(), rows),
                };
                columns.push(column);
            }
            let conformed = RecordBatch::try_new(table_schema.clone(), columns).map_err(|e| {
                GatewayError::invalid(format!("the Arrow batch does not form rows: {e}"))
            })?;
            if rows > 0 {
                batches.push((first_row, conformed));
                all_deletes.push(deletes);
            }
            first_row += rows;
        }
        Ok(ConformedArrow {
            batches,
            deletes: all_deletes,
            layout,
            rows: first_row,
        })
    }

    /// Decodes `body` against this table: one entry per row, its id the row's position in the
    /// stream (from 0); refusals as [`RowCodec::conform_arrow`]'s.
    pub fn decode_arrow(&self, body: &ArrowBody) -> Result<DecodedBatch<'static>, GatewayError> {
        let conformed = self.conform_arrow(body)?;
        let row_type = Arc::new(self.row_type().clone());
        let getters: Vec<FieldGetter> = self
            .columns
            .iter()
            .enumerate()
            .map(|(pos, c)| FieldGetter::create(&c.data_type, pos))
            .collect();
        let layout = &conformed.layout;
        let mut entries = Vec::with_capacity(conformed.rows);
        for ((first_row, batch), deletes) in conformed.batches.iter().zip(&conformed.deletes) {
            let rows = batch.num_rows();
            let mut row = ColumnarRow::new(Arc::new(batch.clone()), row_type.clone(), 0, None)
                .map_err(|e| GatewayError::internal(format!("an Arrow batch as rows: {e}")))?;
            for i in 0..rows {
                row.set_row_id(i);
                let delete = deletes.as_ref().is_some_and(|d| d[i]);
                let op = match (self.has_primary_key(), delete) {
                    (false, _) => WriteOp::Append,
                    (true, false) => WriteOp::Upsert,
                    (true, true) => WriteOp::Delete,
                };
                let mut out = GenericRow::new(self.columns.len());
                for (pos, getter) in getters.iter().enumerate() {
                    let wanted = match op {
                        WriteOp::Delete => self.primary_key.contains(&pos),
                        _ => layout.sources[pos].is_some(),
                    };
                    if !wanted {
                        continue;
                    }
                    let datum: Datum<'_> = getter.get_field(&row).map_err(|e| {
                        GatewayError::invalid(format!(
                            "row {}: column `{}` does not read: {e}",
                            first_row + i,
                            self.columns[pos].name
                        ))
                    })?;
                    out.set_field(pos, datum);
                }
                entries.push(DecodedEntry {
                    id: (first_row + i).to_string(),
                    op,
                    row: out.into_owned(),
                });
            }
        }
        Ok(DecodedBatch {
            target: conformed.layout.target,
            entries,
        })
    }

    /// Which body column holds each table column; unknown, repeated or missing required
    /// columns are 400 (an unknown one as `unknown_column`, so a schema the cache has not seen
    /// yet is reloaded).
    fn arrow_layout(&self, schema: &Schema) -> Result<Layout, GatewayError> {
        let mut sources = vec![None; self.columns.len()];
        let mut delete = None;
        for (i, field) in schema.fields().iter().enumerate() {
            let name = field.name();
            match self.by_name.get(name) {
                Some(&pos) if sources[pos].is_some() => {
                    return Err(GatewayError::invalid(format!(
                        "the Arrow schema has column `{name}` twice"
                    )));
                }
                Some(&pos) => sources[pos] = Some(i),
                None if name == DELETE_COLUMN => {
                    if !self.has_primary_key() {
                        return Err(GatewayError::invalid(format!(
                            "column `{DELETE_COLUMN}` deletes rows of a primary-key table; this \
                             is a log table (append only)"
                        )));
                    }
                    if field.data_type() != &Arrow::Boolean {
                        return Err(GatewayError::invalid(format!(
                            "column `{DELETE_COLUMN}` must be BOOLEAN (Arrow bool), not {}",
                            field.data_type()
                        )));
                    }
                    delete = Some(i);
                }
                None => {
                    return Err(GatewayError::unknown_column(format!(
                        "the Arrow schema names column `{name}`, which the table does not have"
                    )));
                }
            }
        }
        let missing: Vec<usize> = (0..self.columns.len())
            .filter(|p| sources[*p].is_none())
            .collect();
        let target = if self.has_primary_key() && !missing.is_empty() {
            if let Some(key) = self.primary_key.iter().find(|p| sources[**p].is_none()) {
                return Err(GatewayError::invalid(format!(
                    "the Arrow schema lacks primary-key column `{}`",
                    self.columns[*key].name
                )));
            }
            let present: Vec<String> = self
                .columns
                .iter()
                .zip(&sources)
                .filter(|(_, s)| s.is_some())
                .map(|(c, _)| c.name.clone())
                .collect();
            Some(self.partial_target(&present).map_err(|e| {
                GatewayError::invalid(format!(
                    "the Arrow schema lacks columns, which makes it a partial update of the \
                     others: {}",
                    e.message()
                ))
            })?)
        } else {
            if let Some(required) = missing.iter().find(|p| !self.columns[**p].nullable) {
                return Err(GatewayError::invalid(format!(
                    "the Arrow schema lacks column `{}`, which is NOT NULL",
                    self.columns[*required].name
                )));
            }
            None
        };
        Ok(Layout {
            sources,
            delete,
            target,
        })
    }

    /// Each row's `_delete` flag (a null flag is false), or `None` without the column.
    fn deletes(batch: &RecordBatch, layout: &Layout) -> Option<Vec<bool>> {
        let i = layout.delete?;
        let flags = batch.column(i).as_boolean();
        let deletes: Vec<bool> = (0..flags.len())
            .map(|r| flags.is_valid(r) && flags.value(r))
            .collect();
        Some(deletes)
    }

    /// NOT NULL and key columns hold a value in every row that needs one (a delete needs only
    /// the key); partition values pass the identifier rule.
    fn check_column(
        &self,
        pos: usize,
        column: &ArrayRef,
        deletes: Option<&[bool]>,
        at: &Place,
    ) -> Result<(), GatewayError> {
        let spec = &self.columns[pos];
        let key = self.primary_key.contains(&pos);
        if column.null_count() > 0 && (key || !spec.nullable) {
            let needs = |i: usize| key || !deletes.is_some_and(|d| d[i]);
            if let Some(i) = (0..column.len()).find(|&i| column.is_null(i) && needs(i)) {
                return Err(GatewayError::invalid(format!(
                    "row {}: column `{}` is required and must not be null",
                    at.first_row.unwrap_or(0) + i,
                    spec.name
                )));
            }
        }
        if spec.partition
            && let Arrow::Utf8 = column.data_type()
        {
            for (i, value) in column.as_string::<i32>().iter().enumerate() {
                if let Some(value) = value {
                    check_partition_value(
                        &format!(
                            "row {}: column `{}`",
                            at.first_row.unwrap_or(0) + i,
                            spec.name
                        ),
                        value,
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
