//! Catalog bodies: databases, tables (create, describe, alter) and partitions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{PartitionSpec, Properties, is_false, null_as_default};
use crate::error::GatewayError;

// ---------------------------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------------------------

/// `GET …/databases` → 200, one page in lexical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabasesResponse {
    /// Database names of this page.
    pub databases: Vec<String>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST …/databases` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateDatabaseRequest {
    /// Name of the database to create.
    pub database: String,
}

/// `POST …/databases` → 201 (with `Location`): the created database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseResponse {
    /// Name of the created database.
    pub database: String,
}

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

/// `GET …/databases/{database}/tables` → 200, one page in lexical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablesResponse {
    /// Table names of this page.
    pub tables: Vec<String>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// One column of a [`CreateTableRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnDefinition {
    /// Column name.
    pub name: String,
    /// Fluss type in `DataTypeJsonSerde` form (`{"type":"DECIMAL","precision":10,"scale":2}`);
    /// converted by the module that owns Fluss types, so it stays raw JSON here.
    pub data_type: Value,
    /// Top-level nullability. Omitted: NOT NULL for primary-key columns (which reject `true`),
    /// nullable otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nullable: Option<bool>,
    /// Column comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Bucket distribution of a table, in requests and descriptions alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distribution {
    /// Number of buckets.
    pub bucket_count: u32,
    /// Columns hashed to pick a bucket; for primary-key tables a subset of the key. Empty means
    /// the Fluss default (the key without partition columns, or round robin for log tables).
    #[serde(default, deserialize_with = "null_as_default")]
    pub bucket_keys: Vec<String>,
}

/// `POST …/databases/{database}/tables` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTableRequest {
    /// Name of the table to create inside `{database}`.
    pub table_name: String,
    /// Columns in schema order.
    pub columns: Vec<ColumnDefinition>,
    /// Primary-key columns; omitted (or `null`) for a log table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<Vec<String>>,
    /// Partition columns; empty for an unpartitioned table.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub partitioned_by: Vec<String>,
    /// Bucket distribution; omitted for the server default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Fluss `table.*` properties, validated by the server (unknown keys are a 400).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub configs: Properties,
    /// Caller metadata; keys must not start with `table.`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub custom_properties: Properties,
    /// Table comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Validate the definition and answer 200 [`ValidateOnlyResponse`] without creating anything.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub validate_only: bool,
}

/// `POST …/tables` with `"validate_only": true` → 200: what would have been created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateOnlyResponse {
    /// Always `true`, so callers can tell this body from a creation.
    pub validate_only: bool,
    /// Database the table would be created in.
    pub database: String,
    /// Table name.
    pub table: String,
    /// Number of columns of the validated schema.
    pub column_count: u32,
    /// Primary-key columns; empty for a log table.
    pub primary_key: Vec<String>,
}

impl ValidateOnlyResponse {
    /// The dry-run answer for a definition that passed validation.
    pub fn new(
        database: impl Into<String>,
        table: impl Into<String>,
        column_count: u32,
        primary_key: Vec<String>,
    ) -> Self {
        ValidateOnlyResponse {
            validate_only: true,
            database: database.into(),
            table: table.into(),
            column_count,
            primary_key,
        }
    }
}

/// One column of a [`TableDescription`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnDescription {
    /// Column name.
    pub name: String,
    /// Fluss type in `DataTypeJsonSerde` form, without top-level nullability.
    pub data_type: Value,
    /// Top-level nullability.
    pub nullable: bool,
    /// Column comment, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// `GET …/tables/{table}` → 200: schema, keys, distribution, partitioning and properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDescription {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// Columns in schema order.
    pub columns: Vec<ColumnDescription>,
    /// Primary-key columns of a primary-key table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<Vec<String>>,
    /// Partition columns of a partitioned table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioned_by: Option<Vec<String>>,
    /// Bucket distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Fluss `table.*` properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Properties>,
    /// Caller metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_properties: Option<Properties>,
    /// Table comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// `PATCH …/tables/{table}` body → 204.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlterTableRequest {
    /// Changes applied together; all schema changes or all config changes.
    pub changes: Vec<TableChange>,
}

impl AlterTableRequest {
    /// 400 unless there is at least one change and the changes are not a mix of schema and
    /// config changes: Fluss applies the two through different calls, so a mixed request could
    /// half-apply.
    pub fn ensure_valid(&self) -> Result<(), GatewayError> {
        let Some(first) = self.changes.first() else {
            return Err(GatewayError::invalid("`changes` must not be empty"));
        };
        if self
            .changes
            .iter()
            .any(|c| c.is_schema_change() != first.is_schema_change())
        {
            return Err(GatewayError::invalid(
                "schema changes (`add_column`) and config changes (`set_config`, `reset_config`) \
                 cannot be mixed in one request",
            ));
        }
        Ok(())
    }
}

/// One table change, tagged by `kind`. Config keys under `table.` address Fluss table
/// properties; other keys address custom properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TableChange {
    /// Appends a column; it is always nullable because existing rows have no value for it.
    AddColumn {
        /// Column name.
        name: String,
        /// Fluss type in `DataTypeJsonSerde` form.
        data_type: Value,
        /// Column comment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
    },
    /// Sets a property.
    SetConfig {
        /// Property key.
        key: String,
        /// New value.
        value: String,
    },
    /// Removes an explicitly set property.
    ResetConfig {
        /// Property key.
        key: String,
    },
}

impl TableChange {
    /// True for changes to the schema rather than to properties.
    pub fn is_schema_change(&self) -> bool {
        matches!(self, TableChange::AddColumn { .. })
    }
}

// ---------------------------------------------------------------------------------------------
// Partitions
// ---------------------------------------------------------------------------------------------

/// One partition of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionEntry {
    /// Fluss partition name (values in key order joined by `$`); percent-encode it as the
    /// `{partition}` path segment to drop the partition.
    pub name: String,
    /// The same partition as column → value.
    pub partition: PartitionSpec,
}

/// `GET …/tables/{table}/partitions` → 200, one page in partition-name order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionsResponse {
    /// Partitions of this page.
    pub partitions: Vec<PartitionEntry>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST …/tables/{table}/partitions` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatePartitionRequest {
    /// A value for every partition column (each column once).
    #[serde(deserialize_with = "super::strict_partition")]
    pub partition: PartitionSpec,
}

/// `POST …/tables/{table}/partitions` → 201 (with `Location`): the created partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionResponse {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// The created partition.
    pub partition: PartitionSpec,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::wire::tests::{assert_unknown_field, parse, to_json};
    use serde_json::json;

    // --- databases ---

    #[test]
    fn database_bodies_round_trip() {
        let req: CreateDatabaseRequest = parse(json!({"database":"sales"})).unwrap();
        assert_eq!(req.database, "sales");
        assert_unknown_field::<CreateDatabaseRequest>(
            json!({"database":"sales","comment":"x"}),
            "comment",
        );
        assert!(parse::<CreateDatabaseRequest>(json!({})).is_err());
        assert_eq!(
            to_json(&DatabaseResponse {
                database: "sales".into()
            }),
            json!({"database":"sales"})
        );
    }

    #[test]
    fn listings_send_next_page_token_only_while_more_follow() {
        let last = DatabasesResponse {
            databases: vec!["a".into(), "b".into()],
            next_page_token: None,
        };
        assert_eq!(to_json(&last), json!({"databases":["a","b"]}));
        let more = TablesResponse {
            tables: vec!["t".into()],
            next_page_token: Some("tok".into()),
        };
        assert_eq!(
            to_json(&more),
            json!({"tables":["t"],"next_page_token":"tok"})
        );
        assert_eq!(
            parse::<DatabasesResponse>(json!({"databases":["a","b"]})),
            Ok(last)
        );
        assert_eq!(
            parse::<TablesResponse>(json!({"tables":["t"],"next_page_token":"tok"})),
            Ok(more)
        );
    }

    // --- tables ---

    fn full_create_table() -> Value {
        json!({
            "table_name": "orders",
            "columns": [
                {"name":"id","data_type":{"type":"BIGINT"}},
                {"name":"dt","data_type":{"type":"STRING"},"nullable":false},
                {"name":"amount","data_type":{"type":"DECIMAL","precision":10,"scale":2},
                 "nullable":true,"comment":"in EUR"}
            ],
            "primary_key": ["id","dt"],
            "partitioned_by": ["dt"],
            "distribution": {"bucket_count": 4, "bucket_keys": ["id"]},
            "configs": {"table.replication.factor":"1"},
            "custom_properties": {"owner":"team-a"},
            "comment": "all orders",
            "validate_only": true
        })
    }

    #[test]
    fn create_table_parses_every_field() {
        let req: CreateTableRequest = parse(full_create_table()).unwrap();
        assert_eq!(req.table_name, "orders");
        assert_eq!(req.columns.len(), 3);
        assert_eq!(req.columns[0].data_type, json!({"type":"BIGINT"}));
        assert_eq!(req.columns[0].nullable, None);
        assert_eq!(req.columns[1].nullable, Some(false));
        assert_eq!(req.columns[2].comment.as_deref(), Some("in EUR"));
        assert_eq!(
            req.primary_key,
            Some(vec!["id".to_owned(), "dt".to_owned()])
        );
        assert_eq!(req.partitioned_by, vec!["dt".to_owned()]);
        assert_eq!(
            req.distribution,
            Some(Distribution {
                bucket_count: 4,
                bucket_keys: vec!["id".into()]
            })
        );
        assert_eq!(req.configs.get("table.replication.factor").unwrap(), "1");
        assert_eq!(req.custom_properties.get("owner").unwrap(), "team-a");
        assert_eq!(req.comment.as_deref(), Some("all orders"));
        assert!(req.validate_only);
        // What was parsed serializes back to the same body.
        assert_eq!(to_json(&req), full_create_table());
    }

    #[test]
    fn create_table_defaults_optional_fields_and_accepts_null_for_them() {
        let minimal =
            json!({"table_name":"log","columns":[{"name":"v","data_type":{"type":"INTEGER"}}]});
        let req: CreateTableRequest = parse(minimal.clone()).unwrap();
        assert_eq!(req.primary_key, None);
        assert!(req.partitioned_by.is_empty() && req.configs.is_empty());
        assert!(req.custom_properties.is_empty() && !req.validate_only);
        assert_eq!(req.distribution, None);
        assert_eq!(to_json(&req), minimal);

        let nulls: CreateTableRequest = parse(json!({
            "table_name":"log","columns":[{"name":"v","data_type":{"type":"INTEGER"},"nullable":null,"comment":null}],
            "primary_key":null,"partitioned_by":null,"distribution":null,"configs":null,
            "custom_properties":null,"comment":null,"validate_only":null
        }))
        .unwrap();
        assert_eq!(nulls, req);
    }

    #[test]
    fn create_table_rejects_unknown_fields_at_every_level() {
        let mut top = full_create_table();
        top["if_not_exists"] = json!(true);
        assert_unknown_field::<CreateTableRequest>(top, "if_not_exists");
        let mut column = full_create_table();
        column["columns"][0]["default"] = json!(1);
        assert_unknown_field::<CreateTableRequest>(column, "default");
        let mut dist = full_create_table();
        dist["distribution"]["buckets"] = json!(3);
        assert_unknown_field::<CreateTableRequest>(dist, "buckets");
        assert!(parse::<CreateTableRequest>(json!({"table_name":"t"})).is_err());
    }

    #[test]
    fn validate_only_response_serializes_exactly() {
        let r = ValidateOnlyResponse::new("db", "orders", 3, vec!["id".into()]);
        let expected = json!({"validate_only":true,"database":"db","table":"orders",
                              "column_count":3,"primary_key":["id"]});
        assert_eq!(to_json(&r), expected);
        assert_eq!(parse::<ValidateOnlyResponse>(expected), Ok(r));
    }

    #[test]
    fn table_description_omits_what_the_table_does_not_have() {
        let log = TableDescription {
            database: "db".into(),
            table: "events".into(),
            columns: vec![ColumnDescription {
                name: "v".into(),
                data_type: json!({"type":"STRING"}),
                nullable: true,
                comment: None,
            }],
            primary_key: None,
            partitioned_by: None,
            distribution: None,
            configs: None,
            custom_properties: None,
            comment: None,
        };
        let expected = json!({"database":"db","table":"events",
            "columns":[{"name":"v","data_type":{"type":"STRING"},"nullable":true}]});
        assert_eq!(to_json(&log), expected);
        assert_eq!(parse::<TableDescription>(expected), Ok(log));

        let kv = TableDescription {
            database: "db".into(),
            table: "orders".into(),
            columns: vec![ColumnDescription {
                name: "id".into(),
                data_type: json!({"type":"BIGINT"}),
                nullable: false,
                comment: Some("key".into()),
            }],
            primary_key: Some(vec!["id".into()]),
            partitioned_by: Some(vec![]),
            distribution: Some(Distribution {
                bucket_count: 2,
                bucket_keys: vec!["id".into()],
            }),
            configs: Some(Properties::from([(
                "table.replication.factor".into(),
                "1".into(),
            )])),
            custom_properties: Some(Properties::from([("owner".into(), "a".into())])),
            comment: Some("c".into()),
        };
        assert_eq!(
            to_json(&kv),
            json!({"database":"db","table":"orders",
                "columns":[{"name":"id","data_type":{"type":"BIGINT"},"nullable":false,"comment":"key"}],
                "primary_key":["id"],"partitioned_by":[],
                "distribution":{"bucket_count":2,"bucket_keys":["id"]},
                "configs":{"table.replication.factor":"1"},"custom_properties":{"owner":"a"},
                "comment":"c"})
        );
    }

    #[test]
    fn alter_table_parses_each_change_kind() {
        let body = json!({"changes":[
            {"kind":"add_column","name":"note","data_type":{"type":"STRING"},"comment":"free text"},
            {"kind":"add_column","name":"n2","data_type":{"type":"INTEGER"}}
        ]});
        let req: AlterTableRequest = parse(body.clone()).unwrap();
        assert_eq!(
            req.changes[0],
            TableChange::AddColumn {
                name: "note".into(),
                data_type: json!({"type":"STRING"}),
                comment: Some("free text".into()),
            }
        );
        assert!(req.ensure_valid().is_ok());
        assert_eq!(to_json(&req), body);

        let configs: AlterTableRequest = parse(json!({"changes":[
            {"kind":"set_config","key":"table.datalake.enabled","value":"true"},
            {"kind":"reset_config","key":"owner"}
        ]}))
        .unwrap();
        assert_eq!(
            configs.changes,
            vec![
                TableChange::SetConfig {
                    key: "table.datalake.enabled".into(),
                    value: "true".into()
                },
                TableChange::ResetConfig {
                    key: "owner".into()
                },
            ]
        );
        assert!(configs.ensure_valid().is_ok());
    }

    #[test]
    fn alter_table_rejects_unknown_fields_kinds_and_mixes() {
        assert_unknown_field::<AlterTableRequest>(
            json!({"changes":[{"kind":"reset_config","key":"k","value":"v"}]}),
            "value",
        );
        assert_unknown_field::<AlterTableRequest>(json!({"changes":[],"dry_run":true}), "dry_run");
        let err =
            parse::<AlterTableRequest>(json!({"changes":[{"kind":"drop_column","name":"x"}]}))
                .unwrap_err();
        assert!(err.contains("drop_column"), "{err}");
        assert!(parse::<AlterTableRequest>(json!({"changes":[{"key":"k"}]})).is_err());
        assert!(
            parse::<AlterTableRequest>(json!({"changes":[{"kind":"set_config","key":"k"}]}))
                .is_err()
        );

        let empty: AlterTableRequest = parse(json!({"changes":[]})).unwrap();
        assert_eq!(
            empty.ensure_valid().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let mixed: AlterTableRequest = parse(json!({"changes":[
            {"kind":"add_column","name":"c","data_type":{"type":"INTEGER"}},
            {"kind":"set_config","key":"k","value":"v"}
        ]}))
        .unwrap();
        let e = mixed.ensure_valid().unwrap_err();
        assert!(e.message().contains("cannot be mixed"), "{}", e.message());
    }

    // --- partitions ---

    #[test]
    fn partition_bodies_round_trip() {
        let req: CreatePartitionRequest = parse(json!({"partition":{"dt":"2026-08-25"}})).unwrap();
        assert_eq!(req.partition.get("dt").unwrap(), "2026-08-25");
        assert_unknown_field::<CreatePartitionRequest>(
            json!({"partition":{"dt":"x"},"if_not_exists":true}),
            "if_not_exists",
        );
        assert!(parse::<CreatePartitionRequest>(json!({"partition":{"dt":1}})).is_err());

        let created = PartitionResponse {
            database: "db".into(),
            table: "t".into(),
            partition: req.partition.clone(),
        };
        assert_eq!(
            to_json(&created),
            json!({"database":"db","table":"t","partition":{"dt":"2026-08-25"}})
        );

        let list = PartitionsResponse {
            partitions: vec![PartitionEntry {
                name: "2026-08-25$eu".into(),
                partition: PartitionSpec::from([
                    ("dt".into(), "2026-08-25".into()),
                    ("region".into(), "eu".into()),
                ]),
            }],
            next_page_token: None,
        };
        let expected = json!({"partitions":[{"name":"2026-08-25$eu",
            "partition":{"dt":"2026-08-25","region":"eu"}}]});
        assert_eq!(to_json(&list), expected);
        assert_eq!(parse::<PartitionsResponse>(expected), Ok(list));
    }
}
