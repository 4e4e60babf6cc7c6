//! A value refused by the value rules, on its way up ([`ValueError`]): the message and the path
//! below the column, named with its row and column once it reaches the column
//! ([`ValueError::into_gateway`]). A leaf below the decoder and the temporal rules, which both
//! refuse values with it.

use serde_json::Value;

use super::row_ref::RowRef;
use crate::error::GatewayError;
use crate::wire::json_kind;

/// A value error on its way up: the message, and the path below the column (innermost last).
pub(super) struct ValueError {
    path: Vec<PathSeg>,
    // `pub(super)` for the decoder's tests, which show it when a value is refused unexpectedly.
    pub(super) message: String,
}

pub(super) enum PathSeg {
    Index(usize),
    Field(String),
    Key(String),
}

impl ValueError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        ValueError {
            path: Vec::new(),
            message: message.into(),
        }
    }

    pub(super) fn at(mut self, seg: PathSeg) -> Self {
        self.path.push(seg);
        self
    }

    pub(super) fn into_gateway(self, row: RowRef<'_>, column: &str) -> GatewayError {
        let mut path = column.to_owned();
        for seg in self.path.iter().rev() {
            match seg {
                PathSeg::Index(i) => path.push_str(&format!("[{i}]")),
                PathSeg::Field(f) => {
                    path.push('.');
                    path.push_str(f);
                }
                PathSeg::Key(k) => path.push_str(&format!("[{k:?}]")),
            }
        }
        GatewayError::invalid(format!("{row}: column `{path}` {}", self.message))
    }
}

pub(super) type VResult<T> = Result<T, ValueError>;

pub(super) fn expected(what: &str, got: &Value) -> ValueError {
    expected_kind(what, json_kind(got))
}

pub(super) fn expected_kind(what: &str, kind: &str) -> ValueError {
    ValueError::new(format!("expects {what}, got {kind}"))
}

pub(super) fn clip(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() > MAX {
        format!("{}…", s.chars().take(MAX).collect::<String>())
    } else {
        s.to_owned()
    }
}
