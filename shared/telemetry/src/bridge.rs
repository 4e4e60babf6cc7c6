//! The `metrics` facade recorder that records into OpenTelemetry instruments, so the gateway's
//! families, the pool's and fluss-rs's own client metrics all leave through one exporter.
//!
//! The facade asks the recorder for a handle on every `counter!`/`gauge!`/`histogram!` call;
//! handles are cached per key (name + labels), instruments per name, so a request pays one
//! read-locked map lookup per metric. Units follow the name (`_seconds` → `s`, `_bytes` →
//! `By`); `_seconds` histograms get boundaries fit for request latencies.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata,
    SharedString, Unit,
};
use opentelemetry::KeyValue;
use opentelemetry::metrics::Meter;

/// Bucket boundaries of `_seconds` histograms: 1 ms to 30 s (the SDK's default boundaries
/// are meant for milliseconds).
pub(crate) const SECONDS_BOUNDARIES: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

pub(crate) struct Bridge {
    meter: Meter,
    descriptions: RwLock<HashMap<String, String>>,
    counters: RwLock<HashMap<Key, Arc<CounterHandle>>>,
    gauges: RwLock<HashMap<Key, Arc<GaugeHandle>>>,
    histograms: RwLock<HashMap<Key, Arc<HistogramHandle>>>,
}

impl Bridge {
    pub(crate) fn new(meter: Meter) -> Self {
        Bridge {
            meter,
            descriptions: RwLock::default(),
            counters: RwLock::default(),
            gauges: RwLock::default(),
            histograms: RwLock::default(),
        }
    }

    fn describe(&self, key: KeyName, description: SharedString) {
        if let Ok(mut d) = self.descriptions.write() {
            d.insert(key.as_str().to_owned(), description.into_owned());
        }
    }

    fn description(&self, name: &str) -> String {
        self.descriptions
            .read()
            .ok()
            .and_then(|d| d.get(name).cloned())
            .unwrap_or_default()
    }
}

fn unit_of(name: &str) -> Option<&'static str> {
    if name.ends_with("_seconds") {
        Some("s")
    } else if name.ends_with("_bytes") {
        Some("By")
    } else {
        None
    }
}

fn attributes(key: &Key) -> Vec<KeyValue> {
    key.labels()
        .map(|l| KeyValue::new(l.key().to_owned(), l.value().to_owned()))
        .collect()
}

/// The cached handle of `key`, made by `make` on first use.
fn cached<H>(map: &RwLock<HashMap<Key, Arc<H>>>, key: &Key, make: impl FnOnce() -> H) -> Arc<H> {
    if let Ok(m) = map.read()
        && let Some(h) = m.get(key)
    {
        return h.clone();
    }
    let Ok(mut m) = map.write() else {
        return Arc::new(make());
    };
    m.entry(key.clone())
        .or_insert_with(|| Arc::new(make()))
        .clone()
}

impl metrics::Recorder for Bridge {
    fn describe_counter(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }

    fn describe_gauge(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }

    fn describe_histogram(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(key, description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        Counter::from_arc(cached(&self.counters, key, || {
            let name = key.name().to_owned();
            let mut b = self.meter.u64_counter(name.clone());
            b = b.with_description(self.description(&name));
            if let Some(unit) = unit_of(&name) {
                b = b.with_unit(unit);
            }
            CounterHandle {
                counter: b.build(),
                attributes: attributes(key),
                absolute: AtomicU64::new(0),
            }
        }))
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(cached(&self.gauges, key, || {
            let name = key.name().to_owned();
            let mut b = self.meter.f64_gauge(name.clone());
            b = b.with_description(self.description(&name));
            if let Some(unit) = unit_of(&name) {
                b = b.with_unit(unit);
            }
            GaugeHandle {
                gauge: b.build(),
                attributes: attributes(key),
                value: AtomicU64::new(0f64.to_bits()),
            }
        }))
    }

    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(cached(&self.histograms, key, || {
            let name = key.name().to_owned();
            let mut b = self.meter.f64_histogram(name.clone());
            b = b.with_description(self.description(&name));
            if let Some(unit) = unit_of(&name) {
                b = b.with_unit(unit);
            }
            if name.ends_with("_seconds") {
                b = b.with_boundaries(SECONDS_BOUNDARIES.to_vec());
            }
            HistogramHandle {
                histogram: b.build(),
                attributes: attributes(key),
            }
        }))
    }
}

struct CounterHandle {
    counter: opentelemetry::metrics::Counter<u64>,
    attributes: Vec<KeyValue>,
    /// The last `absolute` value seen: OpenTelemetry counters only add, so an absolute total
    /// is recorded as its increase.
    absolute: AtomicU64,
}

impl CounterFn for CounterHandle {
    fn increment(&self, value: u64) {
        self.counter.add(value, &self.attributes);
    }

    fn absolute(&self, value: u64) {
        let previous = self.absolute.fetch_max(value, Ordering::AcqRel);
        if value > previous {
            self.counter.add(value - previous, &self.attributes);
        }
    }
}

struct GaugeHandle {
    gauge: opentelemetry::metrics::Gauge<f64>,
    attributes: Vec<KeyValue>,
    /// The current value (f64 bits): the facade's gauges move by increments, OpenTelemetry's
    /// record the value.
    value: AtomicU64,
}

impl GaugeHandle {
    fn update(&self, f: impl Fn(f64) -> f64) {
        let mut current = self.value.load(Ordering::Acquire);
        loop {
            let next = f(f64::from_bits(current));
            match self.value.compare_exchange_weak(
                current,
                next.to_bits(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.gauge.record(next, &self.attributes);
                    return;
                }
                Err(seen) => current = seen,
            }
        }
    }
}

impl GaugeFn for GaugeHandle {
    fn increment(&self, value: f64) {
        self.update(|v| v + value);
    }

    fn decrement(&self, value: f64) {
        self.update(|v| v - value);
    }

    fn set(&self, value: f64) {
        self.update(|_| value);
    }
}

struct HistogramHandle {
    histogram: opentelemetry::metrics::Histogram<f64>,
    attributes: Vec<KeyValue>,
}

impl HistogramFn for HistogramHandle {
    fn record(&self, value: f64) {
        self.histogram.record(value, &self.attributes);
    }
}
