//! The records of a Lambda event, whatever its source, as the writer needs them: the identifier
//! the partial batch response names, the group whose order must be kept, where the record came
//! from (for routing) and its payload (or why there is none). One bad record never fails the
//! whole event: each is read on its own.

use aws_lambda_events::event::dynamodb::EventRecord as DynamoRecord;
use aws_lambda_events::event::kafka::KafkaRecord;
use aws_lambda_events::event::kinesis::KinesisEventRecord;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use gateway_core::wire::{Row, WriteOp};
// `T::deserialize(&Value)` reads a record in place; `from_value` would clone it first.
use serde::Deserialize as _;
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

/// Reads `event`; `Err` names what it is not (the whole invocation fails: Lambda retries it, and
/// a misrouted trigger shows up at once).
pub fn parse(event: &Value) -> Result<Batch, String> {
    if let Some(source) = event.get("eventSource").and_then(Value::as_str) {
        return match source {
            "aws:kafka" | "SelfManagedKafka" => kafka(event),
            other => Err(format!(
                "event source {} is not supported (aws:sqs, aws:kinesis, aws:dynamodb, aws:kafka, SelfManagedKafka)",
                gateway_core::names::shown(other)
            )),
        };
    }
    let records = event.get("Records").and_then(Value::as_array).ok_or(
        "the event has no `Records` list: not an SQS, Kinesis, DynamoDB Streams or Kafka event",
    )?;
    let source = records
        .iter()
        .find_map(|r| r.get("eventSource").and_then(Value::as_str));
    let (source, read): (Source, fn(usize, &Value) -> Record) = match source {
        Some("aws:sqs") => (Source::Sqs, sqs),
        Some("aws:kinesis") => (Source::Kinesis, kinesis),
        Some("aws:dynamodb") => (Source::DynamoDb, dynamodb),
        None if records.is_empty() => (Source::Sqs, sqs),
        Some(other) => {
            return Err(format!(
                "event source {} is not supported (aws:sqs, aws:kinesis, aws:dynamodb, aws:kafka, SelfManagedKafka)",
                gateway_core::names::shown(other)
            ));
        }
        None => return Err("the records name no `eventSource`".to_owned()),
    };
    Ok(Batch {
        source,
        records: records
            .iter()
            .enumerate()
            .map(|(i, r)| read(i, r))
            .collect(),
    })
}

fn raw_str<'a>(record: &'a Value, pointer: &str) -> Option<&'a str> {
    record.pointer(pointer).and_then(Value::as_str)
}

fn id_or_index(raw: &Value, pointer: &str, index: usize) -> Value {
    Value::String(
        raw_str(raw, pointer)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("#{index}")),
    )
}

fn sqs(index: usize, raw: &Value) -> Record {
    let id = id_or_index(raw, "/messageId", index);
    let origin = raw_str(raw, "/eventSourceARN").map(str::to_owned);
    // The three fields the writer needs, read in place: building the whole `SqsMessage` (its
    // attribute maps) costs more per record than the rest of the routing together; its shape
    // is the one `aws_lambda_events` reads (`body` a string, `attributes` string-valued).
    let payload = match raw.get("body") {
        Some(Value::String(body)) => Ok(Payload::Body(body.as_bytes().to_vec())),
        None | Some(Value::Null) => Err("the message has no body".to_owned()),
        Some(_) => Err("not an SQS message: `body` is not a string".to_owned()),
    };
    Record {
        id,
        // FIFO queues: order is kept per message group.
        group: raw_str(raw, "/attributes/MessageGroupId").map(str::to_owned),
        origin,
        payload,
    }
}

fn kinesis(index: usize, raw: &Value) -> Record {
    let id = id_or_index(raw, "/kinesis/sequenceNumber", index);
    // `shardId-000000000000:4959…`: the shard is what Kinesis orders by.
    let shard = raw_str(raw, "/eventID")
        .and_then(|e| e.split(':').next())
        .unwrap_or("unknown-shard");
    let origin = raw_str(raw, "/eventSourceARN").map(str::to_owned);
    let group = Some(format!("{}/{shard}", origin.as_deref().unwrap_or("")));
    let payload = match KinesisEventRecord::deserialize(raw) {
        Ok(r) => Ok(Payload::Body(r.kinesis.data.0)),
        Err(e) => Err(format!(
            "not a Kinesis record (or its data is not base64): {e}"
        )),
    };
    Record {
        id,
        group,
        origin,
        payload,
    }
}

fn dynamodb(index: usize, raw: &Value) -> Record {
    let id = id_or_index(raw, "/dynamodb/SequenceNumber", index);
    let origin = raw_str(raw, "/eventSourceARN").map(str::to_owned);
    // Lambda hands one shard's records to an invocation: the whole event is one ordered group.
    let group = Some(origin.clone().unwrap_or_default());
    let payload = DynamoRecord::deserialize(raw)
        .map_err(|e| format!("not a DynamoDB Streams record: {e}"))
        .and_then(|r| {
            let (op, image, what) = match r.event_name.as_str() {
                "INSERT" | "MODIFY" => (WriteOp::Upsert, "/dynamodb/NewImage", "NewImage"),
                "REMOVE" => (WriteOp::Delete, "/dynamodb/Keys", "Keys"),
                other => {
                    return Err(format!(
                        "eventName {} is not INSERT, MODIFY or REMOVE",
                        gateway_core::names::shown(other)
                    ));
                }
            };
            let image = raw.pointer(image).ok_or_else(|| {
                format!(
                    "the record carries no `{what}` (set the stream's view type to NEW_IMAGE or NEW_AND_OLD_IMAGES)"
                )
            })?;
            let row = crate::dynamo::item_to_row(image)?;
            Ok(Payload::Change { op, row })
        });
    Record {
        id,
        group,
        origin,
        payload,
    }
}

fn kafka(event: &Value) -> Result<Batch, String> {
    let partitions = event
        .get("records")
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
            records.push(Record {
                id,
                group: Some(partition.clone()),
                origin,
                payload,
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
            // The MSK fixture holds one tombstone on purpose (tests/tests/ingest.rs).
            let poison = batch.records.iter().filter(|r| r.payload.is_err()).count();
            assert_eq!(poison, usize::from(name == "kafka"), "{name}: {batch:?}");
        }
    }
}
