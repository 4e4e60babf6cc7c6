//! The trace a request belongs to, for its log lines: a W3C `traceparent` header, or AWS
//! X-Ray's `Root` (the `X-Amzn-Trace-Id` header API Gateway adds, or the id Lambda hands the
//! invocation). Only well-formed ids are taken: a caller cannot put arbitrary text in a log
//! line through these headers.

/// The trace id of a request: the 32 hex digits of a valid `traceparent`, else the X-Ray
/// root (`1-5759e988-bd862e3fe1be46a994272793`) of the first X-Ray value given that has one.
pub fn trace_id(traceparent: Option<&str>, xray: &[Option<&str>]) -> Option<String> {
    traceparent
        .and_then(w3c_trace_id)
        .or_else(|| xray.iter().flatten().find_map(|v| xray_root(v)))
}

fn is_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `version-traceid-parentid-flags`, version `00`, ids lowercase hex and not all zero.
fn w3c_trace_id(header: &str) -> Option<String> {
    let mut parts = header.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let well_formed = version == "00"
        && parts.next().is_none()
        && trace.len() == 32
        && parent.len() == 16
        && flags.len() == 2
        && is_hex(trace)
        && is_hex(parent)
        && is_hex(flags)
        && trace.bytes().any(|b| b != b'0');
    well_formed.then(|| trace.to_owned())
}

/// `Root=1-<8 hex>-<24 hex>` among `;`-separated fields.
fn xray_root(header: &str) -> Option<String> {
    header.split(';').find_map(|field| {
        let root = field.trim().strip_prefix("Root=")?;
        let mut parts = root.split('-');
        let (one, time, id) = (parts.next()?, parts.next()?, parts.next()?);
        let well_formed = one == "1"
            && parts.next().is_none()
            && time.len() == 8
            && id.len() == 24
            && is_hex(time)
            && is_hex(id);
        well_formed.then(|| root.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w3c_wins_and_only_well_formed_ids_are_taken() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let xr = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1";
        assert_eq!(
            trace_id(Some(tp), &[Some(xr)]).as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(
            trace_id(None, &[None, Some(xr)]).as_deref(),
            Some("1-5759e988-bd862e3fe1be46a994272793")
        );
        assert_eq!(
            trace_id(
                Some("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
                &[]
            ),
            None
        );
        assert_eq!(trace_id(Some("00-\"injected\nline\"-x-01"), &[]), None);
        assert_eq!(trace_id(None, &[Some("Root=1-zz;Sampled=1")]), None);
    }
}
