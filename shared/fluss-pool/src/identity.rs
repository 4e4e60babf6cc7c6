//! Who the gateway is when it talks to Fluss, and how credentials stay out of every output.
//!
//! An [`Identity`] is part of the pool key from day one: today every request uses the cluster's
//! service account ([`Identity::Service`]); with per-caller SASL users (identity mode `user`)
//! each caller gets its own connection, because a Fluss connection authenticates once.
//! This module never prints a password: [`Secret`] renders as `******` everywhere.

use std::fmt;
use std::hash::{Hash, Hasher};

/// What a secret prints as in `Debug`, `Display`, logs and config echoes.
pub use gateway_core::redact::REDACTED;

/// A credential. Its only way out is [`Secret::expose`], called where the Fluss client
/// configuration is built; `Debug` and `Display` print [`REDACTED`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The clear text, for the Fluss client configuration only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is the empty string (treated as "not set").
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Hash for Secret {
    // Hashing lets a per-user identity (password included) key the pool, so a rotated password
    // gets a new connection; the hash never leaves the process.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// SASL/PLAIN credentials of one Fluss principal.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SaslCredentials {
    username: String,
    password: Secret,
}

impl SaslCredentials {
    /// Credentials of `username`.
    pub fn new(username: impl Into<String>, password: Secret) -> Self {
        SaslCredentials {
            username: username.into(),
            password,
        }
    }

    /// The SASL user name (safe to log).
    pub fn username(&self) -> &str {
        &self.username
    }

    /// The password (redacted when printed).
    pub fn password(&self) -> &Secret {
        &self.password
    }
}

impl fmt::Debug for SaslCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslCredentials")
            .field("username", &self.username)
            .field("password", &self.password)
            .finish()
    }
}

/// The Fluss principal a request acts as; with the cluster id it keys the pool.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Identity {
    /// The cluster's configured service account (`connection.service.*`), or the anonymous
    /// principal of a plaintext listener. Every caller shares this connection.
    Service,
    /// A caller's own SASL user (identity mode `user`, resolved by the auth layer).
    User(SaslCredentials),
}

impl Identity {
    /// The service identity.
    pub fn service() -> Self {
        Identity::Service
    }

    /// A per-caller SASL identity.
    pub fn user(username: impl Into<String>, password: Secret) -> Self {
        Identity::User(SaslCredentials::new(username, password))
    }

    /// Bounded label for metrics and logs: `service` or `user` (never the user name, which is
    /// unbounded and may be personal data).
    pub fn kind(&self) -> &'static str {
        match self {
            Identity::Service => "service",
            Identity::User(_) => "user",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{s:?}"), REDACTED);
        let id = Identity::user("alice", Secret::new("hunter2"));
        let shown = format!("{id:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("alice"), "{shown}");
    }

    #[test]
    fn a_rotated_password_is_a_different_identity() {
        let a = Identity::user("alice", Secret::new("one"));
        let b = Identity::user("alice", Secret::new("two"));
        assert_ne!(a, b);
        assert_eq!(a.kind(), "user");
        assert_eq!(Identity::service().kind(), "service");
    }
}
