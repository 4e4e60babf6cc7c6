//! The `Idempotency-Key` store of the write route (the IETF httpapi idempotency-key draft's
//! semantics), below HTTP so that any entry point writing rows can use it:
//! the first request with a key claims it (a conditional write: "in progress"), runs, and keeps
//! its 200 response for `gateway.rest.idempotency.ttl`; a retry with the same key and the same
//! body gets the kept response byte for byte without touching Fluss; the same key with another
//! body is 422; a retry while the first still runs is 409 with `Retry-After`.
//!
//! Keys are scoped by principal, cluster and table: the stored key is a SHA-256 of the four, so
//! two callers' keys never meet and no caller-chosen text reaches the store. The body
//! fingerprint is a SHA-256 of the media type and the *decoded* body (a retry sent plain or
//! gzip-compressed is the same request).
//!
//! The in-progress claim expires on its own: at the request's deadline plus
//! [`COMPLETION_GRACE`], the latest moment a live container can still complete the record. A
//! container that dies between Fluss' acknowledgement and the completion leaves the key claimed
//! until then, after which a retry runs the write again (docs/idempotency.md, "crash window").
//!
//! Refuses: keeping failed requests (a 4xx or 5xx releases the claim, so the retry runs again)
//! and failing open (an unreachable store is a 503 before anything is written). Reading the
//! key from a request's headers is the HTTP crate's (`gateway-http`, `records::idempotency`).

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use gateway_core::settings::{self, Slot};
use gateway_core::wire::WriteResponse;
use gateway_core::{ErrorCode, GatewayError};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

pub use gateway_core::settings::keys::idempotency::{TABLE_KEY, TTL_KEY};
/// The default `gateway.rest.idempotency.ttl` (as the draft suggests: a day).
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);
/// How long after the request's deadline an in-progress claim stays: time for the completion
/// write of a request that ended at its deadline.
pub const COMPLETION_GRACE: Duration = Duration::from_secs(10);
/// Longest key accepted (the draft leaves it open; 255 is what common APIs take).
pub const MAX_KEY_CHARS: usize = 255;
/// Largest compressed body kept in one record (a DynamoDB item holds 400 KB).
pub const MAX_KEPT_BYTES: usize = 350 * 1024;

const NAMESPACE: &str = "gateway.rest.idempotency.";

/// Settings of the idempotency store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencySettings {
    /// The DynamoDB table; `None` when the feature is off.
    pub table: Option<String>,
    /// How long a completed response is kept.
    pub ttl: Duration,
}

impl IdempotencySettings {
    /// Reads the settings from `map` (either key form); unknown keys under the namespace and
    /// unparsable values are reported by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut table = String::new();
        let mut ttl = DEFAULT_TTL;
        settings::read(
            map,
            &[NAMESPACE],
            &mut [
                (TABLE_KEY, Slot::Text(&mut table)),
                (
                    TTL_KEY,
                    Slot::Duration {
                        slot: &mut ttl,
                        allow_zero: false,
                    },
                ),
            ],
            "idempotency",
        )?;
        Ok(IdempotencySettings {
            table: (!table.is_empty()).then_some(table),
            ttl,
        })
    }
}

/// A kept response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// HTTP status (200: only complete writes are kept).
    pub status: u16,
    /// The JSON body as it was (or, when `partial`, as shortened by [`keep`]).
    pub body: Vec<u8>,
    /// Whether the body was shortened to fit the store.
    pub partial: bool,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is ours: run the request, then [`Store::complete`] or [`Store::release`].
    Run,
    /// The key's request completed: answer with its response.
    Replay(Kept),
    /// The key's request is still running (409).
    InUse,
    /// The key was used with another body (422).
    Reused,
}

/// Where keys are kept. Every call names the claim's `owner` (a fresh id per attempt), so a
/// claim that expired and was taken over is never completed or released by its old owner.
#[async_trait]
pub trait Store: Send + Sync {
    /// Claims `key` for a request with `fingerprint`, unless a live record holds it; the claim
    /// expires at `until` (epoch seconds). `now` decides which records are expired.
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        owner: &str,
        now: u64,
        until: u64,
    ) -> Result<Claim, GatewayError>;

    /// Replaces `owner`'s claim by the completed record, kept until `expires_at`.
    async fn complete(
        &self,
        key: &str,
        fingerprint: &str,
        owner: &str,
        kept: &Kept,
        expires_at: u64,
    ) -> Result<(), GatewayError>;

    /// Drops `owner`'s claim (the request failed as a whole; a retry runs it again).
    async fn release(&self, key: &str, owner: &str) -> Result<(), GatewayError>;
}

/// The write route's idempotency: a store and the time a response is kept.
#[derive(Clone)]
pub struct Idempotency {
    store: Arc<dyn Store>,
    ttl: Duration,
}

impl Idempotency {
    /// Idempotency over `store`, keeping responses for `ttl`.
    pub fn new(store: Arc<dyn Store>, ttl: Duration) -> Self {
        Idempotency { store, ttl }
    }

    /// The DynamoDB store of `settings` (with the AWS endpoint, region and credentials of
    /// `env`), or `None` when the feature is off.
    pub fn from_settings(
        settings: &IdempotencySettings,
        env: &BTreeMap<String, String>,
    ) -> Option<Self> {
        let table = settings.table.clone()?;
        let store = DynamoStore::new(
            table,
            gateway_aws::AwsOverrides::from_map(env, &["AWS_ENDPOINT_URL_DYNAMODB"]),
        );
        Some(Idempotency::new(Arc::new(store), settings.ttl))
    }

    /// Claims `key` until the request's deadline (`remaining` from now) plus
    /// [`COMPLETION_GRACE`].
    pub async fn claim(
        &self,
        key: &ScopedKey,
        owner: &str,
        remaining: Duration,
    ) -> Result<Claim, GatewayError> {
        let now = now_secs();
        let until = now + (remaining + COMPLETION_GRACE).as_secs().max(1);
        // The AWS client bounds each call (gateway_aws::AWS_TIMEOUTS); the deadline bounds
        // the claim as a whole, so a store that accepts connections and never answers costs
        // the caller at most its deadline, never a hang. A put abandoned here may still land
        // later: it expires at `until` like any claim of a request that ended at its deadline.
        match tokio::time::timeout(
            remaining,
            self.store
                .claim(&key.key, &key.fingerprint, owner, now, until),
        )
        .await
        {
            Ok(claimed) => claimed,
            Err(_) => Err(GatewayError::new(
                ErrorCode::Unavailable,
                "the idempotency store is unavailable (no answer within the request deadline); retry with the same key",
            )),
        }
    }

    /// Keeps `kept` as `key`'s response for the configured time. A failure is logged, not
    /// returned: the write happened and its response is the truth; the claim then expires on
    /// its own (a retry after that runs again).
    pub async fn complete(&self, key: &ScopedKey, owner: &str, kept: &Kept, request_id: &str) {
        let expires_at = now_secs() + self.ttl.as_secs();
        if let Err(e) = self
            .store
            .complete(&key.key, &key.fingerprint, owner, kept, expires_at)
            .await
        {
            tracing::warn!(
                request_id,
                error = %e,
                detail = e.detail().unwrap_or(""),
                "the idempotency record could not be completed; a retry after the claim expires writes again"
            );
        }
    }

    /// Releases `key` after a request that failed as a whole; a failure is logged (the claim
    /// then expires on its own).
    pub async fn release(&self, key: &ScopedKey, owner: &str, request_id: &str) {
        if let Err(e) = self.store.release(&key.key, owner).await {
            tracing::warn!(
                request_id,
                error = %e,
                detail = e.detail().unwrap_or(""),
                "the idempotency claim could not be released; it expires on its own"
            );
        }
    }
}

/// A key as stored: scoped to its caller and table, plus the request's body fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedKey {
    /// Hex SHA-256 of principal, cluster, table path and the caller's key.
    pub key: String,
    /// Hex SHA-256 of the media type and the decoded body.
    pub fingerprint: String,
}

impl ScopedKey {
    /// The stored key of `key` sent by `principal` to `cluster`/`table`, for `body` of
    /// `content_type`.
    pub fn new(
        principal: &str,
        cluster: &str,
        table: &str,
        key: &str,
        content_type: &str,
        body: &[u8],
    ) -> Self {
        let mut scope = Sha256::new();
        for part in [principal, cluster, table, key] {
            // Length-prefixed, so no two different tuples hash the same bytes.
            scope.update((part.len() as u64).to_be_bytes());
            scope.update(part.as_bytes());
        }
        let mut fp = Sha256::new();
        let media = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        fp.update((media.len() as u64).to_be_bytes());
        fp.update(media.as_bytes());
        fp.update(body);
        ScopedKey {
            key: hex(&scope.finalize()),
            fingerprint: hex(&fp.finalize()),
        }
    }
}

/// The body to answer with and the record to keep for `response`: the body as is when it fits
/// the store compressed, else the counts and failures (the entries a caller must act on), else
/// the counts alone; a shortened record is marked `partial` (a replay says so in
/// `PARTIAL_HEADER`).
pub fn keep(response: &WriteResponse) -> Result<(Vec<u8>, Kept), GatewayError> {
    let body = response.to_json_vec();
    if packed_len(&body) <= MAX_KEPT_BYTES {
        let kept = Kept {
            status: 200,
            body: body.clone(),
            partial: false,
        };
        return Ok((body, kept));
    }
    let mut short = WriteResponse {
        successes: Vec::new(),
        ..response.clone()
    };
    let mut shortened = short.to_json_vec();
    if packed_len(&shortened) > MAX_KEPT_BYTES {
        short.failures.clear();
        shortened = short.to_json_vec();
    }
    let kept = Kept {
        status: 200,
        body: shortened,
        partial: true,
    };
    Ok((body, kept))
}

fn packed_len(body: &[u8]) -> usize {
    pack(body).len()
}

/// gzip of `body` (kept records are stored compressed: JSON outcomes shrink 10× or more).
fn pack(body: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(body);
    encoder.finish().unwrap_or_default()
}

/// The body of a stored record, bounded (a record is at most [`MAX_KEPT_BYTES`] compressed; a
/// write response inflates to a few MB at most).
fn unpack(packed: &[u8]) -> Result<Vec<u8>, GatewayError> {
    const MAX_BODY: u64 = 64 * 1024 * 1024;
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(packed)
        .take(MAX_BODY)
        .read_to_end(&mut body)
        .map_err(|e| GatewayError::internal(format!("a kept response does not decode: {e}")))?;
    Ok(body)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The DynamoDB store: one item per key (`pk`), `state` `in_progress` or `done`, the body
/// `fingerprint`, the claim's `owner`, `expires_at` (epoch seconds, the table's TTL attribute:
/// DynamoDB deletes expired items within days, so reads treat an expired item as absent), and
/// for a done item its `status` and gzip `body`.
pub struct DynamoStore {
    table: String,
    overrides: gateway_aws::AwsOverrides,
    /// Built on first use (building reads the environment; deferring it keeps start-up
    /// synchronous and free of I/O).
    client: OnceCell<Client>,
}

const IN_PROGRESS: &str = "in_progress";
const DONE: &str = "done";

impl DynamoStore {
    /// A store on `table`, its client built with `overrides` on first use.
    pub fn new(table: String, overrides: gateway_aws::AwsOverrides) -> Self {
        DynamoStore {
            table,
            overrides,
            client: OnceCell::new(),
        }
    }

    async fn client(&self) -> &Client {
        self.client
            .get_or_init(|| async { Client::new(&self.overrides.sdk_config().await) })
            .await
    }

    /// 503: the store could not be reached; the SDK's text (operation, status; never a body)
    /// goes to the log only.
    fn unavailable<E: std::error::Error>(what: &str, e: E) -> GatewayError {
        GatewayError::new(
            ErrorCode::Unavailable,
            format!("the idempotency store is unavailable ({what}); retry with the same key"),
        )
        .with_detail(aws_sdk_dynamodb::error::DisplayErrorContext(e).to_string())
    }

    /// The outcome of a conditional write: `Ok(true)` written, `Ok(false)` refused by its
    /// condition (an answer, not a failure), `Err` the store could not be reached.
    fn written<O, E, R>(what: &str, result: Result<O, SdkError<E, R>>) -> Result<bool, GatewayError>
    where
        E: ConditionRefusal + std::error::Error + 'static,
        R: std::fmt::Debug,
    {
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(ConditionRefusal::is_conditional_check_failed) =>
            {
                Ok(false)
            }
            Err(e) => Err(Self::unavailable(what, e)),
        }
    }

    /// A put of the item of `key` with the fields an item has in every state; `claim` and
    /// `complete` add their own fields and condition.
    async fn put(
        &self,
        key: &str,
        state: &str,
        fingerprint: &str,
        owner: &str,
        expires_at: u64,
    ) -> PutItemFluentBuilder {
        self.client()
            .await
            .put_item()
            .table_name(&self.table)
            .item("pk", AttributeValue::S(key.to_owned()))
            .item("state", AttributeValue::S(state.to_owned()))
            .item("fingerprint", AttributeValue::S(fingerprint.to_owned()))
            .item("owner", AttributeValue::S(owner.to_owned()))
            .item("expires_at", AttributeValue::N(expires_at.to_string()))
    }

    async fn read(&self, key: &str) -> Result<Option<Record>, GatewayError> {
        let out = self
            .client()
            .await
            .get_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(key.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| Self::unavailable("GetItem", e))?;
        out.item.map(|item| Record::from_item(&item)).transpose()
    }
}

/// A stored item, read back.
struct Record {
    state: String,
    fingerprint: String,
    expires_at: u64,
    status: u16,
    body: Option<Vec<u8>>,
    partial: bool,
}

impl Record {
    fn from_item(
        item: &std::collections::HashMap<String, AttributeValue>,
    ) -> Result<Self, GatewayError> {
        let s = |k: &str| item.get(k).and_then(|v| v.as_s().ok()).cloned();
        let n = |k: &str| {
            item.get(k)
                .and_then(|v| v.as_n().ok())
                .and_then(|n| n.parse::<u64>().ok())
        };
        let broken = || GatewayError::internal("an idempotency record has an unexpected shape");
        Ok(Record {
            state: s("state").ok_or_else(broken)?,
            fingerprint: s("fingerprint").ok_or_else(broken)?,
            expires_at: n("expires_at").ok_or_else(broken)?,
            status: n("status")
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(200),
            body: item
                .get("body")
                .and_then(|v| v.as_b().ok())
                .map(|b| b.as_ref().to_vec()),
            partial: item
                .get("partial")
                .and_then(|v| v.as_bool().ok())
                .copied()
                .unwrap_or(false),
        })
    }
}

/// The error of a conditional DynamoDB write, which tells a refused condition from a failure
/// (the SDK gives each operation its own error type, with no trait for it).
trait ConditionRefusal {
    fn is_conditional_check_failed(&self) -> bool;
}

impl ConditionRefusal for PutItemError {
    fn is_conditional_check_failed(&self) -> bool {
        self.is_conditional_check_failed_exception()
    }
}

impl ConditionRefusal for DeleteItemError {
    fn is_conditional_check_failed(&self) -> bool {
        self.is_conditional_check_failed_exception()
    }
}

/// `$builder` (a put or a delete: the SDK's builders share no trait) on condition that the
/// claim is still `$owner`'s and in progress.
macro_rules! while_claimed_by {
    ($builder:expr, $owner:expr) => {
        $builder
            .condition_expression("#owner = :owner AND #state = :in_progress")
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_names("#state", "state")
            .expression_attribute_values(":owner", AttributeValue::S($owner.to_owned()))
            .expression_attribute_values(":in_progress", AttributeValue::S(IN_PROGRESS.into()))
    };
}

#[async_trait]
impl Store for DynamoStore {
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        owner: &str,
        now: u64,
        until: u64,
    ) -> Result<Claim, GatewayError> {
        // Twice at most: a record that expires between the refused put and the read is absent
        // on the read, and the second put takes it.
        for _ in 0..2 {
            let put = self
                .put(key, IN_PROGRESS, fingerprint, owner, until)
                .await
                .condition_expression("attribute_not_exists(pk) OR expires_at < :now")
                .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
                .send()
                .await;
            if Self::written("PutItem", put)? {
                return Ok(Claim::Run);
            }
            let Some(record) = self.read(key).await? else {
                continue;
            };
            if record.expires_at < now {
                continue;
            }
            if record.fingerprint != fingerprint {
                return Ok(Claim::Reused);
            }
            if record.state != DONE {
                return Ok(Claim::InUse);
            }
            let body = unpack(record.body.as_deref().unwrap_or_default())?;
            return Ok(Claim::Replay(Kept {
                status: record.status,
                body,
                partial: record.partial,
            }));
        }
        // Two expiries in a row while racing: another request holds it now.
        Ok(Claim::InUse)
    }

    async fn complete(
        &self,
        key: &str,
        fingerprint: &str,
        owner: &str,
        kept: &Kept,
        expires_at: u64,
    ) -> Result<(), GatewayError> {
        let put = self
            .put(key, DONE, fingerprint, owner, expires_at)
            .await
            .item("status", AttributeValue::N(kept.status.to_string()))
            .item("body", AttributeValue::B(Blob::new(pack(&kept.body))))
            .item("partial", AttributeValue::Bool(kept.partial));
        let result = while_claimed_by!(put, owner).send().await;
        if Self::written("PutItem", result)? {
            Ok(())
        } else {
            Err(GatewayError::new(
                ErrorCode::FailedPrecondition,
                "the claim expired before the request completed",
            ))
        }
    }

    async fn release(&self, key: &str, owner: &str) -> Result<(), GatewayError> {
        let delete = self
            .client()
            .await
            .delete_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(key.to_owned()));
        let result = while_claimed_by!(delete, owner).send().await;
        // Refused: someone else's claim now (ours expired), not ours to drop.
        Self::written("DeleteItem", result).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::map_of as map;

    #[test]
    fn settings_default_off_and_both_key_forms() {
        let s = IdempotencySettings::from_map(&map(&[("PATH", "/bin")])).unwrap();
        assert_eq!(s.table, None);
        assert_eq!(s.ttl, DEFAULT_TTL);
        let s = IdempotencySettings::from_map(&map(&[
            ("FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE", "keys"),
            ("gateway.rest.idempotency.ttl", "2h"),
        ]))
        .unwrap();
        assert_eq!(s.table.as_deref(), Some("keys"));
        assert_eq!(s.ttl, Duration::from_secs(7200));
        let e = IdempotencySettings::from_map(&map(&[
            ("gateway.rest.idempotency.ttl", "0"),
            ("gateway.rest.idempotency.tabel", "x"),
        ]))
        .unwrap_err();
        assert!(
            e.message().contains("`gateway.rest.idempotency.ttl`"),
            "{e}"
        );
        assert!(
            e.message()
                .contains("`gateway.rest.idempotency.tabel`: unknown key"),
            "{e}"
        );
    }

    #[test]
    fn keys_are_scoped_and_fingerprints_ignore_parameters_of_the_media_type() {
        let k = |p: &str, c: &str, t: &str, key: &str| {
            ScopedKey::new(p, c, t, key, "application/json", b"{}").key
        };
        let base = k("alice", "default", "db.t", "k1");
        assert_ne!(base, k("bob", "default", "db.t", "k1"));
        assert_ne!(base, k("alice", "other", "db.t", "k1"));
        assert_ne!(base, k("alice", "default", "db.u", "k1"));
        assert_ne!(base, k("alice", "default", "db.t", "k2"));
        // Length prefixes: moving a character between parts changes the key.
        assert_ne!(k("ab", "c", "d", "e"), k("a", "bc", "d", "e"));
        let fp = |ct: &str, body: &[u8]| ScopedKey::new("a", "c", "t", "k", ct, body).fingerprint;
        assert_eq!(
            fp("application/json", b"{}"),
            fp("Application/JSON; charset=utf-8", b"{}")
        );
        assert_ne!(
            fp("application/json", b"{}"),
            fp("application/x-ndjson", b"{}")
        );
        assert_ne!(
            fp("application/json", b"{}"),
            fp("application/json", b"{ }")
        );
    }

    #[test]
    fn a_refused_condition_is_an_answer_and_any_other_failure_is_unavailable() {
        use aws_sdk_dynamodb::types::error::{
            ConditionalCheckFailedException, ResourceNotFoundException,
        };
        let written = DynamoStore::written::<(), PutItemError, ()>("PutItem", Ok(()));
        assert!(written.unwrap());
        let refused = PutItemError::ConditionalCheckFailedException(
            ConditionalCheckFailedException::builder().build(),
        );
        let refused =
            DynamoStore::written::<(), _, _>("PutItem", Err(SdkError::service_error(refused, ())));
        assert!(!refused.unwrap());
        let refused = DeleteItemError::ConditionalCheckFailedException(
            ConditionalCheckFailedException::builder().build(),
        );
        let refused = DynamoStore::written::<(), _, _>(
            "DeleteItem",
            Err(SdkError::service_error(refused, ())),
        );
        assert!(!refused.unwrap());
        let missing =
            PutItemError::ResourceNotFoundException(ResourceNotFoundException::builder().build());
        let e =
            DynamoStore::written::<(), _, _>("PutItem", Err(SdkError::service_error(missing, ())))
                .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unavailable);
        assert!(e.message().contains("(PutItem)"), "{e}");
        let e = DynamoStore::written::<(), DeleteItemError, ()>(
            "DeleteItem",
            Err(SdkError::timeout_error("no answer")),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unavailable);
        assert!(e.message().contains("(DeleteItem)"), "{e}");
    }

    fn response(rows: usize, id_len: usize) -> WriteResponse {
        WriteResponse::from_outcomes((0..rows).map(|i| {
            let id = format!("{i:0id_len$}");
            let outcome = if i % 2 == 0 {
                Ok(())
            } else {
                Err(GatewayError::new(ErrorCode::Timeout, "no acknowledgement"))
            };
            (id, outcome)
        }))
    }

    #[test]
    fn kept_bodies_are_whole_when_they_fit_and_shortened_otherwise() {
        let small = response(10, 4);
        let (body, kept) = keep(&small).unwrap();
        assert_eq!(body, serde_json::to_vec(&small).unwrap());
        assert_eq!(kept.body, body);
        assert!(!kept.partial);
        assert_eq!(unpack(&pack(&body)).unwrap(), body);

        // Ids of random-looking text do not compress: 10,000 × 192 bytes is far over the cap.
        let big = WriteResponse::from_outcomes((0..10_000).map(|i| {
            let id = hex(&Sha256::digest(format!("{i}"))).repeat(3);
            let outcome = if i == 7 {
                Err(GatewayError::new(ErrorCode::Timeout, "no acknowledgement"))
            } else {
                Ok(())
            };
            (id, outcome)
        }));
        let (body, kept) = keep(&big).unwrap();
        assert_eq!(body, serde_json::to_vec(&big).unwrap());
        assert!(kept.partial);
        assert!(pack(&kept.body).len() <= MAX_KEPT_BYTES);
        let short: WriteResponse = serde_json::from_slice(&kept.body).unwrap();
        assert_eq!(
            (short.row_count, short.success_count, short.error_count),
            (10_000, 9_999, 1)
        );
        assert!(short.successes.is_empty());
        // The failures, which a caller must act on, are kept when they fit.
        assert_eq!(short.failures, big.failures);
    }
}
