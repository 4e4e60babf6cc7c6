//! Why a function stopped serving.

/// Why serving stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The listen address could not be parsed or bound, or the app cannot serve here.
    Listen(String),
    /// The Lambda runtime or the HTTP server failed while serving.
    Serving(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Listen(m) => write!(f, "cannot listen: {m}"),
            ServeError::Serving(m) => write!(f, "serving failed: {m}"),
        }
    }
}

impl std::error::Error for ServeError {}
