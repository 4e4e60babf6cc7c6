"""Exports logs, spans (with an event and a link) and metrics of every type the Python
OpenTelemetry SDK makes (sum, gauge, histogram, exponential histogram) with its OTLP/HTTP
protobuf exporters, configured only by OTEL_EXPORTER_OTLP_ENDPOINT as a user would.

Run by tests/tests/stack/otlp.rs. The last line printed is a JSON summary of the ids the
test checks the rows against. Exits non-zero if any export failed.
"""

import json
import logging
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import Observation
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import LogExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExportResult as MetricResult,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.trace import Link, SpanContext, TraceFlags

failures = []


class Checked:
    """Wraps an exporter and records any export that did not succeed."""

    def __init__(self, inner, ok):
        self.inner, self.ok = inner, ok

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def export(self, batch, *args, **kwargs):
        result = self.inner.export(batch, *args, **kwargs)
        # By name: the logs exporter answers LogRecordExportResult, an alias of LogExportResult.
        if result.name != self.ok.name:
            failures.append(f"{type(self.inner).__name__}: {result}")
        return result


resource = Resource.create({"service.name": "py-checkout", "deployment.environment": "test"})

tracer_provider = TracerProvider(resource=resource)
tracer_provider.add_span_processor(
    SimpleSpanProcessor(Checked(OTLPSpanExporter(), SpanExportResult.SUCCESS))
)
tracer = tracer_provider.get_tracer("checkout", "2.0")

logger_provider = LoggerProvider(resource=resource)
log_exporter = Checked(OTLPLogExporter(), LogExportResult.SUCCESS)
logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
log = logging.getLogger("checkout")
log.setLevel(logging.INFO)
log.addHandler(LoggingHandler(logger_provider=logger_provider))

metric_exporter = Checked(OTLPMetricExporter(), MetricResult.SUCCESS)
reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000)
meter_provider = MeterProvider(
    resource=resource,
    metric_readers=[reader],
    views=[
        View(instrument_name="payload.size", aggregation=ExponentialBucketHistogramAggregation())
    ],
)
meter = meter_provider.get_meter("checkout", "2.0")

linked = SpanContext(
    trace_id=0x0AF7651916CD43DD8448EB211C80319C,
    span_id=0x00F067AA0BA902B7,
    is_remote=True,
    trace_flags=TraceFlags(TraceFlags.SAMPLED),
)
with tracer.start_as_current_span("checkout") as parent:
    with tracer.start_as_current_span(
        "charge", links=[Link(linked, {"why": "retry of"})], attributes={"amount": 12.5}
    ) as child:
        child.add_event("card checked", {"card.kind": "visa"})
        log.info("payment accepted", extra={"order.id": "o-17"})
        log.warning("receipt mail queued")

orders = meter.create_counter("orders")
orders.add(3, {"region": "eu"})
orders.add(4, {"region": "eu"})
meter.create_observable_gauge(
    "queue.depth", callbacks=[lambda _options: [Observation(42, {"queue": "mail"})]]
)
latency = meter.create_histogram("latency", unit="ms")
for v in (10, 20, 30):
    latency.record(v)
size = meter.create_histogram("payload.size", unit="By")
for v in (1024, 2048):
    size.record(v)

meter_provider.force_flush()
tracer_provider.shutdown()
logger_provider.shutdown()
meter_provider.shutdown()

if failures:
    print("exports failed:", failures, file=sys.stderr)
    sys.exit(1)
ctx = child.get_span_context()
print(
    json.dumps(
        {
            "trace_id": format(ctx.trace_id, "032x"),
            "parent_span_id": format(parent.get_span_context().span_id, "016x"),
            "span_id": format(ctx.span_id, "016x"),
            "linked_span_id": format(linked.span_id, "016x"),
        }
    )
)
