//! Fluss types and requests as the wire spells them: the `data_type` grammar (`data_type`), and
//! the mapping of wire requests to the fluss-rs values that carry them (`table_schema`).

pub mod data_type;
pub mod table_schema;

pub use data_type::{
    MAX_DECIMAL_PRECISION, MAX_STORED_TIME_PRECISION, MAX_TIME_PRECISION, MAX_TYPE_DEPTH,
    column_type_json, parse_column_type,
};
pub use table_schema::{
    PARTITION_NAME_SEPARATOR, TABLE_PROPERTY_PREFIX, alter_table_changes,
    check_partition_spec_values, cluster_config_changes, partition_spec, partition_values_of_name,
    partition_values_of_spec, table_description, table_descriptor, validate_only_summary,
};
