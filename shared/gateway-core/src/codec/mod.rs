//! Schema-bound JSON ⇄ Fluss row codec.
//!
//! A [`RowCodec`] is built once per (table id, schema id) and cached with the table: it knows each
//! column's position, type and nullability, so decoding a row is one pass over the JSON object
//! with no lookups into Fluss metadata. Decoding follows the Fluss Gateway 1.0 rules (see
//! `decode`); a JSON write body is decoded straight from its bytes when it can be (see `stream`,
//! [`RowCodec::decode_write_body`]); encoding renders rows for lookups (see [`encode`]).

pub mod arrow;
mod built;
mod decode;
pub mod encode;
mod json_scalar;
mod number_texts;
mod row_ref;
mod stream;
mod temporal;
mod value_error;

use std::collections::HashMap;

use fluss::metadata::{DataType, RowType, TableInfo};

use crate::error::GatewayError;

pub(crate) use built::array_of_values;
pub use decode::{MAX_NESTING_DEPTH, PartialTarget};
pub use number_texts::NumberTexts;
pub use row_ref::RowRef;
pub use stream::{DecodedBatch, DecodedEntry};

/// One column as the codec sees it.
#[derive(Debug, Clone)]
pub(crate) struct ColumnSpec {
    pub(crate) name: String,
    pub(crate) data_type: DataType,
    pub(crate) nullable: bool,
    /// A partition column: its values become ZooKeeper path elements inside Fluss, so they
    /// pass the partition-value rule (`crate::names`) when decoded.
    pub(crate) partition: bool,
}

/// JSON ⇄ row conversion bound to one schema of one table.
#[derive(Debug, Clone)]
pub struct RowCodec {
    table_id: i64,
    schema_id: i32,
    row_type: RowType,
    columns: Vec<ColumnSpec>,
    by_name: HashMap<String, usize>,
    /// Positions of the primary-key columns, in key order (partition columns included).
    primary_key: Vec<usize>,
    /// Positions of the partition columns.
    partition_keys: Vec<usize>,
}

impl RowCodec {
    /// The codec of a table's current schema.
    pub fn new(info: &TableInfo) -> Result<Self, GatewayError> {
        Self::from_parts(
            info.table_id,
            info.schema_id,
            info.row_type.clone(),
            &info.primary_keys,
            &info.partition_keys,
        )
    }

    /// The codec of a schema given by parts (tests, benchmarks, fuzzing).
    pub fn from_parts(
        table_id: i64,
        schema_id: i32,
        row_type: RowType,
        primary_keys: &[String],
        partition_keys: &[String],
    ) -> Result<Self, GatewayError> {
        let columns: Vec<ColumnSpec> = row_type
            .fields()
            .iter()
            .map(|f| ColumnSpec {
                name: f.name().to_owned(),
                data_type: f.data_type().clone(),
                nullable: f.data_type().is_nullable(),
                partition: partition_keys.iter().any(|k| k == f.name()),
            })
            .collect();
        let by_name: HashMap<String, usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        let position = |name: &String| {
            by_name.get(name).copied().ok_or_else(|| {
                GatewayError::internal(format!("key column `{name}` is not in the schema"))
            })
        };
        let primary_key = primary_keys
            .iter()
            .map(position)
            .collect::<Result<_, _>>()?;
        let partition_keys = partition_keys
            .iter()
            .map(position)
            .collect::<Result<_, _>>()?;
        Ok(RowCodec {
            table_id,
            schema_id,
            row_type,
            columns,
            by_name,
            primary_key,
            partition_keys,
        })
    }

    /// Id of the table this codec was built for.
    pub fn table_id(&self) -> i64 {
        self.table_id
    }

    /// Id of the schema this codec was built for; a different id means the codec is stale.
    pub fn schema_id(&self) -> i32 {
        self.schema_id
    }

    /// The row type rows are decoded into.
    pub fn row_type(&self) -> &RowType {
        &self.row_type
    }

    /// Whether the table has a primary key (upsert/delete) or is a log table (append).
    pub fn has_primary_key(&self) -> bool {
        !self.primary_key.is_empty()
    }

    /// Names of the primary-key columns, in key order.
    pub fn primary_key_names(&self) -> impl Iterator<Item = &str> {
        self.primary_key
            .iter()
            .map(|&i| self.columns[i].name.as_str())
    }

    /// Names of the partition columns.
    pub fn partition_key_names(&self) -> impl Iterator<Item = &str> {
        self.partition_keys
            .iter()
            .map(|&i| self.columns[i].name.as_str())
    }

    /// Encodes a row of this table (e.g. a lookup result) as its JSON object.
    pub fn encode(
        &self,
        row: &dyn fluss::row::InternalRow,
    ) -> Result<serde_json::Map<String, serde_json::Value>, GatewayError> {
        encode::encode_row(&self.row_type, row)
    }
}
