//! The key store: the secret document read from a [`SecretSource`], cached for a TTL (the
//! revocation latency), refreshed early — at most once per refresh interval — when an unknown
//! key id is presented (so a new key works within seconds without a restart), and the SASL
//! credentials of per-caller Fluss identities, cached the same way.
//!
//! A slow or failing Secrets Manager never holds a request whose key is in the last document:
//! from 80 % of the TTL on, ONE read runs in the background while the document keeps serving
//! (refresh-ahead, then stale-while-revalidate past the TTL), each read bounded by the refresh
//! timeout. How long a
//! document may serve past its TTL is `max-stale` (availability first, but bounded: a revoked
//! key stays valid at most that long during an outage); past it, or with no document at all,
//! requests wait for one bounded read and get 503 when it fails. An unknown key id forces a
//! read only while the source answers; during an outage it is refused at once (401) and the
//! background read decides.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use fluss_pool::{Identity, Secret};
use gateway_core::names::shown;
use gateway_core::{ErrorCode, GatewayError};
use sha2::{Digest, Sha256};

use crate::document::{Directory, IdentityRef};
use crate::grant::Grant;
use crate::key;
use crate::password::password_matches;
use gateway_aws::{SecretSource, SourceError};

/// How the store reads and caches.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// Secrets Manager id (name or ARN) of the key document.
    pub secret_id: String,
    /// How long a read document (and a SASL identity) is used before it is read again.
    pub ttl: Duration,
    /// The least time between two reads forced by an unknown key id.
    pub refresh_interval: Duration,
    /// How long past the TTL the last document (and a SASL identity) keeps serving while the
    /// source cannot be read.
    pub max_stale: Duration,
    /// The longest one read of the source may take before it is abandoned.
    pub refresh_timeout: Duration,
}

impl StoreSettings {
    /// Settings with the documented defaults for everything but the secret id.
    pub fn new(secret_id: impl Into<String>) -> Self {
        StoreSettings {
            secret_id: secret_id.into(),
            ttl: Duration::from_secs(60),
            refresh_interval: Duration::from_secs(2),
            max_stale: Duration::from_secs(3600),
            refresh_timeout: Duration::from_secs(2),
        }
    }
}

struct Loaded {
    dir: Arc<Directory>,
    at: Instant,
}

/// The age from which a document in use is read again in the background: late enough that a
/// container under traffic reads Secrets Manager about once a TTL (a quarter more than without
/// refresh-ahead; each read is billed), early enough that the read (tens of milliseconds)
/// ends long before the TTL.
fn refresh_ahead_at(ttl: Duration) -> Duration {
    ttl - ttl / 5
}

/// Cap on remembered password verifications: each is 32 bytes and an instant.
const MAX_VERIFIED: usize = 4096;

/// The cached key document and identities; shared by every request of a container (cheap to
/// clone: the state is shared, so a background read can outlive the request that started it).
#[derive(Clone)]
pub struct KeyStore {
    shared: Arc<Shared>,
}

struct Shared {
    source: Arc<dyn SecretSource>,
    settings: StoreSettings,
    current: RwLock<Option<Loaded>>,
    /// Held by the one read of the document in flight.
    flight: tokio::sync::Mutex<()>,
    /// When the document was last read (or tried) and whether that read failed.
    attempt: Mutex<Option<(Instant, bool)>>,
    identities: Mutex<HashMap<String, (Identity, Instant)>>,
    /// SASL identity secrets being read in the background.
    identities_in_flight: Mutex<HashSet<String>>,
    verified: Mutex<HashMap<[u8; 32], Instant>>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("secret_id", &self.shared.settings.secret_id)
            .field("ttl", &self.shared.settings.ttl)
            .finish_non_exhaustive()
    }
}

fn refused(message: &str, detail: String) -> GatewayError {
    GatewayError::new(ErrorCode::Unauthenticated, message).with_detail(detail)
}

/// What a caller is told for every key that is well-formed but not valid: which of unknown,
/// wrong secret, disabled or expired it was goes to the log only (no oracle for guessing).
pub const INVALID_KEY: &str = "the API key is not valid";
/// What a caller is told for wrong Basic credentials.
pub const INVALID_USER: &str = "the user name or password is not valid";

impl KeyStore {
    /// A store reading `settings.secret_id` from `source`; reads nothing yet.
    pub fn new(source: Arc<dyn SecretSource>, settings: StoreSettings) -> Self {
        KeyStore {
            shared: Arc::new(Shared {
                source,
                settings,
                current: RwLock::new(None),
                flight: tokio::sync::Mutex::new(()),
                attempt: Mutex::new(None),
                identities: Mutex::new(HashMap::new()),
                identities_in_flight: Mutex::new(HashSet::new()),
                verified: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Reads the document now (start-up warm-up); an error is returned, not kept.
    pub async fn preload(&self) -> Result<(usize, usize), GatewayError> {
        self.read_now(Instant::now()).await.map(|d| d.len())
    }

    fn snapshot(&self) -> Option<(Arc<Directory>, Instant)> {
        let guard = self.shared.current.read().ok()?;
        guard.as_ref().map(|l| (l.dir.clone(), l.at))
    }

    /// The document a request is checked against: the cached one. From 80 % of the TTL on, a
    /// read runs in the background meanwhile (refresh-ahead: under traffic the document is
    /// replaced before it is a TTL old, so a revocation takes effect within the TTL without a
    /// request ever waiting for Secrets Manager); past the TTL (an idle container, or a source
    /// that cannot be read) it still serves, within `max-stale`, while that read runs. Past
    /// that, or with no document, the request waits for one bounded read.
    async fn directory(&self) -> Result<Arc<Directory>, GatewayError> {
        match self.snapshot() {
            Some((dir, at)) if at.elapsed() < refresh_ahead_at(self.shared.settings.ttl) => Ok(dir),
            Some((dir, at))
                if at.elapsed() < self.shared.settings.ttl + self.shared.settings.max_stale =>
            {
                self.refresh_in_background();
                Ok(dir)
            }
            _ => self.read_now(Instant::now()).await,
        }
    }

    /// How long ago the last read was tried, and whether it failed.
    fn last_attempt(&self) -> Option<(Duration, bool)> {
        self.shared
            .attempt
            .lock()
            .ok()
            .and_then(|a| *a)
            .map(|(at, failed)| (at.elapsed(), failed))
    }

    fn record_attempt(&self, at: Instant, failed: bool) {
        if let Ok(mut a) = self.shared.attempt.lock() {
            *a = Some((at, failed));
        }
    }

    /// Starts one read in the background unless one is in flight or one was tried less than
    /// the refresh interval ago (which bounds the reads a failing source sees).
    fn refresh_in_background(&self) {
        if self.shared.flight.try_lock().is_err()
            || self
                .last_attempt()
                .is_some_and(|(ago, _)| ago < self.shared.settings.refresh_interval)
        {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            // The outcome is kept (or logged) by the read itself.
            let _ = this.read_now(Instant::now()).await;
        });
    }

    /// Reads the document unless another read did since `asked`, or one was attempted less
    /// than the refresh interval ago; one read at a time, each bounded by the refresh
    /// timeout. A failed read answers the last document while it is within `max-stale`,
    /// else 503.
    async fn read_now(&self, asked: Instant) -> Result<Arc<Directory>, GatewayError> {
        let _flight = self.shared.flight.lock().await;
        let existing = self.snapshot();
        if let Some((dir, at)) = &existing
            && *at >= asked
        {
            return Ok(dir.clone());
        }
        if self
            .last_attempt()
            .is_some_and(|(ago, _)| ago < self.shared.settings.refresh_interval)
        {
            return self.fallback(existing, "read less than the refresh interval ago".into());
        }
        let started = Instant::now();
        let secret_id = &self.shared.settings.secret_id;
        let read = self
            .fetch_bounded(secret_id)
            .await
            .and_then(|text| Directory::parse(&text));
        self.record_attempt(started, read.is_err());
        match read {
            Ok(dir) => {
                let dir = Arc::new(dir);
                if let Ok(mut guard) = self.shared.current.write() {
                    *guard = Some(Loaded {
                        dir: dir.clone(),
                        at: Instant::now(),
                    });
                }
                let (keys, users) = dir.len();
                tracing::info!(keys, users, secret_id = %secret_id, "key document loaded");
                Ok(dir)
            }
            Err(problem) => {
                let age_s = existing.as_ref().map(|(_, at)| at.elapsed().as_secs());
                tracing::warn!(
                    secret_id = %secret_id,
                    problem = %problem,
                    document_age_s = age_s,
                    "key document not loaded; the last one keeps serving within max-stale"
                );
                self.fallback(existing, problem)
            }
        }
    }

    /// `secret_id`'s text, or why it could not be read within the refresh timeout (for the
    /// log; never a secret value).
    async fn fetch_bounded(&self, secret_id: &str) -> Result<String, String> {
        let timeout = self.shared.settings.refresh_timeout;
        match tokio::time::timeout(timeout, self.shared.source.fetch(secret_id)).await {
            Err(_) => Err(format!("Secrets Manager did not answer within {timeout:?}")),
            Ok(Ok(text)) => Ok(text),
            Ok(Err(SourceError::NotFound)) => Err(format!("secret `{secret_id}` does not exist")),
            Ok(Err(SourceError::Unavailable(why))) => Err(why),
        }
    }

    /// The last document while it is within `max-stale` of its TTL, else 503.
    fn fallback(
        &self,
        existing: Option<(Arc<Directory>, Instant)>,
        problem: String,
    ) -> Result<Arc<Directory>, GatewayError> {
        match existing {
            Some((dir, at))
                if at.elapsed() < self.shared.settings.ttl + self.shared.settings.max_stale =>
            {
                Ok(dir)
            }
            _ => Err(GatewayError::new(
                ErrorCode::Unavailable,
                "credentials cannot be checked right now; retry shortly",
            )
            .with_detail(problem)),
        }
    }

    /// Checks an API key; the error is 401 (with the reason and key id in its log-only detail)
    /// or 503 when no document could ever be read.
    pub async fn verify_key(&self, text: &str) -> Result<Grant, GatewayError> {
        let presented =
            key::parse(text).map_err(|why| refused(why, "malformed API key".to_owned()))?;
        let asked = Instant::now();
        let mut dir = self.directory().await?;
        if dir.key(presented.key_id).is_none() {
            // A new key works at once while the source answers; while a read is in flight or
            // after one failed, the caller is not held for a read that may hang: it is refused
            // now and the background read decides for the next request.
            if self.shared.flight.try_lock().is_err()
                || self.last_attempt().is_some_and(|(_, failed)| failed)
            {
                self.refresh_in_background();
            } else {
                dir = self.read_now(asked).await?;
            }
        }
        let id = presented.key_id;
        let Some(record) = dir.key(id) else {
            return Err(refused(INVALID_KEY, format!("key {id}: unknown key id")));
        };
        if !presented.matches(&record.hash) {
            return Err(refused(INVALID_KEY, format!("key {id}: wrong secret")));
        }
        if record.disabled {
            return Err(refused(INVALID_KEY, format!("key {id}: disabled")));
        }
        if let Some(expiry) = dir.expires(id)
            && jiff::Timestamp::now() >= expiry
        {
            return Err(refused(
                INVALID_KEY,
                format!("key {id}: expired at {expiry}"),
            ));
        }
        Ok(Grant {
            principal: record.principal.clone(),
            key_id: Some(id.to_owned()),
            scopes: record.scopes.clone(),
            identity: record.identity.clone(),
        })
    }

    /// Checks HTTP Basic credentials against the users' argon2 hashes. A verification is
    /// remembered (as a SHA-256 of name, password and hash) for the TTL, so a warm container
    /// pays the slow hash once per user, not per request.
    pub async fn verify_user(&self, name: &str, password: &str) -> Result<Grant, GatewayError> {
        let dir = self.directory().await?;
        let who = shown(name);
        let Some(user) = dir.user(name) else {
            return Err(refused(INVALID_USER, format!("user {who}: unknown user")));
        };
        if user.disabled {
            return Err(refused(INVALID_USER, format!("user {who}: disabled")));
        }
        let mut h = Sha256::new();
        for part in [name, password, &user.password_hash] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        let token: [u8; 32] = h.finalize().into();
        let remembered = self
            .shared
            .verified
            .lock()
            .ok()
            .and_then(|m| m.get(&token).copied())
            .is_some_and(|at| at.elapsed() < self.shared.settings.ttl);
        if !remembered {
            if !password_matches(password, &user.password_hash) {
                return Err(refused(INVALID_USER, format!("user {who}: wrong password")));
            }
            if let Ok(mut m) = self.shared.verified.lock() {
                if m.len() >= MAX_VERIFIED {
                    m.clear();
                }
                m.insert(token, Instant::now());
            }
        }
        Ok(Grant {
            principal: user.name.clone(),
            key_id: None,
            scopes: user.scopes.clone(),
            identity: user.identity.clone(),
        })
    }

    /// The Fluss identity `identity` names: the service identity, or the SASL user whose
    /// `{"username","password"}` secret it names (cached for the TTL; the last good value is
    /// kept while the source fails).
    pub async fn identity(&self, identity: &IdentityRef) -> Result<Identity, GatewayError> {
        let secret_id = match identity {
            IdentityRef::Service => return Ok(Identity::Service),
            IdentityRef::Sasl { secret_id } => secret_id,
        };
        let cached = self
            .shared
            .identities
            .lock()
            .ok()
            .and_then(|m| m.get(secret_id).cloned());
        match cached {
            Some((id, at)) if at.elapsed() < self.shared.settings.ttl => Ok(id),
            Some((id, at))
                if at.elapsed() < self.shared.settings.ttl + self.shared.settings.max_stale =>
            {
                self.identity_in_background(secret_id);
                Ok(id)
            }
            _ => self.read_identity(secret_id).await,
        }
    }

    /// Reads `secret_id`'s identity in the background unless a read of it is in flight.
    fn identity_in_background(&self, secret_id: &str) {
        let started = self
            .shared
            .identities_in_flight
            .lock()
            .is_ok_and(|mut set| set.insert(secret_id.to_owned()));
        if !started {
            return;
        }
        let (this, secret_id) = (self.clone(), secret_id.to_owned());
        tokio::spawn(async move {
            let _ = this.read_identity(&secret_id).await;
            if let Ok(mut set) = this.shared.identities_in_flight.lock() {
                set.remove(&secret_id);
            }
        });
    }

    /// One bounded read of a SASL identity; a failure keeps the cached value within
    /// `max-stale`, else 503.
    async fn read_identity(&self, secret_id: &str) -> Result<Identity, GatewayError> {
        let read = self
            .fetch_bounded(secret_id)
            .await
            .and_then(|text| parse_sasl(&text));
        match read {
            Ok(id) => {
                if let Ok(mut m) = self.shared.identities.lock() {
                    m.insert(secret_id.to_owned(), (id.clone(), Instant::now()));
                }
                Ok(id)
            }
            Err(problem) => {
                let cached = self
                    .shared
                    .identities
                    .lock()
                    .ok()
                    .and_then(|m| m.get(secret_id).cloned())
                    .filter(|(_, at)| {
                        at.elapsed() < self.shared.settings.ttl + self.shared.settings.max_stale
                    });
                match cached {
                    Some((id, _)) => {
                        tracing::warn!(secret_id = %secret_id, problem = %problem, "Fluss identity not refreshed");
                        Ok(id)
                    }
                    None => Err(GatewayError::new(
                        ErrorCode::Unavailable,
                        "the Fluss identity of this caller cannot be loaded right now",
                    )
                    .with_detail(format!("identity secret `{secret_id}`: {problem}"))),
                }
            }
        }
    }
}

/// `{"username": "...", "password": "..."}` → a SASL identity (problems never show values).
fn parse_sasl(text: &str) -> Result<Identity, String> {
    #[derive(serde::Deserialize)]
    struct Sasl {
        username: String,
        password: String,
    }
    let s: Sasl = serde_json::from_str(text)
        .map_err(|_| "not a JSON object with string `username` and `password`".to_owned())?;
    if s.username.is_empty() || s.password.is_empty() {
        return Err("`username` and `password` must not be empty".to_owned());
    }
    Ok(Identity::user(s.username, Secret::new(s.password)))
}
