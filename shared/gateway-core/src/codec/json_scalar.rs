//! A JSON scalar as the value rules see it ([`Scalar`]), whichever path read it, and the refusal
//! of a scalar of the wrong kind. A leaf below the decoder and the temporal rules, which both
//! read scalars.

use serde_json::Value;

use super::value_error::{VResult, ValueError, expected_kind};
use crate::wire::json_kind;

/// A JSON scalar as the value rules see it: borrowed from a parsed [`Value`], or handed over by
/// the parser itself (the streaming decoder, `stream`), so both paths apply one set of rules.
#[derive(Debug, Clone)]
pub(super) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    Str(&'a str),
    /// An array or an object where a scalar was expected: only its kind word matters.
    Composite(&'static str),
}

impl<'a> Scalar<'a> {
    pub(super) fn of(v: &'a Value) -> Self {
        match v {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Number(n) => Scalar::Number(n.clone()),
            Value::String(s) => Scalar::Str(s),
            other => Scalar::Composite(json_kind(other)),
        }
    }

    /// The kind word of messages ("a string"), as [`json_kind`] says it.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Scalar::Null => "null",
            Scalar::Bool(_) => "a boolean",
            Scalar::Number(_) => "a number",
            Scalar::Str(_) => "a string",
            Scalar::Composite(kind) => kind,
        }
    }
}

pub(super) fn expected_scalar(what: &str, got: &Scalar<'_>) -> ValueError {
    expected_kind(what, got.kind())
}

pub(super) fn string<'a>(v: &Scalar<'a>) -> VResult<&'a str> {
    match v {
        Scalar::Str(s) => Ok(s),
        _ => Err(expected_scalar("a string", v)),
    }
}
