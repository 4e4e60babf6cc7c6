//! Catalog and cluster-configuration operations: databases, tables and partitions (list, create,
//! describe, alter, drop) and Fluss dynamic cluster configs (describe, alter), all through one
//! [`Session`] on the cluster's coordinator, bounded by the call's deadline.
//!
//! What the session adds to the bare admin calls: a missing table told apart from a missing
//! database (404 `database_not_found`), the pool's cached table handles dropped after DDL the
//! gateway ran itself (so writes and lookups of the same container see the change at once), and
//! creations answered only once every bucket has a leader (a caller may write the moment it
//! sees the answer).
//!
//! Refuses: admission (the entry point's concurrency gate), request parsing and rendering.

use std::sync::Arc;

use fluss::client::FlussAdmin;
use fluss::metadata::{
    AlterConfig, AlterTableChanges, DescribeConfig, PartitionInfo, PartitionSpec, TableDescriptor,
    TableInfo, TablePath,
};
use fluss_pool::{Deadline, Pool, PooledConnection};
use gateway_core::GatewayError;

use crate::call::Call;
use crate::table::refine_not_found;

pub use crate::table::database_not_found;

/// One call's hold on a cluster's coordinator: the pooled connection of the call's identity, its
/// admin client and the call's deadline.
pub struct Session {
    pool: Pool,
    cluster: String,
    conn: Arc<PooledConnection>,
    admin: Arc<FlussAdmin>,
    deadline: Deadline,
}

impl Session {
    /// The session of `call` on `cluster`: the warm connection of the call's identity
    /// (connecting within the deadline if needed), after the pool's 404 `cluster_not_found`
    /// without I/O for an unknown cluster (the HTTP entry points have answered it already, in
    /// their admission).
    pub async fn open(pool: &Pool, call: &Call, cluster: &str) -> Result<Self, GatewayError> {
        let conn = pool
            .connection(cluster, &call.identity, &call.deadline)
            .await?;
        let admin = conn.admin()?;
        Ok(Session {
            pool: pool.clone(),
            cluster: cluster.to_owned(),
            conn,
            admin,
            deadline: call.deadline,
        })
    }

    /// Awaits a fluss-rs admin call until the deadline (504 `timeout`), mapping its error.
    async fn call<T, F>(&self, what: &str, fut: F) -> Result<T, GatewayError>
    where
        F: std::future::Future<Output = fluss::error::Result<T>>,
    {
        self.conn.call(&self.deadline, what, fut).await
    }

    /// 404 `database_not_found` unless `database` exists.
    pub async fn ensure_database(&self, database: &str) -> Result<(), GatewayError> {
        let exists = self
            .call(
                "checking the database",
                self.admin.database_exists(database),
            )
            .await?;
        if exists {
            Ok(())
        } else {
            Err(database_not_found(database))
        }
    }

    /// `result`, with a table-not-found refined against `path`'s database
    /// ([`refine_not_found`]).
    async fn on_table<T>(
        &self,
        path: &TablePath,
        result: Result<T, GatewayError>,
    ) -> Result<T, GatewayError> {
        match result {
            Ok(v) => Ok(v),
            Err(e) => Err(refine_not_found(&self.conn, &self.deadline, path.database(), e).await),
        }
    }

    /// Every database of the cluster (server order).
    pub async fn list_databases(&self) -> Result<Vec<String>, GatewayError> {
        self.call("listing databases", self.admin.list_databases())
            .await
    }

    /// Creates `database`; 409 `database_already_exists` when it does.
    pub async fn create_database(&self, database: &str) -> Result<(), GatewayError> {
        self.call(
            "creating the database",
            self.admin.create_database(database, None, false),
        )
        .await
    }

    /// Drops `database`, which must be empty (409 `database_not_empty`: no cascade, so no table
    /// of it can be in the pool's cache through us).
    pub async fn drop_database(&self, database: &str) -> Result<(), GatewayError> {
        self.call(
            "dropping the database",
            self.admin.drop_database(database, false, false),
        )
        .await
    }

    /// Every table of `database`; 404 `database_not_found` when an empty answer hides a missing
    /// database (as upstream).
    pub async fn list_tables(&self, database: &str) -> Result<Vec<String>, GatewayError> {
        let all = self
            .call("listing tables", self.admin.list_tables(database))
            .await?;
        if all.is_empty() {
            self.ensure_database(database).await?;
        }
        Ok(all)
    }

    /// Creates `path` from `descriptor` and answers once its buckets can take writes (an
    /// unpartitioned table; a partition's buckets get leaders when it is created). `buckets` is
    /// the bucket count when the caller chose one.
    pub async fn create_table(
        &self,
        path: &TablePath,
        descriptor: &TableDescriptor,
        partitioned: bool,
        buckets: Option<i32>,
    ) -> Result<(), GatewayError> {
        self.call(
            "creating the table",
            self.admin.create_table(path, descriptor, false),
        )
        .await?;
        // A handle cached for an earlier table of the same name must not outlive it.
        self.pool.invalidate(&self.cluster, path);
        if !partitioned {
            let buckets = match buckets {
                Some(n) => n,
                None => self
                    .call("loading the table", self.admin.get_table_info(path))
                    .await
                    .map(|info| info.num_buckets)
                    .unwrap_or(1),
            };
            self.conn
                .await_bucket_leaders(path, None, buckets, &self.deadline)
                .await;
        }
        Ok(())
    }

    /// The current metadata of `path`.
    pub async fn table_info(&self, path: &TablePath) -> Result<TableInfo, GatewayError> {
        let info = self
            .call("reading the table", self.admin.get_table_info(path))
            .await;
        self.on_table(path, info).await
    }

    /// Applies `changes` to `path`; the cached handle (old schema, writers bound to it) is
    /// dropped.
    pub async fn alter_table(
        &self,
        path: &TablePath,
        changes: AlterTableChanges,
    ) -> Result<(), GatewayError> {
        let altered = self
            .call(
                "altering the table",
                self.admin.alter_table(path, false, changes),
            )
            .await;
        self.on_table(path, altered).await?;
        self.pool.invalidate(&self.cluster, path);
        Ok(())
    }

    /// Drops `path`; the cached handle is dropped with it.
    pub async fn drop_table(&self, path: &TablePath) -> Result<(), GatewayError> {
        let dropped = self
            .call("dropping the table", self.admin.drop_table(path, false))
            .await;
        self.on_table(path, dropped).await?;
        self.pool.invalidate(&self.cluster, path);
        Ok(())
    }

    /// Every partition of `path`.
    pub async fn list_partitions(
        &self,
        path: &TablePath,
    ) -> Result<Vec<PartitionInfo>, GatewayError> {
        let listed = self
            .call("listing partitions", self.admin.list_partition_infos(path))
            .await;
        self.on_table(path, listed).await
    }

    /// Creates the partition `spec` (named `name`) of `path` and answers once its `buckets`
    /// have leaders.
    pub async fn create_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
        name: &str,
        buckets: i32,
    ) -> Result<(), GatewayError> {
        self.call(
            "creating the partition",
            self.admin.create_partition(path, spec, false),
        )
        .await?;
        self.conn
            .await_bucket_leaders(path, Some(name), buckets, &self.deadline)
            .await;
        Ok(())
    }

    /// Waits (within the deadline) until the `buckets` buckets of partition `name` of `path`
    /// have leaders: Fluss created the partition itself (auto-partitioning), and a first write
    /// should not wait for its leaders.
    pub async fn await_partition_leaders(&self, path: &TablePath, name: &str, buckets: i32) {
        self.conn
            .await_bucket_leaders(path, Some(name), buckets, &self.deadline)
            .await;
    }

    /// Drops the partition `spec` of `path`; cached writers may still route to its id, so the
    /// handle is dropped.
    pub async fn drop_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
    ) -> Result<(), GatewayError> {
        self.call(
            "dropping the partition",
            self.admin.drop_partition(path, spec, false),
        )
        .await?;
        self.pool.invalidate(&self.cluster, path);
        Ok(())
    }

    /// The cluster's dynamic configuration, as the server describes it (values unredacted:
    /// the entry point decides what a caller may see).
    pub async fn describe_cluster_configs(&self) -> Result<Vec<DescribeConfig>, GatewayError> {
        self.call(
            "describing the cluster configs",
            self.admin.describe_cluster_configs(),
        )
        .await
    }

    /// Applies `changes` to the cluster's dynamic configuration, for every client.
    pub async fn alter_cluster_configs(
        &self,
        changes: Vec<AlterConfig>,
    ) -> Result<(), GatewayError> {
        self.call(
            "altering the cluster configs",
            self.admin.alter_cluster_configs(changes),
        )
        .await
    }
}
