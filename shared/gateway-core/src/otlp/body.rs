//! An OTLP/HTTP request body, decoded from binary protobuf or OTLP/JSON (the serde form of
//! opentelemetry-proto: lowerCamelCase names, hex trace and span ids, 64-bit integers as
//! strings or numbers, enums as integers, unknown fields ignored).

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde::de::DeserializeOwned;

use super::Signal;
use super::answer::Encoding;
use crate::error::GatewayError;

/// One export request of any signal.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportBody {
    /// `POST …/v1/logs`.
    Logs(ExportLogsServiceRequest),
    /// `POST …/v1/traces`.
    Traces(ExportTraceServiceRequest),
    /// `POST …/v1/metrics`.
    Metrics(ExportMetricsServiceRequest),
}

impl ExportBody {
    /// Decodes `body` (already decompressed) as `signal`'s request in `encoding`; a body that is
    /// not one is 400 naming the message and what the decoder found (protobuf's invalid UTF-8
    /// in a string field among them).
    pub fn decode(signal: Signal, encoding: Encoding, body: &[u8]) -> Result<Self, GatewayError> {
        Ok(match signal {
            Signal::Logs => ExportBody::Logs(decode(encoding, body, "ExportLogsServiceRequest")?),
            Signal::Traces => {
                ExportBody::Traces(decode(encoding, body, "ExportTraceServiceRequest")?)
            }
            Signal::Metrics => {
                ExportBody::Metrics(decode(encoding, body, "ExportMetricsServiceRequest")?)
            }
        })
    }

    /// The request as `encoding` encodes it (tests and benchmarks send both forms of one
    /// request).
    pub fn encode(&self, encoding: Encoding) -> Vec<u8> {
        fn enc<M: Message + serde::Serialize>(m: &M, encoding: Encoding) -> Vec<u8> {
            match encoding {
                Encoding::Protobuf => m.encode_to_vec(),
                // Serialising plain data into a Vec cannot fail.
                Encoding::Json => serde_json::to_vec(m).unwrap_or_default(),
            }
        }
        match self {
            ExportBody::Logs(m) => enc(m, encoding),
            ExportBody::Traces(m) => enc(m, encoding),
            ExportBody::Metrics(m) => enc(m, encoding),
        }
    }
}

fn decode<M: Message + Default + DeserializeOwned>(
    encoding: Encoding,
    body: &[u8],
    message: &str,
) -> Result<M, GatewayError> {
    match encoding {
        Encoding::Protobuf => M::decode(body).map_err(|e| {
            GatewayError::invalid(format!(
                "the body is not a protobuf {message}: {}",
                e.to_string()
                    .trim_start_matches("failed to decode Protobuf message: ")
            ))
        }),
        Encoding::Json => serde_json::from_slice(body).map_err(|e| {
            GatewayError::invalid(format!("the body is not an OTLP/JSON {message}: {e}"))
        }),
    }
}
