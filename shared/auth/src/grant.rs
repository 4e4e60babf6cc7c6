//! What an authenticated credential grants, and the scalar form of it an API Gateway Lambda
//! authorizer hands to the route functions.

use std::collections::{BTreeMap, HashMap};

use crate::document::IdentityRef;
use crate::scope::Scope;

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

/// Context keys the authorizer returns and route functions read (API Gateway passes them as
/// `requestContext.authorizer.lambda`).
pub mod context_keys {
    /// The principal id.
    pub const PRINCIPAL: &str = "principal";
    /// The key id (empty for users).
    pub const KEY_ID: &str = "key_id";
    /// The scopes, as a JSON array string (context values must be scalars).
    pub const SCOPES: &str = "scopes";
    /// `service` or `sasl:<secret id>` (the id of the secret, never its value).
    pub const IDENTITY: &str = "identity";
}

impl Grant {
    /// The authorizer context of this grant: scalars only, no secret.
    pub fn to_context(&self) -> BTreeMap<String, serde_json::Value> {
        let scopes = serde_json::to_string(&self.scopes).unwrap_or_else(|_| "[]".to_owned());
        BTreeMap::from([
            (
                context_keys::PRINCIPAL.to_owned(),
                self.principal.clone().into(),
            ),
            (
                context_keys::KEY_ID.to_owned(),
                self.key_id.clone().unwrap_or_default().into(),
            ),
            (context_keys::SCOPES.to_owned(), scopes.into()),
            (
                context_keys::IDENTITY.to_owned(),
                self.identity.label().into(),
            ),
        ])
    }

    /// The grant an authorizer put in `context`, or why it cannot be read (a deployment
    /// mistake: the route is not behind our authorizer).
    pub fn from_context(context: &HashMap<String, serde_json::Value>) -> Result<Self, String> {
        let text = |k: &str| context.get(k).and_then(|v| v.as_str());
        let principal = text(context_keys::PRINCIPAL)
            .filter(|p| !p.is_empty())
            .ok_or("no `principal` in the authorizer context")?;
        let scopes: Vec<Scope> = text(context_keys::SCOPES)
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or("no readable `scopes` in the authorizer context")?;
        let identity = text(context_keys::IDENTITY)
            .and_then(IdentityRef::from_label)
            .ok_or("no readable `identity` in the authorizer context")?;
        Ok(Grant {
            principal: principal.to_owned(),
            key_id: text(context_keys::KEY_ID)
                .filter(|k| !k.is_empty())
                .map(str::to_owned),
            scopes,
            identity,
        })
    }
}
