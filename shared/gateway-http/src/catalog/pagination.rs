//! Paginated listings: `?max_results=…&page_token=…`, lexical order, opaque tokens.
//!
//! Fluss answers every listing whole (it has no paging of its own), so a page is cut from the
//! sorted full list. The token is the last name served, base64url-encoded: it is opaque to
//! callers, stable across containers (no server state) and still correct when names are created
//! or dropped between pages (the next page starts after that name, whatever exists then).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gateway_core::GatewayError;
use gateway_core::wire::PageQuery;

use crate::checks::percent_decode;

/// Longest token accepted: a Fluss name is at most a few hundred bytes, and a partition name a
/// few values of that, so anything longer is not ours.
const MAX_TOKEN_CHARS: usize = 4096;

/// The query of a listing: only `max_results` and `page_token`, each at most once. Anything
/// else is a 400, so a typo'd parameter is never silently ignored.
pub(crate) fn page_query(query: Option<&str>) -> Result<PageQuery, GatewayError> {
    let mut page = PageQuery::default();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value).ok_or_else(|| {
            GatewayError::invalid(format!("`{name}` is not valid percent-encoded UTF-8"))
        })?;
        match name {
            "max_results" => {
                if page.max_results.is_some() {
                    return Err(GatewayError::invalid(
                        "`max_results` may be given only once",
                    ));
                }
                let n = value.trim().parse::<u32>().map_err(|_| {
                    GatewayError::invalid(format!(
                        "`max_results` must be an integer between 1 and {}",
                        PageQuery::MAX_MAX_RESULTS
                    ))
                })?;
                page.max_results = Some(n);
            }
            "page_token" => {
                if page.page_token.is_some() {
                    return Err(GatewayError::invalid("`page_token` may be given only once"));
                }
                page.page_token = Some(value);
            }
            other => {
                let shown: String = other.chars().take(64).collect();
                return Err(GatewayError::invalid(format!(
                    "unknown query parameter `{shown}`; listings take only `max_results` and `page_token`"
                )));
            }
        }
    }
    // Both are checked now, so a bad page answers 400 before any Fluss call.
    page.page_size()?;
    page.page_token.as_deref().map(decode_token).transpose()?;
    Ok(page)
}

/// The token that resumes a listing after `last`.
pub(crate) fn encode_token(last: &str) -> String {
    URL_SAFE_NO_PAD.encode(last.as_bytes())
}

/// The name a token resumes after; 400 for anything [`encode_token`] did not produce.
pub(crate) fn decode_token(token: &str) -> Result<String, GatewayError> {
    let invalid =
        || GatewayError::invalid("`page_token` is malformed; pass a `next_page_token` unchanged");
    if token.is_empty() || token.len() > MAX_TOKEN_CHARS {
        return Err(invalid());
    }
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid())?;
    String::from_utf8(bytes).map_err(|_| invalid())
}

/// One page of `items` (in any order) keyed by `name`: sorted lexically by name, starting after
/// the token's name, with the token of the next page when more follow.
pub(crate) fn page_of<T>(
    mut items: Vec<T>,
    name: impl Fn(&T) -> &str,
    query: &PageQuery,
) -> Result<(Vec<T>, Option<String>), GatewayError> {
    let size = query.page_size()?;
    let after = query.page_token.as_deref().map(decode_token).transpose()?;
    items.sort_by(|a, b| name(a).cmp(name(b)));
    let start = match &after {
        Some(after) => items.partition_point(|i| name(i) <= after.as_str()),
        None => 0,
    };
    let mut page: Vec<T> = items.into_iter().skip(start).collect();
    let more = page.len() > size;
    page.truncate(size);
    let next = if more {
        page.last().map(|last| encode_token(name(last)))
    } else {
        None
    };
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::ErrorCode;

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
                page_of(all.clone(), |s| s.as_str(), &query(Some(100), token)).unwrap();
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
        let (page, next) = page_of(names(100), |s| s.as_str(), &query(None, None)).unwrap();
        assert_eq!(page.len(), 100);
        assert_eq!(next, None);
        let (page, next) =
            page_of(Vec::<String>::new(), |s| s.as_str(), &query(None, None)).unwrap();
        assert!(page.is_empty() && next.is_none());
    }

    #[test]
    fn a_token_resumes_after_its_name_even_if_that_name_is_gone() {
        let token = encode_token("t004");
        let mut items = names(10);
        items.retain(|n| n != "t004");
        let (page, _) = page_of(items, |s| s.as_str(), &query(Some(2), Some(token))).unwrap();
        assert_eq!(page, ["t005", "t006"]);
    }

    #[test]
    fn tokens_round_trip_and_garbage_is_400() {
        for name in ["db1", "a$b", "2026-08-25$x y", "ü"] {
            let t = encode_token(name);
            assert!(
                t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{t}"
            );
            assert_eq!(decode_token(&t).unwrap(), name);
        }
        for bad in ["", "!!!", "a", "_w", &"A".repeat(5000)] {
            let e = decode_token(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn the_query_takes_only_max_results_and_page_token() {
        assert_eq!(page_query(None).unwrap(), PageQuery::default());
        assert_eq!(page_query(Some("")).unwrap(), PageQuery::default());
        let q = page_query(Some("max_results=5&page_token=ZGIx")).unwrap();
        assert_eq!(q, query(Some(5), Some("ZGIx".into())));
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
        ] {
            let e = page_query(Some(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(
            page_query(Some("limit=3"))
                .unwrap_err()
                .message()
                .contains("`limit`")
        );
    }
}
