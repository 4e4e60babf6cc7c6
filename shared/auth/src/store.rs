//! The key store: the secret document read from a [`SecretSource`], cached for a TTL (the
//! revocation latency), refreshed early — at most once per refresh interval — when an unknown
//! key id is presented (so a new key works within seconds without a restart), and the SASL
//! credentials of per-caller Fluss identities, cached the same way.
//!
//! When the source cannot be read, the last document keeps serving (availability first; a
//! revoked key then stays valid until the source answers again) and the failure is logged;
//! with no document at all, requests get 503.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordVerifier};
use fluss_pool::{Identity, Secret};
use gateway_core::names::shown;
use gateway_core::{ErrorCode, GatewayError};
use sha2::{Digest, Sha256};

use crate::document::{Directory, IdentityRef};
use crate::key;
use crate::scope::Scope;
use crate::source::{SecretSource, SourceError};

/// What an authenticated credential grants: who, what, and as which Fluss principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The caller's stable id.
    pub principal: String,
    /// The key id when the caller used an API key.
    pub key_id: Option<String>,
    /// What the caller may do.
    pub scopes: Vec<Scope>,
    /// The Fluss principal the caller acts as.
    pub identity: IdentityRef,
}

/// How the store reads and caches.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// Secrets Manager id (name or ARN) of the key document.
    pub secret_id: String,
    /// How long a read document (and a SASL identity) is used before it is read again.
    pub ttl: Duration,
    /// The least time between two reads forced by an unknown key id.
    pub refresh_interval: Duration,
}

struct Loaded {
    dir: Arc<Directory>,
    at: Instant,
}

/// Cap on remembered password verifications: each is 32 bytes and an instant.
const MAX_VERIFIED: usize = 4096;

/// The cached key document and identities; shared by every request of a container.
pub struct KeyStore {
    source: Arc<dyn SecretSource>,
    settings: StoreSettings,
    current: RwLock<Option<Loaded>>,
    last_attempt: tokio::sync::Mutex<Option<Instant>>,
    identities: Mutex<HashMap<String, (Identity, Instant)>>,
    verified: Mutex<HashMap<[u8; 32], Instant>>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("secret_id", &self.settings.secret_id)
            .field("ttl", &self.settings.ttl)
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
            source,
            settings,
            current: RwLock::new(None),
            last_attempt: tokio::sync::Mutex::new(None),
            identities: Mutex::new(HashMap::new()),
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// Reads the document now (start-up warm-up); an error is returned, not kept.
    pub async fn preload(&self) -> Result<(usize, usize), GatewayError> {
        self.refresh(Instant::now()).await.map(|d| d.len())
    }

    fn snapshot(&self) -> Option<(Arc<Directory>, Instant)> {
        let guard = self.current.read().ok()?;
        guard.as_ref().map(|l| (l.dir.clone(), l.at))
    }

    async fn directory(&self) -> Result<Arc<Directory>, GatewayError> {
        match self.snapshot() {
            Some((dir, at)) if at.elapsed() < self.settings.ttl => Ok(dir),
            _ => self.refresh(Instant::now()).await,
        }
    }

    /// Reads the document unless another request did since `asked`, or one was attempted
    /// less than the refresh interval ago (which bounds the reads both unknown key ids and a
    /// failing source can cause; the interval never exceeds the TTL, so a stale document is
    /// always read again).
    async fn refresh(&self, asked: Instant) -> Result<Arc<Directory>, GatewayError> {
        let mut last = self.last_attempt.lock().await;
        let existing = self.snapshot();
        if let Some((dir, at)) = &existing
            && (*at >= asked
                || last.is_some_and(|tried| tried.elapsed() < self.settings.refresh_interval))
        {
            return Ok(dir.clone());
        }
        *last = Some(Instant::now());
        let read = match self.source.fetch(&self.settings.secret_id).await {
            Ok(text) => Directory::parse(&text),
            Err(SourceError::NotFound) => Err(format!(
                "secret `{}` does not exist",
                self.settings.secret_id
            )),
            Err(SourceError::Unavailable(why)) => Err(why),
        };
        match read {
            Ok(dir) => {
                let dir = Arc::new(dir);
                if let Ok(mut guard) = self.current.write() {
                    *guard = Some(Loaded {
                        dir: dir.clone(),
                        at: Instant::now(),
                    });
                }
                let (keys, users) = dir.len();
                tracing::info!(keys, users, secret_id = %self.settings.secret_id, "key document loaded");
                Ok(dir)
            }
            Err(problem) => {
                tracing::warn!(secret_id = %self.settings.secret_id, problem = %problem, "key document not loaded");
                match existing {
                    Some((dir, _)) => Ok(dir),
                    None => Err(GatewayError::new(
                        ErrorCode::Unavailable,
                        "credentials cannot be checked right now; retry shortly",
                    )
                    .with_detail(problem)),
                }
            }
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
            dir = self.refresh(asked).await?;
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
            .verified
            .lock()
            .ok()
            .and_then(|m| m.get(&token).copied())
            .is_some_and(|at| at.elapsed() < self.settings.ttl);
        if !remembered {
            let ok = PasswordHash::new(&user.password_hash).is_ok_and(|parsed| {
                argon2::Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            });
            if !ok {
                return Err(refused(INVALID_USER, format!("user {who}: wrong password")));
            }
            if let Ok(mut m) = self.verified.lock() {
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
            .identities
            .lock()
            .ok()
            .and_then(|m| m.get(secret_id).cloned());
        if let Some((id, at)) = &cached
            && at.elapsed() < self.settings.ttl
        {
            return Ok(id.clone());
        }
        let read = match self.source.fetch(secret_id).await {
            Ok(text) => parse_sasl(&text),
            Err(SourceError::NotFound) => Err(format!("secret `{secret_id}` does not exist")),
            Err(SourceError::Unavailable(why)) => Err(why),
        };
        match (read, cached) {
            (Ok(id), _) => {
                if let Ok(mut m) = self.identities.lock() {
                    m.insert(secret_id.clone(), (id.clone(), Instant::now()));
                }
                Ok(id)
            }
            (Err(problem), Some((id, _))) => {
                tracing::warn!(secret_id = %secret_id, problem = %problem, "Fluss identity not refreshed");
                Ok(id)
            }
            (Err(problem), None) => Err(GatewayError::new(
                ErrorCode::Unavailable,
                "the Fluss identity of this caller cannot be loaded right now",
            )
            .with_detail(format!("identity secret `{secret_id}`: {problem}"))),
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

/// An argon2id PHC hash of `password` with a fresh salt, for the users of the document.
pub fn hash_password(password: &str) -> Result<String, String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no randomness: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}
