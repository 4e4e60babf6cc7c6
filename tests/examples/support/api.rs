//! A keep-alive client of a gateway process with its API key, shared by the benchmarks that
//! drive a release server over HTTP (`#[path]`-included: examples have no library of their own,
//! and the test library keeps reqwest out of the stack probe's build).

use integration_tests::server::ServerProcess;
use serde_json::Value;

/// The client: one connection pool, the server's address and an API key.
#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl ApiClient {
    /// A client of `server` that sends `key` as `x-api-key`.
    pub fn new(server: &ServerProcess, key: &str) -> ApiClient {
        ApiClient {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                .build()
                .expect("http client"),
            base: format!("http://{}", server.addr()),
            key: key.to_owned(),
        }
    }

    /// `POST path` with a JSON `body`: the status and the JSON answer (`Null` when not JSON).
    pub async fn post(&self, path: &str, body: Vec<u8>) -> Result<(u16, Value), String> {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-api-key", &self.key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("POST {path}: {e}"))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("POST {path}: {e}"))?;
        Ok((
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        ))
    }

    /// Creates database `db` unless it exists.
    pub async fn create_database(&self, db: &str) -> Result<(), String> {
        let body = serde_json::json!({ "database": db })
            .to_string()
            .into_bytes();
        match self.post("/v1/clusters/default/databases", body).await? {
            (201 | 409, _) => Ok(()),
            (status, answer) => Err(format!("create database: {status} {answer}")),
        }
    }

    /// Creates the table `spec` (a create-table body) in `db`.
    pub async fn create_table(&self, db: &str, spec: &Value) -> Result<(), String> {
        let path = format!("/v1/clusters/default/databases/{db}/tables");
        match self.post(&path, spec.to_string().into_bytes()).await? {
            (201, _) => Ok(()),
            (status, answer) => Err(format!("create table: {status} {answer}")),
        }
    }

    /// Creates database `db` (unless it exists) and in it the table `table` of `columns`
    /// (name, Fluss type), keyed on `primary_key` (empty: a log table), in `buckets` buckets.
    pub async fn create_db_table(
        &self,
        db: &str,
        table: &str,
        columns: &[(&str, &str)],
        primary_key: &[&str],
        buckets: u32,
    ) -> Result<(), String> {
        self.create_database(db).await?;
        let columns: Vec<Value> = columns
            .iter()
            .map(|(name, ty)| serde_json::json!({"name": name, "data_type": {"type": ty}}))
            .collect();
        let mut spec = serde_json::json!({
            "table_name": table,
            "columns": columns,
            "distribution": {"bucket_count": buckets}
        });
        if !primary_key.is_empty() {
            spec["primary_key"] = serde_json::json!(primary_key);
        }
        self.create_table(db, &spec).await
    }
}
