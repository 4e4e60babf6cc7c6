//! Planning and running one event's writes. Records without an order group are written in one
//! batch per table, the tables concurrently. Records of an order group (a Kinesis shard, an SQS
//! FIFO message group) are written in order, consecutive records of one table in one batch;
//! after the first record of a group that is not acknowledged, the rest of the group is not
//! written and is reported, so a redelivery replays the group in its order. Groups run
//! concurrently. Everything is bounded by one deadline (the Lambda deadline minus the margin);
//! rows not acknowledged by then are reported.

use std::collections::BTreeMap;

use fluss::metadata::TablePath;
use fluss_ops::Call;
use fluss_pool::{DeadlinePolicy, Pool};
use gateway_core::codec::NumberTexts;
use gateway_core::codec::arrow::{ArrowBody, ArrowLimits};
use gateway_core::wire::{WriteOp, WriteRequest};
use gateway_core::{ErrorCode, GatewayError};
use serde_json::Value;
use tokio::task::JoinSet;

use crate::envelope::{self, Routed};
use crate::event;
use crate::routes::{self, Route, RouteFormat, RouteOp};
use crate::{IngestSettings, Poison};

/// Rows per write batch of an ordered run: an event of 10,000 records for one table is written
/// in batches of this size (the write route's default row limit), so one batch never outgrows
/// the writer buffer and fails as a whole with 429 on every redelivery.
const MAX_BATCH_ROWS: usize = 1000;

/// What one Arrow record may declare: rows, and bytes of buffers once decompressed (a
/// Kinesis record holds at most 10 MB).
const ARROW_LIMITS: ArrowLimits = ArrowLimits {
    max_rows: 1_000_000,
    max_decoded_bytes: 64 * 1024 * 1024,
};
/// Rows per write batch of records without order; such batches run concurrently.
const UNORDERED_BATCH_ROWS: usize = 250;

/// What one event's records came to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Acknowledged by Fluss.
    Written,
    /// Not acknowledged (transient, or after an earlier failure of its group): reported.
    Failed(String),
    /// Can never be written: reported or skipped as configured.
    Poison(String),
}

/// The ingest function's state, built once per container.
#[derive(Clone)]
pub struct Ingest {
    pool: Pool,
    deadlines: DeadlinePolicy,
    settings: IngestSettings,
    default_cluster: String,
}

impl Ingest {
    /// Over `pool`; records naming no cluster go to the only configured cluster, else to
    /// `default`.
    pub fn new(pool: Pool, deadlines: DeadlinePolicy, settings: IngestSettings) -> Self {
        let clusters = pool.config().clusters();
        let default_cluster = if clusters.len() == 1 {
            clusters[0].id.clone()
        } else {
            "default".to_owned()
        };
        Ingest {
            pool,
            deadlines,
            settings,
            default_cluster,
        }
    }

    /// The pool (drained at shutdown).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Writes the records of `event`, answering the partial batch response. `Err` (the whole
    /// invocation fails and is retried) only for an event that is not one this function reads.
    pub async fn handle(
        &self,
        event: event::Event,
        lambda_deadline_ms: Option<u64>,
        invocation_id: &str,
    ) -> Result<Value, String> {
        let batch = event::read(event)?;
        let call = Call::service(invocation_id, self.deadlines.deadline(lambda_deadline_ms));
        // Records of an Arrow route (a source's records all take one route) hold many rows
        // each and are written apart; every other record is a row.
        let arrow = |r: &event::Record| {
            routes::find(&self.settings.routes, r.origin.as_deref())
                .filter(|route| route.format == RouteFormat::Arrow)
                .cloned()
        };
        let outcomes = if batch.records.iter().any(|r| arrow(r).is_some()) {
            self.arrow_records(&batch.records, arrow, &call).await
        } else {
            let ops = self.route_ops(&batch.records, &call).await;
            let routed: Vec<Result<Routed, Outcome>> = batch
                .records
                .iter()
                .enumerate()
                .map(|(i, r)| self.route(i, r, &ops))
                .collect();
            self.run(&batch.records, routed, &call).await
        };
        let mut failed = Vec::new();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        for (record, outcome) in batch.records.iter().zip(&outcomes) {
            // The record's id and the reason, never its payload (it may hold personal data).
            let label = match outcome {
                Outcome::Written => "written",
                Outcome::Failed(why) => {
                    tracing::warn!(record = %record.id_text(), reason = %without_values(why), "record not written; reported for redelivery");
                    failed.push(record.id.clone());
                    "failed"
                }
                Outcome::Poison(why) => {
                    tracing::warn!(
                        record = %record.id_text(),
                        reason = %without_values(why),
                        skipped = self.settings.poison == Poison::Skip,
                        "poison record"
                    );
                    if self.settings.poison == Poison::Fail {
                        failed.push(record.id.clone());
                    }
                    "poison"
                }
            };
            *counts.entry(label).or_default() += 1;
        }
        for (outcome, n) in counts {
            gateway_telemetry::families::ingest_records(batch.source.label(), outcome, n);
        }
        tracing::info!(
            source = batch.source.label(),
            records = batch.records.len(),
            reported = failed.len(),
            "ingested"
        );
        Ok(event::response(&failed))
    }

    /// The operation of each `auto` route the records take: upsert for a primary-key table,
    /// append for a log table, asked once per route (the table handle is cached by the pool).
    async fn route_ops(
        &self,
        records: &[event::Record],
        call: &Call,
    ) -> BTreeMap<String, Result<WriteOp, Outcome>> {
        let mut ops = BTreeMap::new();
        for record in records {
            let Some(route) = routes::find(&self.settings.routes, record.origin.as_deref()) else {
                continue;
            };
            if route.op != RouteOp::Auto || ops.contains_key(&route.name) {
                continue;
            }
            let cluster = route.cluster.as_deref().unwrap_or(&self.default_cluster);
            let path = TablePath::new(route.database.clone(), route.table.clone());
            let kind = fluss_ops::write::has_primary_key(&self.pool, call, cluster, &path).await;
            let op = match kind {
                Ok(true) => Ok(WriteOp::Upsert),
                Ok(false) => Ok(WriteOp::Append),
                Err(e) => Err(refused(&e)),
            };
            ops.insert(route.name.clone(), op);
        }
        ops
    }

    /// Where record `index` goes and what it writes, or the outcome it already has.
    fn route(
        &self,
        index: usize,
        record: &event::Record,
        ops: &BTreeMap<String, Result<WriteOp, Outcome>>,
    ) -> Result<Routed, Outcome> {
        let payload = record
            .payload
            .as_ref()
            .map_err(|why| Outcome::Poison(why.clone()))?;
        let route = routes::find(&self.settings.routes, record.origin.as_deref());
        let op_of = |route: &Route| match route.op {
            RouteOp::Append => Ok(WriteOp::Append),
            RouteOp::Upsert => Ok(WriteOp::Upsert),
            RouteOp::Auto => ops
                .get(&route.name)
                .cloned()
                .unwrap_or_else(|| Err(Outcome::Failed("the table kind is unknown".to_owned()))),
        };
        let mut routed = match (payload, route) {
            (event::Payload::Body(body), Some(route)) => {
                let op = op_of(route)?;
                envelope::bare(body, index, route, op, &self.default_cluster)
                    .map_err(Outcome::Poison)
            }
            (event::Payload::Body(body), None) => {
                envelope::route(body, index, &self.default_cluster).map_err(Outcome::Poison)
            }
            (event::Payload::Change { op, row }, Some(route)) => Ok(envelope::to_route(
                route,
                index,
                *op,
                row.clone(),
                &self.default_cluster,
            )),
            (event::Payload::Change { .. }, None) => Err(Outcome::Poison(format!(
                "no route maps the stream {} to a table (`gateway.ingest.route.<name>.source`)",
                gateway_core::names::shown(record.origin.as_deref().unwrap_or(""))
            ))),
        }?;
        if let Some(column) = route.and_then(|r| r.source_column.as_deref()) {
            envelope::stamp(&mut routed, column, &record.coordinates).map_err(Outcome::Poison)?;
        }
        Ok(routed)
    }

    async fn run(
        &self,
        records: &[event::Record],
        routed: Vec<Result<Routed, Outcome>>,
        call: &Call,
    ) -> Vec<Outcome> {
        let mut outcomes: Vec<Option<Outcome>> = vec![None; records.len()];
        // Units: one per order group; the unordered records one per table.
        let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut tables: BTreeMap<TableKey<'_>, Vec<usize>> = BTreeMap::new();
        for (i, r) in records.iter().enumerate() {
            match (&r.group, &routed[i]) {
                (Some(g), _) => groups.entry(g.as_str()).or_default().push(i),
                (None, Ok(to)) => tables.entry(key(to)).or_default().push(i),
                (None, Err(outcome)) => outcomes[i] = Some(outcome.clone()),
            }
        }
        let groups: Vec<Vec<usize>> = groups.into_values().collect();
        let tables: Vec<Vec<usize>> = tables.into_values().collect();
        // Each unit owns its records' entries: nothing is copied on the way to the writer.
        let mut slots: Vec<Option<Result<Routed, Outcome>>> =
            routed.into_iter().map(Some).collect();
        let mut take = |indexes: &[usize]| -> Vec<Result<Routed, Outcome>> {
            indexes.iter().filter_map(|&i| slots[i].take()).collect()
        };
        let mut running = JoinSet::new();
        for (indexes, ordered) in groups
            .into_iter()
            .map(|g| (g, true))
            .chain(tables.into_iter().map(|t| (t, false)))
        {
            let items = take(&indexes);
            let (this, call) = (self.clone(), call.clone());
            running.spawn(async move {
                let done = if ordered {
                    this.ordered(items, &call).await
                } else {
                    this.unordered(items, &call).await
                };
                indexes.into_iter().zip(done).collect::<Vec<_>>()
            });
        }
        settle(running, outcomes).await
    }

    /// One table's records, no order to keep: batches of at most [`UNORDERED_BATCH_ROWS`],
    /// written concurrently, so decoding one batch overlaps the round trip of the previous;
    /// a batch refused as invalid is written record by record, so only the bad ones are poison.
    async fn unordered(&self, items: Vec<Result<Routed, Outcome>>, call: &Call) -> Vec<Outcome> {
        // A table's unit holds only routed records (the others have their outcome already).
        let mut items = items.into_iter().flatten().peekable();
        let mut running = JoinSet::new();
        let mut sizes = Vec::new();
        while items.peek().is_some() {
            let chunk: Vec<Routed> = items.by_ref().take(UNORDERED_BATCH_ROWS).collect();
            let (this, call, index) = (self.clone(), call.clone(), sizes.len());
            sizes.push(chunk.len());
            running.spawn(async move { (index, this.batch(chunk, &call, |_| false).await) });
        }
        let mut done: Vec<Option<Vec<Outcome>>> = vec![None; sizes.len()];
        while let Some(joined) = running.join_next().await {
            match joined {
                Ok((i, outcomes)) => done[i] = Some(outcomes),
                Err(e) => tracing::error!(error = %e, "an ingest batch task failed"),
            }
        }
        // A batch whose task died is reported whole: never claimed written.
        done.into_iter()
            .zip(sizes)
            .flat_map(|(d, n)| {
                d.unwrap_or_else(|| vec![Outcome::Failed("internal error".to_owned()); n])
            })
            .collect()
    }

    /// One group's records in order: runs of consecutive records of one table are one batch;
    /// the first record not written ends the group (the rest is reported, not written), unless
    /// it is poison and poison is skipped.
    async fn ordered(&self, items: Vec<Result<Routed, Outcome>>, call: &Call) -> Vec<Outcome> {
        let total = items.len();
        let stops = |o: &Outcome| match o {
            Outcome::Written => false,
            Outcome::Failed(_) => true,
            Outcome::Poison(_) => self.settings.poison == Poison::Fail,
        };
        let mut out: Vec<Outcome> = Vec::with_capacity(total);
        let mut items = items.into_iter().peekable();
        while let Some(item) = items.next() {
            let first = match item {
                Ok(first) => first,
                Err(outcome) => {
                    let stop = stops(&outcome);
                    out.push(outcome);
                    if stop {
                        break;
                    }
                    continue;
                }
            };
            let mut run = vec![first];
            while run.len() < MAX_BATCH_ROWS {
                match items.peek() {
                    Some(Ok(next)) if key(next) == key(&run[0]) => {}
                    _ => break,
                }
                if let Some(Ok(next)) = items.next() {
                    run.push(next);
                }
            }
            let mut done = self.batch(run, call, stops).await;
            if let Some(j) = done.iter().position(stops) {
                done.truncate(j + 1);
                out.extend(done);
                break;
            }
            out.extend(done);
        }
        let stopped_after = out.len();
        out.extend((stopped_after..total).map(|_| {
            Outcome::Failed(
                "an earlier record of its shard or message group was not written".to_owned(),
            )
        }));
        out
    }

    /// The records of an event from an Arrow route's source: each payload an Arrow IPC stream
    /// written as the write route writes one, the record written when all its rows are; an
    /// order group in order up to its first record not written, groups concurrently.
    async fn arrow_records(
        &self,
        records: &[event::Record],
        route_of: impl Fn(&event::Record) -> Option<Route>,
        call: &Call,
    ) -> Vec<Outcome> {
        let mut outcomes: Vec<Option<Outcome>> = vec![None; records.len()];
        let mut groups: BTreeMap<String, Vec<(usize, Route, Vec<u8>)>> = BTreeMap::new();
        for (i, record) in records.iter().enumerate() {
            let (route, body) = match (route_of(record), &record.payload) {
                (Some(route), Ok(event::Payload::Body(body))) => (route, body.clone()),
                (_, Err(why)) => {
                    outcomes[i] = Some(Outcome::Poison(why.clone()));
                    continue;
                }
                _ => {
                    let why = "not an Arrow stream of a Kinesis or Kafka record of an Arrow route";
                    outcomes[i] = Some(Outcome::Poison(why.to_owned()));
                    continue;
                }
            };
            // No order group: a group of its own.
            let group = record.group.clone().unwrap_or_else(|| format!("#{i}"));
            groups.entry(group).or_default().push((i, route, body));
        }
        let mut running = JoinSet::new();
        for group in groups.into_values() {
            let (this, call) = (self.clone(), call.clone());
            running.spawn(async move {
                let mut done = Vec::with_capacity(group.len());
                let mut stopped = false;
                for (i, route, body) in group {
                    if stopped {
                        done.push((
                            i,
                            Outcome::Failed(
                                "an earlier record of its shard or partition was not written"
                                    .to_owned(),
                            ),
                        ));
                        continue;
                    }
                    let outcome = this.arrow_record(&route, &body, &call).await;
                    stopped = match &outcome {
                        Outcome::Written => false,
                        Outcome::Failed(_) => true,
                        Outcome::Poison(_) => this.settings.poison == Poison::Fail,
                    };
                    done.push((i, outcome));
                }
                done
            });
        }
        settle(running, outcomes).await
    }

    /// One Arrow record through the write operation: written when every row is acknowledged;
    /// a stream that does not read or a row the table refuses is poison; anything else
    /// (some rows not acknowledged) fails the record, and its redelivery writes again the rows
    /// that were written (at least once, as every redelivered record).
    async fn arrow_record(&self, route: &Route, body: &[u8], call: &Call) -> Outcome {
        let body = match ArrowBody::read(body, ARROW_LIMITS) {
            Ok(body) => body,
            Err(e) => return refused(&e),
        };
        let cluster = route.cluster.as_deref().unwrap_or(&self.default_cluster);
        let path = TablePath::new(route.database.clone(), route.table.clone());
        let ids = fluss_ops::write::Ids::FailuresOnly;
        match fluss_ops::write::write_arrow(&self.pool, call, cluster, &path, &body, ids).await {
            Err(e) => refused(&e),
            Ok(outcomes) => {
                let failed: Vec<&GatewayError> = outcomes
                    .iter()
                    .filter_map(|(_, o)| o.as_ref().err())
                    .collect();
                match failed.first() {
                    None => Outcome::Written,
                    Some(e) => Outcome::Failed(format!(
                        "{} of {} rows not acknowledged ({}: {})",
                        failed.len(),
                        outcomes.len(),
                        e.code().spec().code,
                        e.message()
                    )),
                }
            }
        }
    }

    /// One write batch of `run` (all to one table) through the write operation. A batch refused
    /// as invalid is written record by record, in order, up to the first outcome that `stops`.
    async fn batch(
        &self,
        run: Vec<Routed>,
        call: &Call,
        stops: impl Fn(&Outcome) -> bool,
    ) -> Vec<Outcome> {
        let Some(first) = run.first() else {
            return Vec::new();
        };
        let cluster = first.cluster.clone();
        let path = TablePath::new(first.database.clone(), first.table.clone());
        let n = run.len();
        let (entries, texts): (Vec<_>, Vec<_>) =
            run.into_iter().map(|r| (r.entry, r.number_texts)).unzip();
        let req = WriteRequest {
            partial_update_columns: None,
            number_texts: NumberTexts::merged(texts.iter().flatten()),
            entries,
        };
        match self.write(call, &cluster, &path, &req).await {
            Err(e) if e.code() == ErrorCode::InvalidArgument && n > 1 => {
                let mut out = Vec::with_capacity(n);
                for (entry, number_texts) in req.entries.into_iter().zip(texts) {
                    let one = WriteRequest {
                        partial_update_columns: None,
                        number_texts,
                        entries: vec![entry],
                    };
                    let o = explain(self.write(call, &cluster, &path, &one).await, 1);
                    let stop = o.iter().any(&stops);
                    out.extend(o);
                    if stop {
                        break;
                    }
                }
                out
            }
            other => explain(other, n),
        }
    }

    /// `req` through the write operation, one outcome per entry.
    async fn write(
        &self,
        call: &Call,
        cluster: &str,
        path: &TablePath,
        req: &WriteRequest,
    ) -> Result<Vec<Result<(), GatewayError>>, GatewayError> {
        let outcomes = fluss_ops::write::write(&self.pool, call, cluster, path, req).await?;
        Ok(outcomes.into_iter().map(|(_, o)| o).collect())
    }
}

/// Every record's outcome once `running` (tasks answering `(record index, outcome)` pairs) is
/// done, over those `outcomes` already has. A record whose task died is reported: never
/// claimed written.
async fn settle(
    mut running: JoinSet<Vec<(usize, Outcome)>>,
    mut outcomes: Vec<Option<Outcome>>,
) -> Vec<Outcome> {
    while let Some(done) = running.join_next().await {
        match done {
            Ok(done) => {
                for (i, outcome) in done {
                    outcomes[i] = Some(outcome);
                }
            }
            Err(e) => tracing::error!(error = %e, "an ingest task failed"),
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Outcome::Failed("internal error".to_owned())))
        .collect()
}

/// The table a record goes to, for grouping.
type TableKey<'a> = (&'a str, &'a str, &'a str);

fn key(r: &Routed) -> TableKey<'_> {
    (&r.cluster, &r.database, &r.table)
}

/// Per-entry outcomes of a batch: a refused batch is poison when it can never succeed (an
/// invalid row, an unknown cluster, database or table), else failed.
fn explain(batch: Result<Vec<Result<(), GatewayError>>, GatewayError>, n: usize) -> Vec<Outcome> {
    match batch {
        Ok(outcomes) => outcomes
            .into_iter()
            .map(|o| match o {
                Ok(()) => Outcome::Written,
                Err(e) => Outcome::Failed(format!("{}: {}", e.code().spec().code, e.message())),
            })
            .collect(),
        Err(e) => {
            let outcome = refused(&e);
            (0..n).map(|_| outcome.clone()).collect()
        }
    }
}

/// What a refused batch (or table lookup) means for its records: poison when it can never
/// succeed (an invalid row, an unknown cluster, database or table, an unsupported operation),
/// else failed (transient: the source delivers it again).
fn refused(e: &GatewayError) -> Outcome {
    let why = format!("{}: {}", e.code().spec().code, e.message());
    let poison = matches!(
        e.code(),
        ErrorCode::InvalidArgument
            | ErrorCode::ClusterNotFound
            | ErrorCode::DatabaseNotFound
            | ErrorCode::TableNotFound
            | ErrorCode::NotFound
            | ErrorCode::Unsupported
    );
    if poison {
        Outcome::Poison(why)
    } else {
        Outcome::Failed(why)
    }
}

/// A reason as the log shows it: the codec's messages quote the refused value (`…, got "abc"`,
/// `…: 1.234`), which is the record's payload; the log keeps the entry, the column and what
/// was expected, never the value.
fn without_values(reason: &str) -> String {
    // "…: column `a.b` expects …": keep everything up to the column, then cut the rest at the
    // first place a value would follow.
    let column = reason
        .find("column `")
        .and_then(|at| reason[at + 8..].find('`').map(|end| at + 8 + end + 1));
    let (head, tail) = reason.split_at(column.unwrap_or(0));
    // Past a column, `: ` introduces the value; elsewhere (a missing table) it does not.
    let markers: &[&str] = if column.is_some() {
        &[", got ", ": ", "\""]
    } else {
        &[", got ", "\""]
    };
    let cut = markers
        .iter()
        .filter_map(|m| tail.find(m))
        .min()
        .unwrap_or(tail.len());
    let mut out = format!("{head}{}", &tail[..cut]);
    if cut < tail.len() {
        out.push_str(" (value not logged)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_values;

    #[test]
    fn logged_reasons_keep_the_column_and_drop_the_value() {
        assert_eq!(
            without_values(
                "invalid_argument: entry `3`: column `seq` expects an integer for BIGINT, got \"secret\""
            ),
            "invalid_argument: entry `3`: column `seq` expects an integer for BIGINT (value not logged)"
        );
        assert_eq!(
            without_values(
                "invalid_argument: entry `0`: column `d` has more than 2 fraction digits for DECIMAL(10, 2): 1.234"
            ),
            "invalid_argument: entry `0`: column `d` has more than 2 fraction digits for DECIMAL(10, 2) (value not logged)"
        );
        assert_eq!(
            without_values("table_not_found: table `d.t` does not exist"),
            "table_not_found: table `d.t` does not exist"
        );
        assert_eq!(
            without_values("the record has no value"),
            "the record has no value"
        );
    }
}
