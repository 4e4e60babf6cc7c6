//! The call context every operation takes: set once by the entry point (HTTP middleware, an
//! event handler), read everywhere below it.

use fluss_pool::{Deadline, Identity};

/// Who is calling. Anonymous until an authentication layer decides otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// No credentials were presented (authentication mode `trust`).
    Anonymous,
    /// An authenticated caller, by its stable id (an API key's principal, a user name).
    Named(String),
}

impl Principal {
    /// The id logs and metrics may show (never a secret): `anonymous` or the principal's id.
    pub fn id(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::Named(id) => id,
        }
    }
}

/// One call's context: its request id (for logs), its principal, the Fluss identity that
/// principal acts as, and the deadline bounding every Fluss call made for it.
#[derive(Debug, Clone)]
pub struct Call {
    /// Id of the request (or event record) this call serves, for log lines.
    pub request_id: String,
    /// Who is calling.
    pub principal: Principal,
    /// The Fluss principal the call acts as; with the cluster it picks the pooled connection.
    pub identity: Identity,
    /// Every Fluss call of this call ends by then.
    pub deadline: Deadline,
}

impl Call {
    /// An anonymous call acting as the service identity, bounded by `deadline`.
    pub fn service(request_id: impl Into<String>, deadline: Deadline) -> Self {
        Call {
            request_id: request_id.into(),
            principal: Principal::Anonymous,
            identity: Identity::Service,
            deadline,
        }
    }
}
