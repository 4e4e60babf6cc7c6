//! Where the standalone server serves its metrics (`gateway.metrics.*`, the Fluss Gateway's
//! keys, listed in [`super::keys::metrics`]).

use super::keys::metrics::{
    DEFAULT_PROMETHEUS_LISTEN, ENABLED_KEY, EXPORTERS_KEY, PROMETHEUS_LISTEN_KEY,
};

/// Where the standalone server serves `GET /metrics` in the Prometheus format
/// (`gateway.metrics.*`, the Fluss Gateway's keys): `None` unless `gateway.metrics.enabled`.
/// `gateway.metrics.exporters` may name `prometheus` only; every key under `gateway.metrics.`
/// must be one of the three.
pub fn listen(
    map: &std::collections::BTreeMap<String, String>,
) -> Result<Option<std::net::SocketAddr>, crate::GatewayError> {
    let mut enabled = false;
    let mut exporters = "prometheus".to_owned();
    let mut listen = DEFAULT_PROMETHEUS_LISTEN.to_owned();
    let read = super::read(
        map,
        &["gateway.metrics."],
        &mut [
            (ENABLED_KEY, super::Slot::Bool(&mut enabled)),
            (EXPORTERS_KEY, super::Slot::Text(&mut exporters)),
            (PROMETHEUS_LISTEN_KEY, super::Slot::Text(&mut listen)),
        ],
        "metrics",
    );
    // Every problem at once: the ones `read` found come first, in its words.
    let mut problems: Vec<String> = read
        .err()
        .map(|e| {
            let m = e.message();
            m.strip_prefix("invalid metrics configuration: ")
                .unwrap_or(m)
                .to_owned()
        })
        .into_iter()
        .collect();
    let named: Vec<&str> = exporters
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    if let Some(other) = named.iter().find(|e| !e.eq_ignore_ascii_case("prometheus")) {
        problems.push(format!(
            "`{EXPORTERS_KEY}`: unknown exporter `{other}` (the one there is: prometheus; OTLP export is set with the `OTEL_EXPORTER_OTLP_*` variables)"
        ));
    }
    let addr = listen.parse::<std::net::SocketAddr>().map_err(|_| {
        format!("`{PROMETHEUS_LISTEN_KEY}`: expected an IP address and port, such as `{DEFAULT_PROMETHEUS_LISTEN}`")
    });
    if let Err(problem) = &addr {
        problems.push(problem.clone());
    }
    if !problems.is_empty() {
        return Err(crate::GatewayError::invalid(format!(
            "invalid metrics configuration: {}",
            problems.join("; ")
        )));
    }
    Ok(addr.ok().filter(|_| enabled && !named.is_empty()))
}

#[cfg(test)]
mod tests {
    use crate::settings::map_of as map;

    #[test]
    fn prometheus_is_off_by_default_and_its_keys_are_checked() {
        assert_eq!(super::listen(&map(&[])).unwrap(), None);
        assert_eq!(
            super::listen(&map(&[("FLUSS_GATEWAY__METRICS__ENABLED", "true")])).unwrap(),
            Some("127.0.0.1:9095".parse().unwrap())
        );
        assert_eq!(
            super::listen(&map(&[
                ("gateway.metrics.enabled", "true"),
                ("gateway.metrics.exporter.prometheus.listen", "0.0.0.0:9100"),
            ]))
            .unwrap(),
            Some("0.0.0.0:9100".parse().unwrap())
        );
        let e = super::listen(&map(&[
            ("gateway.metrics.enabled", "yes please"),
            ("gateway.metrics.exporters", "prometheus,statsd"),
            ("gateway.metrics.exporter.prometheus.listen", "localhost"),
            ("gateway.metrics.exporter.prometheus.port", "9100"),
        ]))
        .unwrap_err()
        .to_string();
        for needle in [
            "`gateway.metrics.enabled`",
            "unknown exporter `statsd`",
            "`gateway.metrics.exporter.prometheus.listen`: expected an IP address and port",
            "`gateway.metrics.exporter.prometheus.port`: unknown key",
        ] {
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }
}
