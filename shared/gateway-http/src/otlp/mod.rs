//! The OTLP/HTTP receiver (an extension): `POST …/databases/{database}/otlp[/{prefix}]/v1/logs`,
//! `…/v1/traces` and `…/v1/metrics` take an OpenTelemetry SDK's or Collector's exports into the
//! OTLP tables (`gateway_core::otlp`), and `POST …/otlp/tables` creates those tables.
//!
//! An export runs the cheap checks first (query string, content type, names, body, its records
//! and attributes), then the cluster and the write gate, then [`fluss_ops::otlp::export`],
//! which writes through the write operation: a record reported accepted is acknowledged by
//! Fluss. Answers follow the OTLP specification, in the request's encoding: 200 with the
//! `Export…ServiceResponse` (`partial_success` counting the records not written), and a
//! `google.rpc.Status` body on every error; 429 and 503 carry `Retry-After`, which exporters
//! honour.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use fluss_ops::otlp::{Target, create_tables, export};
use fluss_pool::Pool;
use gateway_core::GatewayError;
use gateway_core::names::check_name;
use gateway_core::otlp::{
    DEFAULT_PREFIX, Encoding, ExportAnswer, ExportBody, Limits, OtlpTable, Signal, partition_day,
};
use gateway_core::routes::{OTLP_EXPORTS, OTLP_TABLES};
use gateway_core::settings::keys::otlp::{CREATE_TABLES_KEY, MAX_ATTRIBUTES_KEY};
use gateway_core::settings::{self, Slot};
use serde::{Deserialize, Serialize};

use crate::admission::{Gate, admit};
use crate::error::ApiError;
use crate::extract::{ParseBody, Routed, serde_body};
use crate::middleware::elapsed_ms;
use crate::records::WriteLimits;
use status::status_response;

pub(crate) mod status;

/// Settings of the OTLP routes beyond the write route's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtlpOptions {
    /// Create a missing OTLP table on first export.
    pub create_tables: bool,
    /// Most attributes in one list.
    pub max_attributes: usize,
}

impl Default for OtlpOptions {
    fn default() -> Self {
        OtlpOptions {
            create_tables: false,
            max_attributes: 1024,
        }
    }
}

impl OtlpOptions {
    /// Reads `gateway.rest.otlp.*` from `map`; every problem is reported at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut o = OtlpOptions::default();
        settings::read(
            map,
            &["gateway.rest.otlp."],
            &mut [
                (CREATE_TABLES_KEY, Slot::Bool(&mut o.create_tables)),
                (MAX_ATTRIBUTES_KEY, Slot::Count(&mut o.max_attributes)),
            ],
            "otlp",
        )?;
        Ok(o)
    }
}

/// Everything the OTLP routes share across requests; built once per container.
#[derive(Clone)]
pub struct OtlpState {
    pool: Pool,
    limits: WriteLimits,
    options: OtlpOptions,
    /// Exports in flight; a full gate answers 429 (exporters retry it after `Retry-After`).
    gate: Gate,
}

impl OtlpState {
    /// State over `pool`: the write route's `limits` bound each export, `options` the rest.
    pub fn new(pool: Pool, limits: WriteLimits, options: OtlpOptions) -> Self {
        OtlpState {
            pool,
            limits,
            options,
            gate: Gate::new(limits.max_concurrent, "OTLP export"),
        }
    }
}

/// The OTLP route family. Wrap it with [`crate::build_router`] to serve it.
pub fn otlp_routes(state: OtlpState) -> Router {
    let mut router = Router::new().route(OTLP_TABLES, post(create));
    for (path, signal, _) in OTLP_EXPORTS {
        router = router.route(
            path,
            post(move |state: State<OtlpState>, call: Routed<OtlpParams>| {
                receive(signal, state, call)
            }),
        );
    }
    router
        .layer(DefaultBodyLimit::max(state.limits.max_request_bytes))
        .with_state(state)
}

/// Path parameters of the OTLP routes.
#[derive(Debug, Deserialize)]
struct OtlpParams {
    cluster: String,
    database: String,
    prefix: Option<String>,
}

impl OtlpParams {
    /// The names, through the identifier rule (and every table name they make), before any
    /// Fluss call.
    fn checked_prefix(&self) -> Result<&str, GatewayError> {
        check_name("database", &self.database)?;
        let prefix = self.prefix.as_deref().unwrap_or(DEFAULT_PREFIX);
        check_name("prefix", prefix)?;
        for table in OtlpTable::ALL {
            check_name("table", &table.name(prefix))?;
        }
        Ok(prefix)
    }
}

async fn receive(
    signal: Signal,
    State(state): State<OtlpState>,
    Routed(ctx, params, input): Routed<OtlpParams>,
) -> Response {
    let started = Instant::now();
    let known = Encoding::from_content_type(Some(input.content_type()));
    // An unknown content type is answered in JSON, the encoding readable by anyone.
    let encoding = known.as_ref().map_or(Encoding::Json, |e| *e);
    let outcome = async {
        known?;
        input.ensure_no_query()?;
        let prefix = params.checked_prefix()?;
        let Some(body) = input.body() else {
            return Err(GatewayError::limit(format!(
                "the request body is over {} bytes (decoded)",
                state.limits.max_request_bytes
            )));
        };
        let limits = Limits {
            max_records: state.limits.max_rows,
            max_attributes: state.options.max_attributes,
        };
        let day = partition_day(SystemTime::now());
        let export_body = ExportBody::decode(signal, encoding, body)?;
        let rows = export_body.rows(&limits, &day)?;
        let rebuild = |table| export_body.rows(&limits, &day).map(|mut r| r.take(table));
        let records = rows.records();
        let _permit = admit(&state.pool, &state.gate, &params.cluster)?;
        let target = Target {
            cluster: &params.cluster,
            database: &params.database,
            prefix,
            day: &day,
            create_missing: state.options.create_tables,
        };
        let exported = export(&state.pool, &ctx.call, &target, rows, &rebuild).await?;
        Ok((records, exported))
    }
    .await;
    match outcome {
        Ok((records, exported)) => {
            // One line per request, never per record; no values.
            tracing::info!(
                request_id = %ctx.request_id,
                cluster = %params.cluster,
                database = %params.database,
                signal = ?signal,
                records,
                accepted = exported.accepted,
                rejected = exported.rejected,
                elapsed_ms = elapsed_ms(started),
                "otlp export"
            );
            let answer = ExportAnswer {
                signal,
                rejected: exported.rejected,
                message: exported.message,
            };
            (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(encoding.content_type()),
                )],
                answer.body(encoding),
            )
                .into_response()
        }
        Err(error) => status_response(&error, &ctx.request_id, encoding),
    }
}

/// `POST …/otlp/tables` body: which tables to create.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateOtlpTables {
    /// Table name prefix (`otel`).
    #[serde(default)]
    prefix: Option<String>,
    /// Buckets of each table (the server's default when absent).
    #[serde(default)]
    buckets: Option<u32>,
}

impl ParseBody for CreateOtlpTables {
    fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(CreateOtlpTables::default());
        }
        let req: CreateOtlpTables = serde_body(body, "OTLP tables request")?;
        if req.buckets == Some(0) {
            return Err(GatewayError::invalid("`buckets` must be at least 1"));
        }
        Ok(req)
    }
}

/// `POST …/otlp/tables` answer.
#[derive(Debug, Serialize)]
struct OtlpTablesResponse {
    database: String,
    tables: Vec<OtlpTableEntry>,
}

#[derive(Debug, Serialize)]
struct OtlpTableEntry {
    table: String,
    created: bool,
}

async fn create(
    State(state): State<OtlpState>,
    Routed(ctx, params, input): Routed<OtlpParams>,
) -> Result<Response, ApiError> {
    input.ensure_json_post()?;
    let req: CreateOtlpTables = input.json()?;
    let params = OtlpParams {
        prefix: req.prefix.clone(),
        ..params
    };
    let prefix = params.checked_prefix()?;
    let _permit = admit(&state.pool, &state.gate, &params.cluster)?;
    let day = partition_day(SystemTime::now());
    let target = Target {
        cluster: &params.cluster,
        database: &params.database,
        prefix,
        day: &day,
        create_missing: true,
    };
    let created = create_tables(
        &state.pool,
        &ctx.call,
        &target,
        &OtlpTable::ALL,
        req.buckets,
    )
    .await?;
    let body = OtlpTablesResponse {
        database: params.database.clone(),
        tables: created
            .into_iter()
            .map(|(table, created)| OtlpTableEntry { table, created })
            .collect(),
    };
    Ok(axum::Json(body).into_response())
}
