//! Cluster config bodies (an extension of the upstream API): the dynamic configs of a cluster
//! and the changes applied to them.

use serde::{Deserialize, Serialize};

use crate::error::GatewayError;

/// One dynamic cluster config as Fluss describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfigEntry {
    /// Config key, e.g. `datalake.format`.
    pub key: String,
    /// Current value; omitted when the key has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Where the value comes from, as Fluss names it (e.g. `DYNAMIC_SERVER_CONFIG`).
    pub source: String,
}

/// `GET /v1/clusters/{cluster}/configs` → 200.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfigsResponse {
    /// Configs as the coordinator reports them.
    pub configs: Vec<ClusterConfigEntry>,
}

/// `PATCH /v1/clusters/{cluster}/configs` body → 204.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlterClusterConfigsRequest {
    /// Changes applied in one call.
    pub changes: Vec<ClusterConfigChange>,
}

impl AlterClusterConfigsRequest {
    /// 400 for an empty change list, which would be a round trip to the coordinator that
    /// changes nothing.
    pub fn ensure_valid(&self) -> Result<(), GatewayError> {
        if self.changes.is_empty() {
            return Err(GatewayError::invalid("`changes` must not be empty"));
        }
        Ok(())
    }
}

/// One cluster config change, tagged by `kind` (Fluss `AlterConfigOpType`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClusterConfigChange {
    /// Sets the value.
    SetConfig {
        /// Config key.
        key: String,
        /// New value.
        value: String,
    },
    /// Removes the dynamic value, falling back to the server's initial config.
    ResetConfig {
        /// Config key.
        key: String,
    },
    /// Adds an element to a list-valued config.
    AppendConfig {
        /// Config key.
        key: String,
        /// Element to add.
        value: String,
    },
    /// Removes an element from a list-valued config.
    SubtractConfig {
        /// Config key.
        key: String,
        /// Element to remove.
        value: String,
    },
}

impl ClusterConfigChange {
    /// The key the change addresses.
    pub fn key(&self) -> &str {
        match self {
            ClusterConfigChange::SetConfig { key, .. }
            | ClusterConfigChange::ResetConfig { key }
            | ClusterConfigChange::AppendConfig { key, .. }
            | ClusterConfigChange::SubtractConfig { key, .. } => key,
        }
    }

    /// The value the change carries; `None` for a reset.
    pub fn value(&self) -> Option<&str> {
        match self {
            ClusterConfigChange::ResetConfig { .. } => None,
            ClusterConfigChange::SetConfig { value, .. }
            | ClusterConfigChange::AppendConfig { value, .. }
            | ClusterConfigChange::SubtractConfig { value, .. } => Some(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::wire::tests::{assert_unknown_field, parse, to_json};
    use serde_json::json;

    #[test]
    fn cluster_configs_response_serializes_exactly() {
        let resp = ClusterConfigsResponse {
            configs: vec![
                ClusterConfigEntry {
                    key: "datalake.format".into(),
                    value: Some("paimon".into()),
                    source: "DYNAMIC_SERVER_CONFIG".into(),
                },
                ClusterConfigEntry {
                    key: "kv.rocksdb.shared-rate-limiter".into(),
                    value: None,
                    source: "INITIAL_SERVER_CONFIG".into(),
                },
            ],
        };
        let expected = json!({"configs":[
            {"key":"datalake.format","value":"paimon","source":"DYNAMIC_SERVER_CONFIG"},
            {"key":"kv.rocksdb.shared-rate-limiter","source":"INITIAL_SERVER_CONFIG"}
        ]});
        assert_eq!(to_json(&resp), expected);
        assert_eq!(parse::<ClusterConfigsResponse>(expected), Ok(resp));
    }

    #[test]
    fn cluster_config_changes_parse_each_kind() {
        let body = json!({"changes":[
            {"kind":"set_config","key":"a","value":"1"},
            {"kind":"reset_config","key":"b"},
            {"kind":"append_config","key":"c","value":"x"},
            {"kind":"subtract_config","key":"d","value":"y"}
        ]});
        let req: AlterClusterConfigsRequest = parse(body.clone()).unwrap();
        let keys: Vec<(&str, Option<&str>)> =
            req.changes.iter().map(|c| (c.key(), c.value())).collect();
        assert_eq!(
            keys,
            vec![
                ("a", Some("1")),
                ("b", None),
                ("c", Some("x")),
                ("d", Some("y"))
            ]
        );
        assert!(req.ensure_valid().is_ok());
        assert_eq!(to_json(&req), body);
    }

    #[test]
    fn cluster_config_changes_reject_unknown_fields_kinds_and_empty_lists() {
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"set_config","key":"a","value":"1","scope":"x"}]}),
            "scope",
        );
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"reset_config","key":"a","value":"1"}]}),
            "value",
        );
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[],"validate_only":true}),
            "validate_only",
        );
        let err = parse::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"delete_config","key":"a"}]}),
        )
        .unwrap_err();
        assert!(err.contains("delete_config"), "{err}");
        assert!(
            parse::<AlterClusterConfigsRequest>(
                json!({"changes":[{"kind":"set_config","key":"a"}]})
            )
            .is_err(),
            "set_config needs a value"
        );
        let empty: AlterClusterConfigsRequest = parse(json!({"changes":[]})).unwrap();
        assert_eq!(
            empty.ensure_valid().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}
