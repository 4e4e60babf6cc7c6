//! The records of a Lambda event, whatever its source, as the writer needs them: the identifier
//! the partial batch response names, the group whose order must be kept, where the record came
//! from (for routing) and its payload (or why there is none). One bad record never fails the
//! whole event: each is read on its own.

use aws_lambda_events::event::dynamodb::StreamRecord;
use aws_lambda_events::event::kafka::KafkaRecord;
use aws_lambda_events::event::kinesis::KinesisRecord;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use gateway_core::wire::{Row, WriteOp};
// `T::deserialize(&Value)` reads a record in place; `from_value` would clone it first.
use serde::Deserialize;
use serde_json::{Value, json};

/// Where an event came from; decides the identifiers and the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Amazon SQS (standard or FIFO).
    Sqs,
    /// Kinesis Data Streams.
    Kinesis,
    /// DynamoDB Streams.
    DynamoDb,
    /// Amazon MSK or a self-managed Apache Kafka cluster.
    Kafka,
}

impl Source {
    /// The `source` label of the ingest metrics.
    pub fn label(self) -> &'static str {
        match self {
            Source::Sqs => "sqs",
            Source::Kinesis => "kinesis",
            Source::DynamoDb => "dynamodb",
            Source::Kafka => "kafka",
        }
    }
}

/// What a record carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A body (SQS, Kinesis and Kafka, base64-decoded): an envelope, or a bare row when a route
    /// maps the record's source.
    Body(Vec<u8>),
    /// A DynamoDB change: `INSERT`/`MODIFY` → upsert of the new image, `REMOVE` → delete by key.
    Change {
        /// Upsert or delete.
        op: WriteOp,
        /// The row, mapped from the attribute values.
        row: Row,
    },
}

/// One record of an event.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// What the partial batch response names: the SQS message id, the Kinesis or DynamoDB
    /// sequence number (strings), the Kafka `{"partition": "<topic>-<n>", "offset": n}`.
    pub id: Value,
    /// Records of one group are written in order and, after the first failure, not at all
    /// (Kinesis: the shard; DynamoDB: the stream; Kafka: the partition; SQS FIFO: the message
    /// group). `None`: no order to keep.
    pub group: Option<String>,
    /// Where it came from, for routing: the `eventSourceARN`, or the Kafka topic.
    pub origin: Option<String>,
    /// The record's payload, or why it has none (a poison record).
    pub payload: Result<Payload, String>,
    /// Where the source keeps it, the same text on every redelivery: the SQS message id, the
    /// Kinesis `eventID` (`<shard id>:<sequence number>`), the DynamoDB Streams `eventID`, the
    /// Kafka `<topic>-<partition>@<offset>`. A route's `source-column` receives it.
    pub coordinates: String,
}

impl Record {
    /// The identifier as logs show it (Kafka: `<topic>-<n>@<offset>`).
    pub fn id_text(&self) -> String {
        match &self.id {
            Value::String(s) => s.clone(),
            Value::Object(o) => format!(
                "{}@{}",
                o.get("partition").and_then(Value::as_str).unwrap_or("?"),
                o.get("offset").map(Value::to_string).unwrap_or_default()
            ),
            other => other.to_string(),
        }
    }
}

/// An event's records, in delivery order.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The source.
    pub source: Source,
    /// Its records.
    pub records: Vec<Record>,
}

/// An event as read from its JSON text (what the function's runtime hands over): only the
/// fields the writer uses are built; the rest (receipt handles, checksums, message attributes,
/// regions…) is skipped by the parser, which is most of an SQS record.
#[derive(Debug, Default, Deserialize)]
pub struct Event {
    #[serde(rename = "Records", default)]
    records: Option<Vec<RawRecord>>,
    /// Kafka events name their source at the top.
    #[serde(rename = "eventSource", default)]
    event_source: Option<Value>,
    /// Kafka: `{"<topic>-<partition>": [records]}`.
    #[serde(rename = "records", default)]
    kafka: Option<Value>,
}

/// The fields of an SQS, Kinesis or DynamoDB Streams record the writer uses; each is read as
/// any JSON so that one malformed record is poison alone, never a failed event.
#[derive(Debug, Default, Deserialize)]
struct RawRecord {
    #[serde(rename = "eventSource", default)]
    event_source: Option<Value>,
    #[serde(rename = "eventSourceARN", default)]
    event_source_arn: Option<Value>,
    #[serde(rename = "messageId", default)]
    message_id: Option<Value>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    attributes: Option<Value>,
    #[serde(default)]
    kinesis: Option<Value>,
    #[serde(rename = "eventID", default)]
    event_id: Option<Value>,
    #[serde(rename = "eventName", default)]
    event_name: Option<Value>,
    #[serde(default)]
    dynamodb: Option<Value>,
}

impl RawRecord {
    fn str_at<'a>(field: &'a Option<Value>, pointer: &str) -> Option<&'a str> {
        field.as_ref()?.pointer(pointer)?.as_str()
    }

    fn origin(&self) -> Option<String> {
        Self::str_at(&self.event_source_arn, "").map(str::to_owned)
    }
}

/// Reads `event` given as a JSON value (tests, tools); see [`read`].
pub fn parse(event: &Value) -> Result<Batch, String> {
    let event =
        Event::deserialize(event).map_err(|e| format!("not an event this function reads: {e}"))?;
    read(event)
}

/// Reads `event`; `Err` names what it is not (the whole invocation fails: Lambda retries it, and
/// a misrouted trigger shows up at once).
pub fn read(event: Event) -> Result<Batch, String> {
    const SUPPORTED: &str = "aws:sqs, aws:kinesis, aws:dynamodb, aws:kafka, SelfManagedKafka";
    if let Some(source) = &event.event_source {
        return match source.as_str() {
            Some("aws:kafka" | "SelfManagedKafka") => kafka(event.kafka.as_ref()),
            _ => Err(format!(
                "event source {} is not supported ({SUPPORTED})",
                gateway_core::names::shown(
                    &source
                        .as_str()
                        .map_or_else(|| source.to_string(), str::to_owned)
                )
            )),
        };
    }
    let records = event.records.ok_or(
        "the event has no `Records` list: not an SQS, Kinesis, DynamoDB Streams or Kafka event",
    )?;
    let source = records
        .iter()
        .find_map(|r| RawRecord::str_at(&r.event_source, ""));
    let (source, read): (Source, fn(usize, RawRecord) -> Record) = match source {
        Some("aws:sqs") => (Source::Sqs, sqs),
        Some("aws:kinesis") => (Source::Kinesis, kinesis),
        Some("aws:dynamodb") => (Source::DynamoDb, dynamodb),
        None if records.is_empty() => (Source::Sqs, sqs),
        Some(other) => {
            return Err(format!(
                "event source {} is not supported ({SUPPORTED})",
                gateway_core::names::shown(other)
            ));
        }
        None => return Err("the records name no `eventSource`".to_owned()),
    };
    Ok(Batch {
        source,
        records: records
            .into_iter()
            .enumerate()
            .map(|(i, r)| read(i, r))
            .collect(),
    })
}

fn raw_str<'a>(record: &'a Value, pointer: &str) -> Option<&'a str> {
    record.pointer(pointer).and_then(Value::as_str)
}

fn id_or_index(id: Option<&str>, index: usize) -> Value {
    Value::String(id.map(str::to_owned).unwrap_or_else(|| format!("#{index}")))
}

fn sqs(index: usize, raw: RawRecord) -> Record {
    let id = id_or_index(RawRecord::str_at(&raw.message_id, ""), index);
    let coordinates = id.as_str().unwrap_or_default().to_owned();
    let origin = raw.origin();
    // FIFO queues: order is kept per message group.
    let group = RawRecord::str_at(&raw.attributes, "/MessageGroupId").map(str::to_owned);
    // The shape `aws_lambda_events::sqs::SqsMessage` reads: `body` a string.
    let payload = match raw.body {
        Some(Value::String(body)) => Ok(Payload::Body(body.into_bytes())),
        None | Some(Value::Null) => Err("the message has no body".to_owned()),
        Some(_) => Err("not an SQS message: `body` is not a string".to_owned()),
    };
    Record {
        id,
        group,
        origin,
        payload,
        coordinates,
    }
}

fn kinesis(index: usize, raw: RawRecord) -> Record {
    let id = id_or_index(RawRecord::str_at(&raw.kinesis, "/sequenceNumber"), index);
    // `shardId-000000000000:4959…`: the shard is what Kinesis orders by.
    let shard = RawRecord::str_at(&raw.event_id, "")
        .and_then(|e| e.split(':').next())
        .unwrap_or("unknown-shard");
    let coordinates = format!("{shard}:{}", id.as_str().unwrap_or_default());
    let origin = raw.origin();
    let group = Some(format!("{}/{shard}", origin.as_deref().unwrap_or("")));
    let payload = match raw.kinesis.as_ref().map(KinesisRecord::deserialize) {
        Some(Ok(r)) => Ok(Payload::Body(r.data.0)),
        Some(Err(e)) => Err(format!(
            "not a Kinesis record (or its data is not base64): {e}"
        )),
        None => Err("not a Kinesis record: no `kinesis` object".to_owned()),
    };
    Record {
        id,
        group,
        origin,
        payload,
        coordinates,
    }
}

fn dynamodb(index: usize, raw: RawRecord) -> Record {
    let id = id_or_index(RawRecord::str_at(&raw.dynamodb, "/SequenceNumber"), index);
    let coordinates = RawRecord::str_at(&raw.event_id, "")
        .map_or_else(|| id.as_str().unwrap_or_default().to_owned(), str::to_owned);
    let origin = raw.origin();
    // Lambda hands one shard's records to an invocation: the whole event is one ordered group.
    let group = Some(origin.clone().unwrap_or_default());
    let payload = change(&raw);
    Record {
        id,
        group,
        origin,
        payload,
        coordinates,
    }
}

/// A DynamoDB Streams record's change, checked as `aws_lambda_events` reads a stream record.
fn change(raw: &RawRecord) -> Result<Payload, String> {
    let stream = raw
        .dynamodb
        .as_ref()
        .ok_or("not a DynamoDB Streams record: no `dynamodb` object")?;
    StreamRecord::deserialize(stream).map_err(|e| format!("not a DynamoDB Streams record: {e}"))?;
    let name = RawRecord::str_at(&raw.event_name, "").unwrap_or("");
    let (op, what) = match name {
        "INSERT" | "MODIFY" => (WriteOp::Upsert, "NewImage"),
        "REMOVE" => (WriteOp::Delete, "Keys"),
        other => {
            return Err(format!(
                "eventName {} is not INSERT, MODIFY or REMOVE",
                gateway_core::names::shown(other)
            ));
        }
    };
    let image = stream.get(what).filter(|v| !v.is_null()).ok_or_else(|| {
        format!(
            "the record carries no `{what}` (set the stream's view type to NEW_IMAGE or NEW_AND_OLD_IMAGES)"
        )
    })?;
    let row = crate::dynamo::item_to_row(image)?;
    Ok(Payload::Change { op, row })
}

fn kafka(records: Option<&Value>) -> Result<Batch, String> {
    let partitions = records
        .and_then(Value::as_object)
        .ok_or("the Kafka event has no `records` object")?;
    let mut records = Vec::new();
    for (partition, list) in partitions {
        let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
        for raw in list {
            let offset = raw.get("offset").and_then(Value::as_i64);
            let id = json!({"partition": partition, "offset": offset});
            let origin = raw_str(raw, "/topic").map(str::to_owned);
            let payload = match KafkaRecord::deserialize(raw) {
                Ok(r) => match r.value {
                    Some(v) => BASE64
                        .decode(v.as_bytes())
                        .map(Payload::Body)
                        .map_err(|_| "the record's value is not base64".to_owned()),
                    None => Err("the record has no value (a tombstone)".to_owned()),
                },
                Err(e) => Err(format!("not a Kafka record: {e}")),
            };
            let coordinates = format!(
                "{partition}@{}",
                offset.map_or_else(|| "?".to_owned(), |o| o.to_string())
            );
            records.push(Record {
                id,
                group: Some(partition.clone()),
                origin,
                payload,
                coordinates,
            });
        }
    }
    Ok(Batch {
        source: Source::Kafka,
        records,
    })
}

/// The partial batch response for `failed` record ids:
/// `{"batchItemFailures":[{"itemIdentifier": …}]}` — a string (SQS message id, Kinesis or
/// DynamoDB sequence number) or, for Kafka, `{"partition","offset"}`. Empty: all processed.
pub fn response(failed: &[Value]) -> Value {
    json!({
        "batchItemFailures": failed
            .iter()
            .map(|id| json!({"itemIdentifier": id}))
            .collect::<Vec<_>>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqs_records_keep_their_ids_and_fifo_groups() {
        let event = json!({"Records":[
            {"messageId":"m1","body":"{}","eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:r:1:q.fifo","attributes":{"MessageGroupId":"g1"}},
            {"messageId":"m2","body":"{}","eventSource":"aws:sqs","attributes":{}},
        ]});
        let batch = parse(&event).unwrap();
        assert_eq!(batch.source, Source::Sqs);
        assert_eq!(batch.records[0].group.as_deref(), Some("g1"));
        assert_eq!(
            batch.records[0].origin.as_deref(),
            Some("arn:aws:sqs:r:1:q.fifo")
        );
        assert_eq!(batch.records[1].group, None);
        assert_eq!(batch.records[1].payload, Ok(Payload::Body(b"{}".to_vec())));
        assert_eq!(batch.records[1].coordinates, "m2");
        // A malformed field is poison for its record alone.
        let event = json!({"Records":[
            {"messageId":"m1","body":5,"eventSource":"aws:sqs","attributes":7},
            {"messageId":"m2","body":"{}","eventSource":"aws:sqs"},
        ]});
        let batch = parse(&event).unwrap();
        assert!(
            batch.records[0]
                .payload
                .clone()
                .unwrap_err()
                .contains("`body` is not a string")
        );
        assert_eq!(batch.records[1].payload, Ok(Payload::Body(b"{}".to_vec())));
    }

    #[test]
    fn a_bad_kinesis_record_is_poison_alone() {
        let good = json!({"eventSource":"aws:kinesis","eventID":"shardId-000000000001:49","eventSourceARN":"arn:s",
            "kinesis":{"data":"e30=","partitionKey":"k","sequenceNumber":"49","approximateArrivalTimestamp":1.0}});
        let mut bad = good.clone();
        bad["kinesis"]["data"] = json!("%%% not base64");
        bad["kinesis"]["sequenceNumber"] = json!("50");
        let batch = parse(&json!({"Records":[good, bad]})).unwrap();
        assert_eq!(batch.source, Source::Kinesis);
        assert_eq!(batch.records[0].payload, Ok(Payload::Body(b"{}".to_vec())));
        assert_eq!(
            batch.records[0].group.as_deref(),
            Some("arn:s/shardId-000000000001")
        );
        assert_eq!(batch.records[1].id, json!("50"));
        assert!(batch.records[1].payload.is_err());
        assert_eq!(batch.records[0].coordinates, "shardId-000000000001:49");
    }

    #[test]
    fn dynamodb_changes_become_upserts_and_deletes() {
        let record = |name: &str, seq: &str| {
            json!({"eventID":"e","eventName":name,"eventSource":"aws:dynamodb","awsRegion":"r",
                "eventSourceARN":"arn:aws:dynamodb:r:1:table/T/stream/L",
                "dynamodb":{"Keys":{"id":{"N":"1"}},"NewImage":{"id":{"N":"1"},"v":{"S":"x"}},
                    "SequenceNumber":seq,"SizeBytes":10,"StreamViewType":"NEW_IMAGE"}})
        };
        let mut keys_only = record("MODIFY", "3");
        keys_only["dynamodb"]
            .as_object_mut()
            .unwrap()
            .remove("NewImage");
        let batch = parse(&json!({"Records":[
            record("INSERT","1"), record("REMOVE","2"), keys_only, record("TRUNCATE","4")
        ]}))
        .unwrap();
        assert_eq!(batch.source, Source::DynamoDb);
        let Ok(Payload::Change { op, row }) = &batch.records[0].payload else {
            panic!("{:?}", batch.records[0])
        };
        assert_eq!(
            (*op, Value::Object(row.clone())),
            (WriteOp::Upsert, json!({"id":"1","v":"x"}))
        );
        let Ok(Payload::Change { op, row }) = &batch.records[1].payload else {
            panic!("{:?}", batch.records[1])
        };
        assert_eq!(
            (*op, Value::Object(row.clone())),
            (WriteOp::Delete, json!({"id":"1"}))
        );
        assert!(
            batch.records[2]
                .payload
                .clone()
                .unwrap_err()
                .contains("NEW_IMAGE")
        );
        assert!(
            batch.records[3]
                .payload
                .clone()
                .unwrap_err()
                .contains("TRUNCATE")
        );
        assert_eq!(batch.records[1].id, json!("2"));
        assert_eq!(batch.records[1].coordinates, "e");
    }

    #[test]
    fn kafka_records_are_named_by_partition_and_offset() {
        let rec = |offset: i64, value: Option<&str>| {
            json!({"topic":"orders","partition":0,"offset":offset,"timestamp":1,"timestampType":"CREATE_TIME",
                "key":null,"value":value,"headers":[]})
        };
        let event = json!({"eventSource":"aws:kafka","bootstrapServers":"b:9092",
            "records":{"orders-0":[rec(15, Some("e30=")), rec(16, None)]}});
        let batch = parse(&event).unwrap();
        assert_eq!(batch.source, Source::Kafka);
        assert_eq!(
            batch.records[0].id,
            json!({"partition":"orders-0","offset":15})
        );
        assert_eq!(batch.records[0].id_text(), "orders-0@15");
        assert_eq!(batch.records[0].coordinates, "orders-0@15");
        assert_eq!(batch.records[0].origin.as_deref(), Some("orders"));
        assert_eq!(batch.records[0].group.as_deref(), Some("orders-0"));
        assert_eq!(batch.records[0].payload, Ok(Payload::Body(b"{}".to_vec())));
        assert!(
            batch.records[1]
                .payload
                .clone()
                .unwrap_err()
                .contains("tombstone")
        );
    }

    #[test]
    fn other_events_are_refused_by_name() {
        let e = parse(&json!({"Records":[{"eventSource":"aws:s3"}]})).unwrap_err();
        assert!(e.contains("aws:s3"), "{e}");
        assert!(parse(&json!({"detail":{}})).is_err());
        assert!(
            parse(&json!({"eventSource":"aws:mq"}))
                .unwrap_err()
                .contains("aws:mq")
        );
        assert_eq!(
            response(&[json!("a"), json!({"partition":"t-0","offset":1})]),
            json!({"batchItemFailures":[{"itemIdentifier":"a"},{"itemIdentifier":{"partition":"t-0","offset":1}}]})
        );
    }

    #[test]
    fn every_fixture_of_events_reads_without_poison() {
        for (name, text, source, n) in [
            (
                "sqs",
                include_str!("../../../events/ingest-sqs.json"),
                Source::Sqs,
                3,
            ),
            (
                "sqs-fifo",
                include_str!("../../../events/ingest-sqs-fifo.json"),
                Source::Sqs,
                3,
            ),
            (
                "kinesis",
                include_str!("../../../events/ingest-kinesis.json"),
                Source::Kinesis,
                2,
            ),
            (
                "dynamodb",
                include_str!("../../../events/ingest-dynamodb.json"),
                Source::DynamoDb,
                3,
            ),
            (
                "kafka",
                include_str!("../../../events/ingest-kafka.json"),
                Source::Kafka,
                3,
            ),
            (
                "kafka-self-managed",
                include_str!("../../../events/ingest-kafka-self-managed.json"),
                Source::Kafka,
                1,
            ),
        ] {
            let event: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let batch = parse(&event).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((batch.source, batch.records.len()), (source, n), "{name}");
            // The MSK fixture holds one tombstone on purpose (tests/tests/stack/ingest.rs).
            let poison = batch.records.iter().filter(|r| r.payload.is_err()).count();
            assert_eq!(poison, usize::from(name == "kafka"), "{name}: {batch:?}");
        }
    }
}
