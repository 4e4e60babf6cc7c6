//! Cheap request checks that run before any Fluss work: content type, `Accept`, query string.
//! Each `ensure_*` returns the gateway error the caller would get, never an HTTP type.

use axum::http::{HeaderMap, Uri, header};
use gateway_core::{ErrorCode, GatewayError};

/// 415 `unsupported_media_type` unless the body is declared `application/json` or
/// `application/*+json` (parameters such as `charset` are ignored).
pub fn ensure_json_content_type(headers: &HeaderMap) -> Result<(), GatewayError> {
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if is_json_media_type(declared) {
        Ok(())
    } else {
        Err(GatewayError::new(
            ErrorCode::UnsupportedMediaType,
            "Content-Type must be application/json or application/*+json",
        ))
    }
}

/// The JSON media type, the answer of every route.
pub const JSON: &str = "application/json";
/// The Arrow IPC stream media type: an answer of the read routes, a body of the write route.
pub use gateway_core::codec::arrow::ARROW_STREAM;

/// Whether `value` (a `Content-Type`) names an Arrow IPC stream.
pub fn is_arrow_media_type(value: &str) -> bool {
    media_type(value) == ARROW_STREAM
}

/// 406 `not_acceptable` when `Accept` is present and allows no JSON response.
pub fn ensure_accepts_json(headers: &HeaderMap) -> Result<(), GatewayError> {
    negotiate(headers, &[JSON]).map(|_| ())
}

/// The answer's media type: of `offered` (first = preferred on a tie), the one `Accept` rates
/// highest, each rated by the most specific range that matches it (`type/sub`, then `type/*`,
/// then `*/*`; `q=0` refuses). No or an empty `Accept` takes the first. 406
/// `not_acceptable`, naming what is offered, when none is acceptable.
pub fn negotiate(
    headers: &HeaderMap,
    offered: &[&'static str],
) -> Result<&'static str, GatewayError> {
    let accept = match headers.get(header::ACCEPT) {
        None => "",
        // An Accept that is not text restricts nothing we can read.
        Some(v) => v.to_str().unwrap_or(""),
    };
    if accept.trim().is_empty() {
        return Ok(offered[0]);
    }
    let ranges: Vec<(String, f32)> = accept
        .split(',')
        .map(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next_back()
                .unwrap_or(1.0);
            (media, q)
        })
        .collect();
    let rating = |media: &str| {
        let kind = media.split('/').next().unwrap_or("");
        let mut best: Option<(u8, f32)> = None;
        for (range, q) in &ranges {
            let specificity = if range == media {
                2
            } else if range.strip_suffix("/*") == Some(kind) {
                1
            } else if range == "*/*" {
                0
            } else {
                continue;
            };
            if best.is_none_or(|(s, _)| specificity > s) {
                best = Some((specificity, *q));
            }
        }
        best.map_or(0.0, |(_, q)| q)
    };
    let mut chosen: Option<(&'static str, f32)> = None;
    for media in offered {
        let q = rating(media);
        if q > 0.0 && chosen.is_none_or(|(_, best)| q > best) {
            chosen = Some((media, q));
        }
    }
    chosen.map(|(m, _)| m).ok_or_else(|| {
        let offered: Vec<String> = offered.iter().map(|m| format!("`{m}`")).collect();
        GatewayError::new(
            ErrorCode::NotAcceptable,
            format!("this operation answers {} only", offered.join(" or ")),
        )
    })
}

/// 400 `invalid_argument` when a route that takes no parameters gets a query string: a typo'd
/// parameter must not be silently ignored.
pub fn ensure_no_query(uri: &Uri) -> Result<(), GatewayError> {
    match uri.query() {
        None => Ok(()),
        Some(_) => Err(GatewayError::invalid(
            "this operation does not accept query parameters",
        )),
    }
}

/// The body could not be read: too large (413) or cut off (400).
pub(crate) fn body_error(rejection: axum::extract::rejection::BytesRejection) -> GatewayError {
    if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        GatewayError::limit("the request body is too large")
    } else {
        GatewayError::invalid(
            "the request body could not be read (or, with a `Content-Encoding`, not decoded)",
        )
    }
}

/// The parameters of a query string, each named in `allowed`, given once and with a value
/// (percent-decoded), in the order sent: a typo'd, repeated or empty parameter is a 400, never
/// silently ignored. `takes` ends the refusal of an unknown name (`listings take only …`).
pub(crate) fn query_params<'q>(
    query: Option<&'q str>,
    allowed: &[&str],
    takes: &str,
) -> Result<Vec<(&'q str, String)>, GatewayError> {
    let mut params: Vec<(&str, String)> = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let shown: String = name.chars().take(64).collect();
        if !allowed.contains(&name) {
            return Err(GatewayError::invalid(format!(
                "unsupported query parameter `{shown}`; {takes}"
            )));
        }
        if params.iter().any(|(seen, _)| *seen == name) {
            return Err(GatewayError::invalid(format!(
                "query parameter `{shown}` is repeated"
            )));
        }
        // `?max_results` alone is a mistake, not a request for the default.
        if !pair.contains('=') {
            return Err(GatewayError::invalid(format!(
                "query parameter `{shown}` has no value"
            )));
        }
        let value = percent_decode(value).ok_or_else(|| {
            GatewayError::invalid(format!("`{shown}` is not valid percent-encoded UTF-8"))
        })?;
        params.push((name, value));
    }
    Ok(params)
}

/// Decodes `application/x-www-form-urlencoded` text (`+` is a space), as query values are
/// sent; `None` when malformed or not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.bytes();
    while let Some(b) = rest.next() {
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hi = char::from(rest.next()?).to_digit(16)?;
                let lo = char::from(rest.next()?).to_digit(16)?;
                bytes.push(u8::try_from(hi * 16 + lo).ok()?);
            }
            other => bytes.push(other),
        }
    }
    String::from_utf8(bytes).ok()
}

/// Whether `value` is a newline-delimited JSON media type (`application/x-ndjson`,
/// `application/ndjson`, `application/jsonl`).
pub fn is_ndjson_media_type(value: &str) -> bool {
    let media = media_type(value);
    matches!(
        media.as_str(),
        "application/x-ndjson" | "application/ndjson" | "application/jsonl"
    )
}

/// The one coding of a request body, canonical (`gzip`, `deflate`, `zstd`; `x-gzip` and any
/// letter case accepted), or `None` for a plain body (no header, or `identity`). 415
/// `unsupported_media_type` for a coding the gateway does not decode or for more than one:
/// such a body would otherwise be read as if it were plain JSON.
pub fn supported_encoding(headers: &HeaderMap) -> Result<Option<&'static str>, GatewayError> {
    let mut codings = Vec::new();
    for value in headers.get_all(header::CONTENT_ENCODING) {
        let Ok(text) = value.to_str() else {
            return Err(unsupported_coding("with non-ASCII bytes"));
        };
        codings.extend(
            text.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty() && c != "identity"),
        );
    }
    match codings.as_slice() {
        [] => Ok(None),
        [one] => match one.as_str() {
            "gzip" | "x-gzip" => Ok(Some("gzip")),
            "deflate" => Ok(Some("deflate")),
            "zstd" => Ok(Some("zstd")),
            other => Err(unsupported_coding(&format!("`{}`", truncate(other)))),
        },
        _ => Err(unsupported_coding("with more than one coding")),
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(32) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn unsupported_coding(what: &str) -> GatewayError {
    GatewayError::new(
        ErrorCode::UnsupportedMediaType,
        format!(
            "`Content-Encoding` {what} is not supported; send the body as is, or with one of gzip, deflate, zstd"
        ),
    )
}

/// Whether `value` (a `Content-Type`) names JSON (`application/json` or `application/*+json`).
pub fn is_json_media_type(value: &str) -> bool {
    let media = media_type(value);
    media == "application/json" || (media.starts_with("application/") && media.ends_with("+json"))
}

/// The media type of a `Content-Type` value, lower-cased, without its parameters.
fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn json_content_types_pass_and_others_are_415() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/merge-patch+json",
        ] {
            assert!(
                ensure_json_content_type(&with(header::CONTENT_TYPE, ok)).is_ok(),
                "{ok}"
            );
        }
        for bad in ["text/plain", "application/jsonx", "multipart/form-data"] {
            let e = ensure_json_content_type(&with(header::CONTENT_TYPE, bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::UnsupportedMediaType, "{bad}");
        }
        assert!(ensure_json_content_type(&HeaderMap::new()).is_err());
    }

    #[test]
    fn accept_must_allow_json_when_present() {
        assert!(ensure_accepts_json(&HeaderMap::new()).is_ok());
        for ok in ["*/*", "application/json", "text/html, application/*;q=0.5"] {
            assert!(
                ensure_accepts_json(&with(header::ACCEPT, ok)).is_ok(),
                "{ok}"
            );
        }
        for bad in ["text/html", "application/json;q=0"] {
            let e = ensure_accepts_json(&with(header::ACCEPT, bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotAcceptable, "{bad}");
        }
    }

    #[test]
    fn the_answer_is_the_offered_type_accept_rates_highest() {
        let offered = [JSON, ARROW_STREAM];
        let pick = |accept: &str| negotiate(&with(header::ACCEPT, accept), &offered);
        assert_eq!(negotiate(&HeaderMap::new(), &offered).unwrap(), JSON);
        for (accept, want) in [
            ("", JSON),
            ("*/*", JSON),
            ("application/vnd.apache.arrow.stream", ARROW_STREAM),
            (
                "application/json;q=0.5, application/vnd.apache.arrow.stream",
                ARROW_STREAM,
            ),
            ("application/*;q=0.2, application/json;q=0.9", JSON),
            ("application/vnd.apache.arrow.stream;q=0, */*", JSON),
            ("application/json;q=0, application/*", ARROW_STREAM),
        ] {
            assert_eq!(pick(accept).unwrap(), want, "{accept}");
        }
        for bad in [
            "text/csv",
            "application/json;q=0, application/vnd.apache.arrow.stream;q=0",
        ] {
            let e = pick(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotAcceptable, "{bad}");
            assert!(e.message().contains(ARROW_STREAM), "{}", e.message());
        }
    }

    #[test]
    fn a_query_string_is_rejected() {
        assert!(ensure_no_query(&"/a".parse().unwrap()).is_ok());
        let e = ensure_no_query(&"/a?x=1".parse().unwrap()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }
}
