//! The wire → Fluss request mapping, in one place: a CreateTable body as the `TableDescriptor`
//! Fluss creates, an AlterTable body as one `AlterTableChanges`, a partition spec or name as a
//! fluss-rs `PartitionSpec`, cluster config changes as `AlterConfig`s; and a table's
//! `TableInfo` as the description callers read back.
//!
//! Everything that can be checked without the server is checked here (names, key columns,
//! nullability of keys, distribution, property namespaces, partition keys) and refused with a
//! 400 naming the problem; `table.*` config keys themselves are the server's to validate.

use std::collections::HashMap;

use fluss::metadata::{
    AddColumn, AlterConfig, AlterConfigOpType, AlterTableChanges, Column, ColumnPositionType,
    JsonSerde, PartitionSpec, Schema, TableDescriptor, TableDescriptorBuilder, TableInfo,
};

use super::data_type::{column_type_json, parse_column_type};
use crate::error::GatewayError;
use crate::wire::{
    AlterClusterConfigsRequest, AlterTableRequest, ClusterConfigChange, ColumnDescription,
    CreateTableRequest, Distribution, Properties, TableChange, TableDescription,
    ValidateOnlyResponse,
};

/// Prefix of Fluss table properties; every other key is a custom property.
pub const TABLE_PROPERTY_PREFIX: &str = "table.";

/// Turns a CreateTable body into the descriptor Fluss creates, checking everything that can be
/// checked without the server: names, key columns, nullability of keys, distribution and
/// property namespaces. `table.*` config keys themselves are validated by the server.
pub fn table_descriptor(req: &CreateTableRequest) -> Result<TableDescriptor, GatewayError> {
    crate::names::check_name("table_name", &req.table_name)?;
    let names = column_names(req)?;
    let pk = primary_key(req, &names)?;
    let schema = schema(columns(req, pk)?, pk)?;
    let mut builder = TableDescriptor::builder().schema(schema);
    if !req.partitioned_by.is_empty() {
        builder = builder.partitioned_by(req.partitioned_by.clone());
    }
    builder = distribution(builder, req, &names, pk)?;
    builder = properties(builder, req)?;
    if let Some(c) = &req.comment {
        builder = builder.comment(c.clone());
    }
    builder
        .build()
        .map_err(|e| GatewayError::invalid(format!("invalid table definition: {e}")))
}

/// The declared column names: at least one, none empty, none twice.
fn column_names(req: &CreateTableRequest) -> Result<Vec<&str>, GatewayError> {
    if req.columns.is_empty() {
        return Err(GatewayError::invalid("`columns` must not be empty"));
    }
    let names: Vec<&str> = req.columns.iter().map(|c| c.name.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(GatewayError::invalid(format!(
                "column {i} has an empty name"
            )));
        }
        if names[..i].contains(name) {
            return Err(GatewayError::invalid(format!(
                "column `{name}` is declared twice"
            )));
        }
    }
    Ok(names)
}

/// 400 unless `cols` (the value of `field`) names declared columns, each once.
fn known(field: &str, cols: &[String], names: &[&str]) -> Result<(), GatewayError> {
    for (i, c) in cols.iter().enumerate() {
        if !names.contains(&c.as_str()) {
            return Err(GatewayError::invalid(format!(
                "`{field}` names unknown column `{c}`"
            )));
        }
        if cols[..i].contains(c) {
            return Err(GatewayError::invalid(format!(
                "`{field}` lists `{c}` more than once"
            )));
        }
    }
    Ok(())
}

/// The primary key (empty for a log table), checked with the partition columns it must hold.
fn primary_key<'r>(
    req: &'r CreateTableRequest,
    names: &[&str],
) -> Result<&'r [String], GatewayError> {
    let pk: &[String] = req.primary_key.as_deref().unwrap_or(&[]);
    if req.primary_key.is_some() && pk.is_empty() {
        return Err(GatewayError::invalid(
            "`primary_key` must not be empty; omit it for a log table",
        ));
    }
    known("primary_key", pk, names)?;
    known("partitioned_by", &req.partitioned_by, names)?;
    if !pk.is_empty()
        && let Some(p) = req.partitioned_by.iter().find(|p| !pk.contains(p))
    {
        return Err(GatewayError::invalid(format!(
            "partition column `{p}` must be part of the primary key"
        )));
    }
    Ok(pk)
}

/// The columns with their types; a key column is NOT NULL, and may not be declared nullable.
fn columns(req: &CreateTableRequest, pk: &[String]) -> Result<Vec<Column>, GatewayError> {
    let mut columns = Vec::with_capacity(req.columns.len());
    for c in &req.columns {
        let in_pk = pk.contains(&c.name);
        if in_pk && c.nullable == Some(true) {
            return Err(GatewayError::invalid(format!(
                "primary-key column `{}` must not declare nullable: true",
                c.name
            )));
        }
        let nullable = c.nullable.unwrap_or(!in_pk);
        let dt = parse_column_type(&c.name, &c.data_type, nullable)?;
        let mut col = Column::new(c.name.clone(), dt);
        if let Some(comment) = &c.comment {
            col = col.with_comment(comment.clone());
        }
        columns.push(col);
    }
    Ok(columns)
}

fn schema(columns: Vec<Column>, pk: &[String]) -> Result<Schema, GatewayError> {
    let mut schema = Schema::builder().with_columns(columns);
    if !pk.is_empty() {
        schema = schema.primary_key(pk.to_vec()).map_err(|e| {
            GatewayError::invalid(format!("invalid table schema: invalid primary key: {e}"))
        })?;
    }
    schema
        .build()
        .map_err(|e| GatewayError::invalid(format!("invalid table schema: {e}")))
}

/// The `distribution`, when given: bucket keys are declared, outside the partition columns and
/// inside the primary key.
fn distribution(
    mut builder: TableDescriptorBuilder,
    req: &CreateTableRequest,
    names: &[&str],
    pk: &[String],
) -> Result<TableDescriptorBuilder, GatewayError> {
    let Some(d) = &req.distribution else {
        return Ok(builder);
    };
    if d.bucket_count == 0 || d.bucket_count > i32::MAX as u32 {
        return Err(GatewayError::invalid(
            "`distribution.bucket_count` must be at least 1",
        ));
    }
    known("distribution.bucket_keys", &d.bucket_keys, names)?;
    if let Some(k) = d
        .bucket_keys
        .iter()
        .find(|k| req.partitioned_by.contains(k))
    {
        return Err(GatewayError::invalid(format!(
            "bucket key `{k}` must not be a partition column"
        )));
    }
    if !pk.is_empty()
        && let Some(k) = d.bucket_keys.iter().find(|k| !pk.contains(k))
    {
        return Err(GatewayError::invalid(format!(
            "bucket key `{k}` must be part of the primary key"
        )));
    }
    builder = builder.distributed_by(Some(d.bucket_count as i32), d.bucket_keys.clone());
    Ok(builder)
}

/// `configs` (Fluss's `table.*` properties) and `custom_properties` (everything else), each in
/// its own namespace.
fn properties(
    mut builder: TableDescriptorBuilder,
    req: &CreateTableRequest,
) -> Result<TableDescriptorBuilder, GatewayError> {
    for (k, v) in &req.configs {
        if !k.starts_with(TABLE_PROPERTY_PREFIX) {
            return Err(GatewayError::invalid(format!(
                "config `{k}` is not a Fluss table property (they start with `{TABLE_PROPERTY_PREFIX}`); use `custom_properties` for your own keys"
            )));
        }
        builder = builder.property(k.clone(), v.clone());
    }
    for (k, v) in &req.custom_properties {
        if k.starts_with(TABLE_PROPERTY_PREFIX) {
            return Err(GatewayError::invalid(format!(
                "custom property `{k}` must not start with `{TABLE_PROPERTY_PREFIX}`; put Fluss table properties in `configs`"
            )));
        }
        builder = builder.custom_property(k.clone(), v.clone());
    }
    Ok(builder)
}

/// The 200 answer of a `validate_only` CreateTable.
pub fn validate_only_summary(database: &str, req: &CreateTableRequest) -> ValidateOnlyResponse {
    ValidateOnlyResponse {
        validate_only: true,
        database: database.to_owned(),
        table: req.table_name.clone(),
        column_count: req.columns.len() as u32,
        primary_key: req.primary_key.clone().unwrap_or_default(),
    }
}

/// `GET …/tables/{table}`: a table as callers declared it.
pub fn table_description(info: &TableInfo) -> TableDescription {
    let pk = info.get_primary_keys();
    let columns = info
        .schema
        .columns()
        .iter()
        .map(|c| ColumnDescription {
            name: c.name().to_owned(),
            data_type: column_type_json(c.data_type()),
            nullable: c.data_type().is_nullable(),
            comment: c.comment().map(str::to_owned),
        })
        .collect();
    let non_empty = |m: Properties| (!m.is_empty()).then_some(m);
    let configs: Properties = info
        .properties
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let custom: Properties = info
        .custom_properties
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    TableDescription {
        database: info.table_path.database().to_owned(),
        table: info.table_path.table().to_owned(),
        columns,
        primary_key: (!pk.is_empty()).then(|| pk.clone()),
        partitioned_by: (!info.partition_keys.is_empty()).then(|| info.partition_keys.to_vec()),
        distribution: Some(Distribution {
            bucket_count: info.num_buckets.max(0) as u32,
            bucket_keys: info.bucket_keys.clone(),
        }),
        configs: non_empty(configs),
        custom_properties: non_empty(custom),
        comment: info.comment.clone(),
    }
}

/// The PATCH body as one fluss-rs `alter_table` call: added columns are always nullable (rows
/// already written have no value for them); `set_config` / `reset_config` are SET / DELETE of
/// the key, which Fluss applies to its table properties for `table.*` keys and to the custom
/// properties otherwise.
pub fn alter_table_changes(req: &AlterTableRequest) -> Result<AlterTableChanges, GatewayError> {
    req.ensure_valid()?;
    let mut changes = AlterTableChanges::default();
    for (i, change) in req.changes.iter().enumerate() {
        match change {
            TableChange::AddColumn {
                name,
                data_type,
                comment,
            } => {
                if name.trim().is_empty() {
                    return Err(GatewayError::invalid(format!(
                        "`changes[{i}].name` must not be empty"
                    )));
                }
                let dt = parse_column_type(name, data_type, true)?;
                let json = dt
                    .serialize_json()
                    .and_then(|v| {
                        serde_json::to_vec(&v).map_err(|e| fluss::error::Error::IllegalArgument {
                            message: e.to_string(),
                        })
                    })
                    .map_err(|_| {
                        GatewayError::invalid(format!(
                            "column `{name}`: the data_type cannot be sent to Fluss"
                        ))
                    })?;
                changes.add_columns.push(AddColumn {
                    column_name: name.clone(),
                    data_type_json: json,
                    comment: comment.clone(),
                    position: ColumnPositionType::Last,
                });
            }
            TableChange::SetConfig { key, value } => {
                ensure_key(i, key)?;
                changes.config_changes.push(AlterConfig::new(
                    key.clone(),
                    Some(value.clone()),
                    AlterConfigOpType::Set,
                ));
            }
            TableChange::ResetConfig { key } => {
                ensure_key(i, key)?;
                changes.config_changes.push(AlterConfig::new(
                    key.clone(),
                    None,
                    AlterConfigOpType::Delete,
                ));
            }
        }
    }
    Ok(changes)
}

fn ensure_key(index: usize, key: &str) -> Result<(), GatewayError> {
    if key.trim().is_empty() {
        return Err(GatewayError::invalid(format!(
            "`changes[{index}].key` must not be empty"
        )));
    }
    Ok(())
}

/// Separator of partition values in a partition name (Fluss's own): `2026-08-25$eu`.
pub const PARTITION_NAME_SEPARATOR: char = '$';

/// 400 for a table without partition keys.
fn ensure_partitioned(keys: &[String]) -> Result<(), GatewayError> {
    if keys.is_empty() {
        return Err(GatewayError::invalid("the table is not partitioned"));
    }
    Ok(())
}

/// The values of a wire partition `spec` in the order of the table's partition `keys`: exactly
/// one non-empty value per partition key.
pub fn partition_values_of_spec(
    keys: &[String],
    spec: &crate::wire::PartitionSpec,
) -> Result<Vec<String>, GatewayError> {
    ensure_partitioned(keys)?;
    if let Some(unknown) = spec.keys().find(|k| !keys.contains(k)) {
        return Err(GatewayError::invalid(format!(
            "`partition` names `{unknown}`, which is not a partition key (the keys are {})",
            quoted(keys)
        )));
    }
    keys.iter()
        .map(|key| match spec.get(key) {
            Some(v) if !v.is_empty() => Ok(v.clone()),
            Some(_) => Err(GatewayError::invalid(format!(
                "`partition.{key}` must not be empty"
            ))),
            None => Err(GatewayError::invalid(format!(
                "`partition` lacks a value for partition key `{key}` (the keys are {})",
                quoted(keys)
            ))),
        })
        .collect()
}

/// 400 for a value of a partition spec that Fluss cannot store (the identifier rule), named
/// as `` `partition.<key>` ``. Checked before any Fluss call: even a metadata lookup of such a
/// partition reaches ZooKeeper.
pub fn check_partition_spec_values(spec: &crate::wire::PartitionSpec) -> Result<(), GatewayError> {
    spec.iter().try_for_each(|(key, value)| {
        crate::names::check_partition_value(&format!("`partition.{key}`"), value)
    })
}

/// The values of a partition name: one non-empty value per partition key, joined by `$`.
pub fn partition_values_of_name(keys: &[String], name: &str) -> Result<Vec<String>, GatewayError> {
    ensure_partitioned(keys)?;
    let values: Vec<String> = name
        .split(PARTITION_NAME_SEPARATOR)
        .map(str::to_owned)
        .collect();
    if values.len() != keys.len() || values.iter().any(String::is_empty) {
        return Err(GatewayError::invalid(format!(
            "partition name `{name}` must be {} non-empty value(s) for {} joined by `$`",
            keys.len(),
            quoted(keys)
        )));
    }
    Ok(values)
}

/// The fluss-rs spec of `values` (in the order of the partition `keys`).
pub fn partition_spec(keys: &[String], values: &[String]) -> PartitionSpec {
    PartitionSpec::new(
        keys.iter()
            .cloned()
            .zip(values.iter().cloned())
            .collect::<HashMap<String, String>>(),
    )
}

fn quoted(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The wire cluster config changes as fluss-rs `AlterConfig`s, in request order
/// (`reset_config` is DELETE).
pub fn cluster_config_changes(request: &AlterClusterConfigsRequest) -> Vec<AlterConfig> {
    request
        .changes
        .iter()
        .map(|change| {
            let op = match change {
                ClusterConfigChange::SetConfig { .. } => AlterConfigOpType::Set,
                ClusterConfigChange::ResetConfig { .. } => AlterConfigOpType::Delete,
                ClusterConfigChange::AppendConfig { .. } => AlterConfigOpType::Append,
                ClusterConfigChange::SubtractConfig { .. } => AlterConfigOpType::Subtract,
            };
            AlterConfig::new(change.key(), change.value().map(str::to_owned), op)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    fn parse(body: &str) -> AlterTableRequest {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn alter_changes_map_to_one_fluss_call() {
        let changes = alter_table_changes(&parse(
            r#"{"changes":[{"kind":"add_column","name":"note","data_type":{"type":"DECIMAL","precision":18,"scale":2},"comment":"c"}]}"#,
        ))
        .unwrap();
        assert_eq!(changes.add_columns.len(), 1);
        let added = &changes.add_columns[0];
        assert_eq!(added.column_name, "note");
        assert_eq!(added.comment.as_deref(), Some("c"));
        let json: serde_json::Value = serde_json::from_slice(&added.data_type_json).unwrap();
        assert_eq!(json["type"], "DECIMAL");
        assert_eq!(json["precision"], 18);

        let changes = alter_table_changes(&parse(
            r#"{"changes":[{"kind":"set_config","key":"owner","value":"a"},{"kind":"reset_config","key":"table.x"}]}"#,
        ))
        .unwrap();
        assert_eq!(
            changes.config_changes,
            vec![
                AlterConfig::new("owner", Some("a".into()), AlterConfigOpType::Set),
                AlterConfig::new("table.x", None, AlterConfigOpType::Delete),
            ]
        );
    }

    #[test]
    fn alter_changes_refuse_mixes_empty_keys_and_bad_types() {
        for bad in [
            r#"{"changes":[]}"#,
            r#"{"changes":[{"kind":"add_column","name":"a","data_type":{"type":"INTEGER"}},{"kind":"set_config","key":"k","value":"v"}]}"#,
            r#"{"changes":[{"kind":"set_config","key":" ","value":"v"}]}"#,
            r#"{"changes":[{"kind":"reset_config","key":""}]}"#,
            r#"{"changes":[{"kind":"add_column","name":"","data_type":{"type":"INTEGER"}}]}"#,
            r#"{"changes":[{"kind":"add_column","name":"a","data_type":{"type":"DECIMAL","precision":99,"scale":0}}]}"#,
            r#"{"changes":[{"kind":"add_column","name":"a","data_type":{"type":"INTEGER","nullable":false}}]}"#,
        ] {
            let e = alter_table_changes(&parse(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
    }

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| (*s).to_owned()).collect()
    }

    fn spec(pairs: &[(&str, &str)]) -> crate::wire::PartitionSpec {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn partition_names_split_on_dollar_in_key_order() {
        let k = keys(&["dt", "region"]);
        assert_eq!(
            partition_values_of_name(&k, "2026-08-25$eu").unwrap(),
            ["2026-08-25", "eu"]
        );
        assert_eq!(
            partition_values_of_name(&keys(&["dt"]), "2026-08-25").unwrap(),
            ["2026-08-25"]
        );
        for bad in ["2026-08-25", "a$b$c", "$eu", "a$", ""] {
            let e = partition_values_of_name(&k, bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        let e = partition_values_of_name(&[], "x").unwrap_err();
        assert!(e.message().contains("not partitioned"), "{e}");
    }

    #[test]
    fn partition_specs_need_exactly_the_partition_keys() {
        let k = keys(&["dt", "region"]);
        assert_eq!(
            partition_values_of_spec(&k, &spec(&[("region", "eu"), ("dt", "d1")])).unwrap(),
            ["d1", "eu"]
        );
        for bad in [
            spec(&[("dt", "d1")]),
            spec(&[("dt", "d1"), ("region", "eu"), ("x", "1")]),
            spec(&[("dt", ""), ("region", "eu")]),
            spec(&[]),
        ] {
            let e = partition_values_of_spec(&k, &bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad:?}");
        }
        let s = partition_spec(&k, &["d1".into(), "eu".into()]);
        assert_eq!(s.get_spec_map()["region"], "eu");
    }

    #[test]
    fn configs_changes_map_to_fluss_operations_in_order() {
        let req: AlterClusterConfigsRequest = serde_json::from_str(
            r#"{"changes":[{"kind":"set_config","key":"a","value":"1"},{"kind":"reset_config","key":"b"},
                {"kind":"append_config","key":"c","value":"x"},{"kind":"subtract_config","key":"d","value":"y"}]}"#,
        )
        .unwrap();
        assert_eq!(
            cluster_config_changes(&req),
            vec![
                AlterConfig::new("a", Some("1".into()), AlterConfigOpType::Set),
                AlterConfig::new("b", None, AlterConfigOpType::Delete),
                AlterConfig::new("c", Some("x".into()), AlterConfigOpType::Append),
                AlterConfig::new("d", Some("y".into()), AlterConfigOpType::Subtract),
            ]
        );
    }
}
