//! The answers of the OTLP/HTTP specification, in the request's encoding: a 200 carries the
//! signal's `Export…ServiceResponse`, with `partial_success` only when some records were not
//! written; every 4xx and 5xx carries a `google.rpc.Status`.

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message;
use serde_json::json;

use super::Signal;
use crate::error::GatewayError;

/// The two OTLP/HTTP encodings; an answer uses the request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json` (OTLP/JSON).
    Json,
}

impl Encoding {
    /// The encoding a `Content-Type` names (parameters ignored, case-insensitive); anything
    /// else is 415 naming the two accepted types.
    pub fn from_content_type(content_type: Option<&str>) -> Result<Self, GatewayError> {
        let essence = content_type
            .and_then(|ct| ct.split(';').next())
            .map(|ct| ct.trim().to_ascii_lowercase());
        match essence.as_deref() {
            Some("application/x-protobuf") => Ok(Encoding::Protobuf),
            Some("application/json") => Ok(Encoding::Json),
            other => Err(GatewayError::new(
                crate::ErrorCode::UnsupportedMediaType,
                format!(
                    "an OTLP/HTTP body is application/x-protobuf or application/json, not {}",
                    other.map_or_else(
                        || "a body without Content-Type".to_owned(),
                        |t| format!("`{t}`")
                    )
                ),
            )),
        }
    }

    /// The `Content-Type` of answers in this encoding.
    pub const fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// The outcome of one export: how many of its records were not written, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportAnswer {
    /// The signal exported.
    pub signal: Signal,
    /// Records (log records, spans, data points) not written; 0 means all were.
    pub rejected: u64,
    /// Why, when some were not (empty otherwise).
    pub message: String,
}

impl ExportAnswer {
    /// The `Export…ServiceResponse` body in `encoding`.
    pub fn body(&self, encoding: Encoding) -> Vec<u8> {
        let rejected = i64::try_from(self.rejected).unwrap_or(i64::MAX);
        let partial = self.rejected > 0 || !self.message.is_empty();
        match encoding {
            Encoding::Json => {
                if !partial {
                    return b"{}".to_vec();
                }
                let field = match self.signal {
                    Signal::Logs => "rejectedLogRecords",
                    Signal::Traces => "rejectedSpans",
                    Signal::Metrics => "rejectedDataPoints",
                };
                // int64 as a string: the protobuf JSON mapping.
                json!({"partialSuccess": {field: rejected.to_string(), "errorMessage": self.message}})
                    .to_string()
                    .into_bytes()
            }
            Encoding::Protobuf => {
                let error_message = self.message.clone();
                match self.signal {
                    Signal::Logs => ExportLogsServiceResponse {
                        partial_success: partial.then_some(ExportLogsPartialSuccess {
                            rejected_log_records: rejected,
                            error_message,
                        }),
                    }
                    .encode_to_vec(),
                    Signal::Traces => ExportTraceServiceResponse {
                        partial_success: partial.then_some(ExportTracePartialSuccess {
                            rejected_spans: rejected,
                            error_message,
                        }),
                    }
                    .encode_to_vec(),
                    Signal::Metrics => ExportMetricsServiceResponse {
                        partial_success: partial.then_some(ExportMetricsPartialSuccess {
                            rejected_data_points: rejected,
                            error_message,
                        }),
                    }
                    .encode_to_vec(),
                }
            }
        }
    }
}

/// `google.rpc.Status`: the body of every OTLP/HTTP error answer.
#[derive(Clone, PartialEq, Message)]
struct Status {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// The `google.rpc.Status` body of an error answered with HTTP `status`, in `encoding`; its
/// code is the gRPC code the OTLP specification pairs with that status.
pub fn status_body(status: u16, message: &str, encoding: Encoding) -> Vec<u8> {
    let code = match status {
        400 | 413 | 415 => 3, // INVALID_ARGUMENT
        401 => 16,            // UNAUTHENTICATED
        403 => 7,             // PERMISSION_DENIED
        404 => 5,             // NOT_FOUND
        405 | 406 => 12,      // UNIMPLEMENTED
        409 => 6,             // ALREADY_EXISTS
        429 => 8,             // RESOURCE_EXHAUSTED
        503 => 14,            // UNAVAILABLE
        504 => 4,             // DEADLINE_EXCEEDED
        _ => 13,              // INTERNAL
    };
    match encoding {
        Encoding::Protobuf => Status {
            code,
            message: message.to_owned(),
        }
        .encode_to_vec(),
        Encoding::Json => json!({"code": code, "message": message})
            .to_string()
            .into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_name_the_encoding_or_are_refused() {
        assert_eq!(
            Encoding::from_content_type(Some("Application/X-Protobuf; charset=x")).ok(),
            Some(Encoding::Protobuf)
        );
        assert_eq!(
            Encoding::from_content_type(Some("application/json")).ok(),
            Some(Encoding::Json)
        );
        let refused = Encoding::from_content_type(Some("text/plain")).err();
        assert_eq!(refused.map(|e| e.http_status()), Some(415));
    }

    #[test]
    fn answers_carry_partial_success_only_when_records_were_rejected() {
        let ok = ExportAnswer {
            signal: Signal::Logs,
            rejected: 0,
            message: String::new(),
        };
        assert_eq!(ok.body(Encoding::Json), b"{}");
        assert!(ok.body(Encoding::Protobuf).is_empty());
        let partial = ExportAnswer {
            signal: Signal::Metrics,
            rejected: 2,
            message: "2 data points timed out".into(),
        };
        assert_eq!(
            String::from_utf8(partial.body(Encoding::Json))
                .ok()
                .as_deref(),
            Some(
                r#"{"partialSuccess":{"rejectedDataPoints":"2","errorMessage":"2 data points timed out"}}"#
            )
        );
        let decoded = ExportMetricsServiceResponse::decode(&*partial.body(Encoding::Protobuf))
            .ok()
            .and_then(|r| r.partial_success);
        assert_eq!(decoded.map(|p| p.rejected_data_points), Some(2));
        let status = Status::decode(&*status_body(400, "bad", Encoding::Protobuf)).ok();
        assert_eq!(
            status.map(|s| (s.code, s.message)),
            Some((3, "bad".to_owned()))
        );
    }
}
