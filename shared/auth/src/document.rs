//! The secret document: every API key (hashed) and user (argon2id-hashed password) with its
//! principal, scopes, expiry, disabled flag and Fluss identity, kept as one JSON secret in
//! Secrets Manager. [`Directory`] is its checked, indexed form.

use std::collections::HashMap;

use gateway_core::names::shown;
use serde::{Deserialize, Serialize};

use crate::key;
use crate::password::hash_password;
use crate::scope::Scope;

/// The Fluss principal a key or user acts as.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum IdentityRef {
    /// The cluster's service account.
    #[default]
    Service,
    /// Its own SASL user, whose `{"username", "password"}` is the secret `secret_id` (a name or
    /// ARN; the secret itself never appears in this document).
    Sasl {
        /// Secrets Manager id of the SASL credentials.
        secret_id: String,
    },
}

impl IdentityRef {
    /// What logs and the authorizer context may show: `service` or `sasl:<secret id>`.
    pub fn label(&self) -> String {
        match self {
            IdentityRef::Service => "service".to_owned(),
            IdentityRef::Sasl { secret_id } => format!("sasl:{secret_id}"),
        }
    }

    /// The inverse of [`IdentityRef::label`].
    pub fn from_label(label: &str) -> Option<Self> {
        match label {
            "service" => Some(IdentityRef::Service),
            _ => label
                .strip_prefix("sasl:")
                .filter(|id| !id.is_empty())
                .map(|id| IdentityRef::Sasl {
                    secret_id: id.to_owned(),
                }),
        }
    }
}

/// One API key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRecord {
    /// The id part of the key (`flgw_<key id>_…`); safe to log.
    pub key_id: String,
    /// `sha256:<hex>` of the whole key.
    pub hash: String,
    /// The stable id of the caller; several keys of one principal may be valid at once.
    pub principal: String,
    /// What the key may do.
    pub scopes: Vec<Scope>,
    /// RFC 3339 instant after which the key is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// A disabled (revoked) key is refused.
    #[serde(default)]
    pub disabled: bool,
    /// The Fluss principal the key acts as.
    #[serde(default)]
    pub identity: IdentityRef,
    /// RFC 3339 instant the key was created (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// One user of HTTP Basic authentication (`password` mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRecord {
    /// The user name, which is also the principal.
    pub name: String,
    /// PHC string of an argon2id hash (`$argon2id$v=19$…`).
    pub password_hash: String,
    /// What the user may do.
    pub scopes: Vec<Scope>,
    /// A disabled user is refused.
    #[serde(default)]
    pub disabled: bool,
    /// The Fluss principal the user acts as.
    #[serde(default)]
    pub identity: IdentityRef,
}

/// The whole secret document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Format version; `1`.
    #[serde(default = "one")]
    pub version: u32,
    /// API keys.
    #[serde(default)]
    pub keys: Vec<KeyRecord>,
    /// Basic-auth users.
    #[serde(default)]
    pub users: Vec<UserRecord>,
}

fn one() -> u32 {
    1
}

impl Default for Document {
    fn default() -> Self {
        Document {
            version: 1,
            keys: Vec::new(),
            users: Vec::new(),
        }
    }
}

/// A checked document, indexed for lookups.
#[derive(Debug, Default)]
pub struct Directory {
    keys: HashMap<String, KeyRecord>,
    users: HashMap<String, UserRecord>,
    expiry: HashMap<String, jiff::Timestamp>,
}

impl Directory {
    /// Checks and indexes `text`. Problems name the entry (key id or user name), never a hash.
    pub fn parse(text: &str) -> Result<Self, String> {
        let doc: Document = serde_json::from_str(text).map_err(|e| {
            // serde_json's message names the field and position, not the value.
            format!("the key document is not valid: {e}")
        })?;
        Directory::from_document(doc)
    }

    /// Checks and indexes `doc`.
    pub fn from_document(doc: Document) -> Result<Self, String> {
        if doc.version != 1 {
            return Err(format!(
                "the key document has version {}; this gateway reads version 1",
                doc.version
            ));
        }
        let mut dir = Directory::default();
        for k in doc.keys {
            let id = shown(&k.key_id);
            if !key::is_key_id(&k.key_id) {
                return Err(format!("key {id}: not a key id (12 of a-z, 0-9)"));
            }
            if !k.hash.starts_with(key::HASH_SCHEME) {
                return Err(format!("key {id}: hash must start with `sha256:`"));
            }
            check_common(&format!("key {id}"), &k.principal, &k.scopes, &k.identity)?;
            if let Some(at) = &k.expires_at {
                let t: jiff::Timestamp = at
                    .parse()
                    .map_err(|_| format!("key {id}: `expires_at` is not an RFC 3339 instant"))?;
                dir.expiry.insert(k.key_id.clone(), t);
            }
            if dir.keys.contains_key(&k.key_id) {
                return Err(format!("key {id} is listed twice"));
            }
            dir.keys.insert(k.key_id.clone(), k);
        }
        for u in doc.users {
            let name = shown(&u.name);
            if !u.password_hash.starts_with("$argon2") {
                return Err(format!(
                    "user {name}: password_hash must be an argon2 PHC string"
                ));
            }
            check_common(&format!("user {name}"), &u.name, &u.scopes, &u.identity)?;
            if dir.users.contains_key(&u.name) {
                return Err(format!("user {name} is listed twice"));
            }
            dir.users.insert(u.name.clone(), u);
        }
        Ok(dir)
    }

    /// The key with this id.
    pub fn key(&self, key_id: &str) -> Option<&KeyRecord> {
        self.keys.get(key_id)
    }

    /// When the key with this id expires, if it does.
    pub fn expires(&self, key_id: &str) -> Option<jiff::Timestamp> {
        self.expiry.get(key_id).copied()
    }

    /// The user with this name.
    pub fn user(&self, name: &str) -> Option<&UserRecord> {
        self.users.get(name)
    }

    /// How many keys and users the document holds.
    pub fn len(&self) -> (usize, usize) {
        (self.keys.len(), self.users.len())
    }
}

fn check_common(
    what: &str,
    principal: &str,
    scopes: &[Scope],
    identity: &IdentityRef,
) -> Result<(), String> {
    let principal_ok = !principal.is_empty()
        && principal.len() <= 128
        && principal
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.@".contains(c));
    if !principal_ok {
        return Err(format!(
            "{what}: principal must be 1-128 characters of A-Z, a-z, 0-9, `_-.@`"
        ));
    }
    for s in scopes {
        if let Some(p) = s.problem() {
            return Err(format!("{what}: {p}"));
        }
    }
    if let IdentityRef::Sasl { secret_id } = identity
        && secret_id.trim().is_empty()
    {
        return Err(format!("{what}: a SASL identity needs its `secret_id`"));
    }
    Ok(())
}

/// Edits of the document, as the key tool makes them. Each keeps every other entry as it is.
impl Document {
    /// Adds a new key for `principal`; answers the whole key (to be shown once) and its id.
    pub fn add_key(
        &mut self,
        principal: &str,
        scopes: Vec<Scope>,
        identity: IdentityRef,
        expires_at: Option<String>,
    ) -> Result<(String, String), String> {
        let (key_id, whole, hash) = loop {
            let made = key::generate()?;
            if !self.keys.iter().any(|k| k.key_id == made.0) {
                break made;
            }
        };
        let record = KeyRecord {
            key_id: key_id.clone(),
            hash,
            principal: principal.to_owned(),
            scopes,
            expires_at,
            disabled: false,
            identity,
            created_at: Some(jiff::Timestamp::now().to_string()),
        };
        self.keys.push(record);
        // Check the whole document as the gateway will read it.
        Directory::from_document(self.clone())?;
        Ok((key_id, whole))
    }

    /// A new key with the principal, scopes, identity and expiry of `key_id`; the old key stays
    /// valid until it is revoked (so callers can switch over).
    pub fn rotate_key(&mut self, key_id: &str) -> Result<(String, String), String> {
        let old = self
            .keys
            .iter()
            .find(|k| k.key_id == key_id)
            .cloned()
            .ok_or_else(|| format!("no key {}", shown(key_id)))?;
        self.add_key(&old.principal, old.scopes, old.identity, old.expires_at)
    }

    /// Disables `key_id` (kept for the record) or, with `delete`, removes it.
    pub fn revoke_key(&mut self, key_id: &str, delete: bool) -> Result<(), String> {
        let Some(at) = self.keys.iter().position(|k| k.key_id == key_id) else {
            return Err(format!("no key {}", shown(key_id)));
        };
        if delete {
            self.keys.remove(at);
        } else {
            self.keys[at].disabled = true;
        }
        Ok(())
    }

    /// Adds or replaces the user `name` with an argon2id hash of `password`.
    pub fn set_user(
        &mut self,
        name: &str,
        password: &str,
        scopes: Vec<Scope>,
        identity: IdentityRef,
    ) -> Result<(), String> {
        if password.chars().count() < 12 {
            return Err("a password needs at least 12 characters".to_owned());
        }
        let record = UserRecord {
            name: name.to_owned(),
            password_hash: hash_password(password)?,
            scopes,
            disabled: false,
            identity,
        };
        self.users.retain(|u| u.name != name);
        self.users.push(record);
        Directory::from_document(self.clone())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_round_trips_and_is_indexed() {
        let text = r#"{"version":1,"keys":[{"key_id":"abcdefghijkl","hash":"sha256:00",
            "principal":"alice","scopes":[{"database":"demo","operations":["write"]}],
            "expires_at":"2030-01-01T00:00:00Z",
            "identity":{"sasl":{"secret_id":"fluss/alice"}}}],
            "users":[{"name":"bob","password_hash":"$argon2id$x","scopes":[]}]}"#;
        let dir = Directory::parse(text).unwrap();
        let k = dir.key("abcdefghijkl").unwrap();
        assert_eq!(k.principal, "alice");
        assert_eq!(k.scopes[0].cluster, "*");
        assert_eq!(k.identity.label(), "sasl:fluss/alice");
        assert_eq!(
            IdentityRef::from_label("sasl:fluss/alice"),
            Some(k.identity.clone())
        );
        assert!(dir.expires("abcdefghijkl").is_some());
        assert_eq!(dir.user("bob").unwrap().identity, IdentityRef::Service);
        assert_eq!(dir.len(), (1, 1));
    }

    #[test]
    fn problems_name_the_entry_not_the_hash() {
        for (doc, needle) in [
            (
                r#"{"keys":[{"key_id":"X","hash":"sha256:1","principal":"a","scopes":[]}]}"#,
                "key `X`",
            ),
            (
                r#"{"keys":[{"key_id":"abcdefghijkl","hash":"plain-s3cret","principal":"a","scopes":[]}]}"#,
                "sha256",
            ),
            (r#"{"version":2}"#, "version 2"),
            (r#"{"keyz":[]}"#, "unknown field"),
            (
                r#"{"users":[{"name":"u","password_hash":"$argon2id$","scopes":[{"operations":["root"]}]}]}"#,
                "user `u`: operation `root`",
            ),
            (
                r#"{"keys":[{"key_id":"abcdefghijkl","hash":"sha256:1","principal":"a","scopes":[],"expires_at":"soon"}]}"#,
                "expires_at",
            ),
        ] {
            let e = Directory::parse(doc).unwrap_err();
            assert!(e.contains(needle), "{doc}: {e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }
}
