//! OTLP exports into their tables: each table's rows, built from the request in the table's
//! column order, written by [`crate::write::append_rows`] (the same per-row acknowledgement and
//! deadline as `POST …/records`), outcomes counted exactly, and the OTLP tables created on
//! request ([`create_tables`]) or on first export when the deployment opts in.

use fluss::metadata::TablePath;
use fluss::row::GenericRow;
use fluss_pool::Pool;
use gateway_core::otlp::{OtlpTable, TableRows, create_table_request};
use gateway_core::types::table_descriptor;
use gateway_core::{ErrorCode, GatewayError};

use crate::built::BuiltRows;
use crate::call::Call;
use crate::catalog::Session;
use crate::write::append_rows;

/// Where an export goes: the tables `<prefix>_logs`, … of `database` on `cluster`.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The cluster id.
    pub cluster: &'a str,
    /// The database holding the tables.
    pub database: &'a str,
    /// The tables' name prefix (`otel`).
    pub prefix: &'a str,
    /// The partition (`dt`) the rows carry: the day they were received.
    pub day: &'a str,
    /// Create a missing table (and today's partition) instead of answering 404.
    pub create_missing: bool,
}

impl Target<'_> {
    fn path(&self, table: OtlpTable) -> TablePath {
        TablePath::new(self.database.to_owned(), table.name(self.prefix))
    }
}

/// How an export went: records acknowledged by Fluss and records not written, with the first
/// reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exported {
    /// Rows Fluss acknowledged.
    pub accepted: u64,
    /// Rows not written (or whose outcome is unknown: a timeout).
    pub rejected: u64,
    /// Why the first rejected rows were not written; empty when none were.
    pub message: String,
}

/// Makes the rows of one table of the export again (a resend needs them after they were
/// handed over).
pub type RebuildTable<'a, 'r> =
    &'r (dyn Fn(OtlpTable) -> Result<Vec<GenericRow<'a>>, GatewayError> + Sync);

/// Writes every table's rows of one export. `Err` means nothing was written: the first table
/// refused as a whole (404 for a missing table unless `create_missing`, 400 for a table whose
/// columns are not the OTLP definition's, 429, 503, …), or every row failed for a reason an
/// exporter retries (504 `timeout`, 503, 429), so that it sends the request again. A refusal
/// after some rows were acknowledged becomes rejected rows instead: a retried request would
/// write those again.
pub async fn export<'a>(
    pool: &Pool,
    call: &Call,
    target: &Target<'_>,
    mut rows: TableRows<'a>,
    rebuild: RebuildTable<'a, '_>,
) -> Result<Exported, GatewayError> {
    let mut done = Exported::default();
    let mut first_failure: Option<GatewayError> = None;
    let tables: Vec<OtlpTable> = rows.tables.iter().map(|(t, _)| *t).collect();
    for table in tables {
        let again = move || rebuild(table);
        let built = BuiltRows::new(rows.take(table), table.row_type()?, &again);
        let n = built.len() as u64;
        let path = target.path(table);
        let mut outcome = append_rows(pool, call, target.cluster, &path, &built).await;
        let missing = matches!(&outcome, Err(e) if matches!(e.code(), ErrorCode::TableNotFound | ErrorCode::PartitionNotFound));
        if missing && target.create_missing {
            create_tables(pool, call, target, &[table], None).await?;
            outcome = append_rows(pool, call, target.cluster, &path, &built).await;
        }
        match outcome {
            Ok(outcomes) => {
                for (_, result) in outcomes {
                    match result {
                        Ok(()) => done.accepted += 1,
                        Err(e) => {
                            done.rejected += 1;
                            first_failure.get_or_insert(e);
                        }
                    }
                }
            }
            Err(e) if done.accepted == 0 && done.rejected == 0 => return Err(e),
            Err(e) => {
                done.rejected += n;
                first_failure.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_failure {
        let retryable = matches!(
            e.code(),
            ErrorCode::Timeout | ErrorCode::Unavailable | ErrorCode::ResourceExhausted
        );
        if done.accepted == 0 && retryable {
            return Err(e);
        }
        done.message = format!(
            "{} of {} records were not written; the first: {} ({})",
            done.rejected,
            done.rejected + done.accepted,
            e.message(),
            e.code()
        );
    }
    Ok(done)
}

/// Creates the OTLP `tables` of `target` that do not exist (with `buckets` buckets, else the
/// server's default), each with the partition of `target.day`, and answers each table's name
/// and whether it was created now.
pub async fn create_tables(
    pool: &Pool,
    call: &Call,
    target: &Target<'_>,
    tables: &[OtlpTable],
    buckets: Option<u32>,
) -> Result<Vec<(String, bool)>, GatewayError> {
    let session = Session::open(pool, call, target.cluster).await?;
    let mut out = Vec::with_capacity(tables.len());
    for &table in tables {
        let name = table.name(target.prefix);
        let request = create_table_request(table, &name, buckets);
        let descriptor = table_descriptor(&request)?;
        let path = target.path(table);
        let created = match session
            .create_table(
                &path,
                &descriptor,
                true,
                buckets.and_then(|b| i32::try_from(b).ok()),
            )
            .await
        {
            Ok(()) => true,
            Err(e) if e.code() == ErrorCode::TableAlreadyExists => false,
            Err(e) => return Err(e),
        };
        ensure_day_partition(&session, &path, target.day, &call.deadline).await?;
        out.push((name, created));
    }
    Ok(out)
}

/// Fluss's auto-partitioning creates the day's partition shortly after the table: a first
/// write waits for it (polling, within the call's deadline and at most [`PARTITION_WAIT`]). It
/// is never created here: a partition created while the auto-partitioner creates the same one
/// left Fluss 0.9.1's coordinator unable to assign bucket leaders (every later write to any new
/// bucket timed out until a restart), so the gateway leaves auto-partitioned tables to Fluss.
async fn ensure_day_partition(
    session: &Session,
    path: &TablePath,
    day: &str,
    deadline: &fluss_pool::Deadline,
) -> Result<(), GatewayError> {
    let until = std::time::Instant::now() + PARTITION_WAIT;
    loop {
        let exists = session
            .list_partitions(path)
            .await?
            .iter()
            .any(|p| p.get_partition_name() == day);
        if exists {
            let buckets = session.table_info(path).await?.num_buckets;
            session.await_partition_leaders(path, day, buckets).await;
            return Ok(());
        }
        if std::time::Instant::now() >= until || deadline.remaining() < PARTITION_POLL {
            return Err(GatewayError::new(
                ErrorCode::Unavailable,
                format!(
                    "partition `{day}` of table `{path}` is not created yet (Fluss creates it \
                     with the table); retry"
                ),
            ));
        }
        tokio::time::sleep(PARTITION_POLL).await;
    }
}

/// Longest wait for Fluss to create a new table's partition of the day.
const PARTITION_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Interval between two looks at a new table's partitions.
const PARTITION_POLL: std::time::Duration = std::time::Duration::from_millis(200);
