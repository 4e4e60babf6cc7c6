//! Paginated listings: `?max_results=…&page_token=…`, lexical order, opaque tokens.
//!
//! Fluss answers every listing whole (it has no paging of its own), so a page is cut from the
//! sorted full list. The token carries the last name served, bound to its listing: version
//! byte, 8 bytes of SHA-256 of the listing (`databases:<cluster>`, `tables:<cluster>/<db>`, …),
//! the name, and 8 bytes of SHA-256 over all of it, base64url-encoded. It is opaque to callers,
//! stable across containers (no server state) and still correct when names are created or
//! dropped between pages (the next page starts after that name, whatever exists then). A token
//! of another listing, or any edited or made-up token, is 400: the check sums do not match.
//! (They detect, not prevent, deliberate forgery; a forged token can only choose where a listing
//! the caller may read anyway resumes.)

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gateway_core::GatewayError;
use gateway_core::wire::PageQuery;
use sha2::{Digest, Sha256};

use crate::checks::query_params;

/// Longest token accepted: a Fluss name is at most a few hundred bytes, and a partition name a
/// few values of that, so anything longer is not ours.
const MAX_TOKEN_CHARS: usize = 4096;

/// Token format version (the first byte).
const VERSION: u8 = 1;
/// Bytes of each check sum.
const SUM: usize = 8;

/// The query of `listing`: only `max_results` and `page_token`, each at most once. Anything
/// else is a 400, so a typo'd parameter is never silently ignored; so is a token that is not one
/// of this listing's.
pub(crate) fn page_query(query: Option<&str>, listing: &str) -> Result<PageQuery, GatewayError> {
    let mut page = PageQuery::default();
    let takes = "listings take only `max_results` and `page_token`";
    for (name, value) in query_params(query, &["max_results", "page_token"], takes)? {
        if name == "max_results" {
            let n = value.trim().parse::<u32>().map_err(|_| {
                GatewayError::invalid(format!(
                    "`max_results` must be an integer between 1 and {}",
                    PageQuery::MAX_MAX_RESULTS
                ))
            })?;
            page.max_results = Some(n);
        } else {
            page.page_token = Some(value);
        }
    }
    // Both are checked now, so a bad page answers 400 before any Fluss call.
    page.page_size()?;
    page.page_token
        .as_deref()
        .map(|t| decode_token(t, listing))
        .transpose()?;
    Ok(page)
}

fn listing_sum(listing: &str) -> [u8; SUM] {
    let digest = Sha256::digest(listing.as_bytes());
    let mut out = [0; SUM];
    out.copy_from_slice(&digest[..SUM]);
    out
}

fn token_sum(body: &[u8]) -> [u8; SUM] {
    let mut h = Sha256::new();
    h.update(b"fluss-gateway page token");
    h.update(body);
    let digest = h.finalize();
    let mut out = [0; SUM];
    out.copy_from_slice(&digest[..SUM]);
    out
}

/// The token that resumes `listing` after `last`.
pub(crate) fn encode_token(last: &str, listing: &str) -> String {
    let mut body = Vec::with_capacity(1 + SUM + last.len() + SUM);
    body.push(VERSION);
    body.extend_from_slice(&listing_sum(listing));
    body.extend_from_slice(last.as_bytes());
    let sum = token_sum(&body);
    body.extend_from_slice(&sum);
    URL_SAFE_NO_PAD.encode(body)
}

/// The name a token of `listing` resumes after; 400 for anything [`encode_token`] did not
/// produce for this listing.
pub(crate) fn decode_token(token: &str, listing: &str) -> Result<String, GatewayError> {
    let invalid = || {
        GatewayError::invalid(
            "`page_token` is not a token of this listing; pass the `next_page_token` of the \
             previous page unchanged",
        )
    };
    if token.is_empty() || token.len() > MAX_TOKEN_CHARS {
        return Err(invalid());
    }
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid())?;
    if bytes.len() < 1 + 2 * SUM || bytes[0] != VERSION {
        return Err(invalid());
    }
    let (body, sum) = bytes.split_at(bytes.len() - SUM);
    if token_sum(body) != sum || body[1..1 + SUM] != listing_sum(listing) {
        return Err(invalid());
    }
    String::from_utf8(body[1 + SUM..].to_vec()).map_err(|_| invalid())
}

/// One page of `items` (in any order) of `listing`, keyed by `name`: sorted lexically by name,
/// starting after the token's name, with the token of the next page when more follow.
pub(crate) fn page_of<T>(
    mut items: Vec<T>,
    name: impl Fn(&T) -> &str,
    query: &PageQuery,
    listing: &str,
) -> Result<(Vec<T>, Option<String>), GatewayError> {
    let size = query.page_size()?;
    let after = query
        .page_token
        .as_deref()
        .map(|t| decode_token(t, listing))
        .transpose()?;
    items.sort_by(|a, b| name(a).cmp(name(b)));
    let start = match &after {
        Some(after) => items.partition_point(|i| name(i) <= after.as_str()),
        None => 0,
    };
    let mut page: Vec<T> = items.into_iter().skip(start).collect();
    let more = page.len() > size;
    page.truncate(size);
    let next = if more {
        page.last().map(|last| encode_token(name(last), listing))
    } else {
        None
    };
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::ErrorCode;

    const L: &str = "tables:default/db";

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i:03}")).collect()
    }

    fn query(max: Option<u32>, token: Option<String>) -> PageQuery {
        PageQuery {
            max_results: max,
            page_token: token,
        }
    }

    #[test]
    fn pages_cover_every_name_once_in_lexical_order() {
        let mut all = names(250);
        all.reverse();
        let mut seen = Vec::new();
        let mut token = None;
        let mut pages = 0;
        loop {
            let (page, next) =
                page_of(all.clone(), |s| s.as_str(), &query(Some(100), token), L).unwrap();
            pages += 1;
            seen.extend(page);
            match next {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, names(250));
    }

    #[test]
    fn a_full_last_page_has_no_next_token() {
        let (page, next) = page_of(names(100), |s| s.as_str(), &query(None, None), L).unwrap();
        assert_eq!(page.len(), 100);
        assert_eq!(next, None);
        let (page, next) =
            page_of(Vec::<String>::new(), |s| s.as_str(), &query(None, None), L).unwrap();
        assert!(page.is_empty() && next.is_none());
    }

    #[test]
    fn a_token_resumes_after_its_name_even_if_that_name_is_gone() {
        let token = encode_token("t004", L);
        let mut items = names(10);
        items.retain(|n| n != "t004");
        let (page, _) = page_of(items, |s| s.as_str(), &query(Some(2), Some(token)), L).unwrap();
        assert_eq!(page, ["t005", "t006"]);
    }

    #[test]
    fn tokens_round_trip_and_garbage_or_foreign_tokens_are_400() {
        for name in ["db1", "a$b", "2026-08-25$x y", "ü"] {
            let t = encode_token(name, L);
            assert!(
                t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{t}"
            );
            assert_eq!(decode_token(&t, L).unwrap(), name);
        }
        let legacy = URL_SAFE_NO_PAD.encode("db1");
        let foreign = encode_token("db1", "databases:other");
        let mut edited = URL_SAFE_NO_PAD.decode(encode_token("db1", L)).unwrap();
        edited[10] ^= 1;
        let edited = URL_SAFE_NO_PAD.encode(edited);
        for bad in [
            "",
            "!!!",
            "a",
            "_w",
            &"A".repeat(5000),
            &legacy,
            &foreign,
            &edited,
        ] {
            let e = decode_token(bad, L).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
            assert!(e.message().contains("not a token of this listing"), "{e}");
        }
    }

    #[test]
    fn the_query_takes_only_max_results_and_page_token() {
        assert_eq!(page_query(None, L).unwrap(), PageQuery::default());
        assert_eq!(page_query(Some(""), L).unwrap(), PageQuery::default());
        let token = encode_token("db1", L);
        let q = page_query(Some(&format!("max_results=5&page_token={token}")), L).unwrap();
        assert_eq!(q, query(Some(5), Some(token)));
        for bad in [
            "max_results=0",
            "max_results=1001",
            "max_results=-1",
            "max_results=ten",
            "max_results=1&max_results=2",
            "page_token=a&page_token=b",
            "limit=3",
            "max_results=%zz",
            "page_token=!!",
            "page_token=ZGIx",
        ] {
            let e = page_query(Some(bad), L).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(
            page_query(Some("limit=3"), L)
                .unwrap_err()
                .message()
                .contains("`limit`")
        );
        for (bad, message) in [
            ("max_results", "query parameter `max_results` has no value"),
            (
                "page_token&max_results=2",
                "query parameter `page_token` has no value",
            ),
            (
                "max_results=1&max_results=2",
                "query parameter `max_results` is repeated",
            ),
        ] {
            assert_eq!(page_query(Some(bad), L).unwrap_err().message(), message);
        }
    }
}
