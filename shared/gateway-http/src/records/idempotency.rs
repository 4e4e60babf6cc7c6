//! `Idempotency-Key` on the write route: the header read and checked here (HTTP), the store
//! and its rules in `gateway-idempotency` (re-exported), which an event source can use too.

use axum::http::HeaderMap;
use gateway_core::GatewayError;

pub use gateway_idempotency::*;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The response header marking a replay.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// The response header marking a replay whose kept body had to be shortened (see [`keep`]).
pub const PARTIAL_HEADER: &str = "idempotent-replay-partial";
/// The caller's `Idempotency-Key`, if sent: 1 to [`MAX_KEY_CHARS`] visible ASCII characters,
/// bare or as a quoted structured-field string. Anything else is a 400 naming the header (its
/// value is not echoed).
pub fn request_key(headers: &HeaderMap) -> Result<Option<String>, GatewayError> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(GatewayError::invalid(
            "the Idempotency-Key header is sent more than once",
        ));
    }
    let bad = || {
        GatewayError::invalid(format!(
            "the Idempotency-Key header must be 1 to {MAX_KEY_CHARS} visible ASCII characters, \
             bare or in double quotes"
        ))
    };
    let text = value.to_str().map_err(|_| bad())?.trim();
    let key = match text.strip_prefix('"') {
        Some(rest) => rest.strip_suffix('"').ok_or_else(bad)?,
        None => text,
    };
    let visible = |c: char| c.is_ascii_graphic() && c != '"' && c != '\\';
    if key.is_empty() || key.chars().count() > MAX_KEY_CHARS || !key.chars().all(visible) {
        return Err(bad());
    }
    Ok(Some(key.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::ErrorCode;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(HEADER, axum::http::HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    #[test]
    fn request_keys_are_visible_ascii_bare_or_quoted() {
        assert_eq!(request_key(&HeaderMap::new()).unwrap(), None);
        assert_eq!(
            request_key(&headers(&[b"abc-1"])).unwrap().as_deref(),
            Some("abc-1")
        );
        assert_eq!(
            request_key(&headers(&[b"\"abc-1\""])).unwrap().as_deref(),
            Some("abc-1")
        );
        let long = "k".repeat(MAX_KEY_CHARS);
        assert_eq!(
            request_key(&headers(&[long.as_bytes()])).unwrap(),
            Some(long.clone())
        );
        let too_long = "k".repeat(MAX_KEY_CHARS + 1);
        for bad in [
            &b""[..],
            b"\"\"",
            b"a b",
            b"\"open",
            b"caf\xc3\xa9",
            too_long.as_bytes(),
            b"a\\b",
        ] {
            let e = request_key(&headers(&[bad])).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(e.message().contains("Idempotency-Key"), "{e}");
        }
        let e = request_key(&headers(&[b"a", b"b"])).unwrap_err();
        assert!(e.message().contains("more than once"), "{e}");
    }
}
