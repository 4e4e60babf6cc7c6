//! Helpers of the ingest tests: SDK clients for moto's SQS, Kinesis, DynamoDB and DynamoDB
//! Streams; the records read back through the SDK turned into the Lambda events AWS delivers;
//! `fluss-ingest` invoked through `cargo lambda watch`'s invoke endpoint.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use aws_config::SdkConfig;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use integration_tests::Stack;
use serde_json::{Map, Value, json};

use fluss::client::FlussConnection;
use fluss::metadata::{DataTypes, Schema, TablePath};

use integration_tests::http::{Answer, http_within};

/// moto's endpoint, region and test credentials from the stack, over a ring-based HTTPS client
/// (as the gateway's own SDK use).
pub async fn sdk_config(stack: &Stack) -> SdkConfig {
    sdk_config_of(&stack.aws_env()).await
}

/// [`sdk_config`] of a function's AWS variables (`AWS_ENDPOINT_URL`, region, static keys), e.g.
/// a private moto's.
pub async fn sdk_config_of(aws: &std::collections::BTreeMap<String, String>) -> SdkConfig {
    let var = |k: &str| aws.get(k).cloned().unwrap_or_default();
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .build_https();
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(http)
        .endpoint_url(var("AWS_ENDPOINT_URL"))
        .region(aws_config::Region::new(var("AWS_REGION")))
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            var("AWS_ACCESS_KEY_ID"),
            var("AWS_SECRET_ACCESS_KEY"),
            None,
            None,
            "moto",
        ))
        .load()
        .await
}

/// Invokes `fluss-ingest` with `event` through `cargo lambda watch` at `addr` (the Lambda
/// invoke API it serves), within `bound`.
pub async fn invoke(addr: SocketAddr, event: &Value, bound: Duration) -> Answer {
    http_within(
        bound,
        addr,
        "POST",
        "/2015-03-31/functions/fluss-ingest/invocations",
        "application/json",
        event.to_string().as_bytes(),
    )
    .await
}

/// The `itemIdentifier`s of a partial batch response, in order.
pub fn reported(answer: &Answer) -> Vec<Value> {
    answer.body["batchItemFailures"]
        .as_array()
        .unwrap_or_else(|| panic!("not a partial batch response: {answer:?}"))
        .iter()
        .map(|f| f["itemIdentifier"].clone())
        .collect()
}

/// Receives every message of `queue_url` (until a receive comes back empty) as the SQS records
/// of a Lambda event, in receive order.
pub async fn sqs_records(
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    queue_arn: &str,
    region: &str,
) -> Vec<Value> {
    use aws_sdk_sqs::types::MessageSystemAttributeName;
    let mut out = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(queue_url)
            .max_number_of_messages(10)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .visibility_timeout(60)
            .send()
            .await
            .expect("receive message");
        if got.messages().is_empty() {
            return out;
        }
        for m in got.messages() {
            let attributes: Map<String, Value> = m
                .attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.as_str().to_owned(), json!(v)))
                        .collect()
                })
                .unwrap_or_default();
            out.push(json!({
                "messageId": m.message_id(),
                "receiptHandle": m.receipt_handle(),
                "body": m.body(),
                "attributes": attributes,
                "messageAttributes": {},
                "md5OfBody": m.md5_of_body(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }));
        }
    }
}

/// The records of every shard of `stream`, each shard's in order, as the Kinesis records of a
/// Lambda event: (shard id, records).
pub async fn kinesis_records(
    kinesis: &aws_sdk_kinesis::Client,
    stream: &str,
    stream_arn: &str,
    region: &str,
) -> Vec<(String, Vec<Value>)> {
    use aws_sdk_kinesis::types::ShardIteratorType;
    let shards = kinesis
        .list_shards()
        .stream_name(stream)
        .send()
        .await
        .expect("list shards");
    let mut out = Vec::new();
    for shard in shards.shards() {
        let shard_id = shard.shard_id().to_owned();
        let mut iterator = kinesis
            .get_shard_iterator()
            .stream_name(stream)
            .shard_id(&shard_id)
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .expect("shard iterator")
            .shard_iterator()
            .map(str::to_owned);
        let mut records = Vec::new();
        while let Some(it) = iterator {
            let got = kinesis
                .get_records()
                .shard_iterator(it)
                .send()
                .await
                .expect("get records");
            if got.records().is_empty() {
                break;
            }
            for r in got.records() {
                records.push(json!({
                    "kinesis": {
                        "kinesisSchemaVersion": "1.0",
                        "partitionKey": r.partition_key(),
                        "sequenceNumber": r.sequence_number(),
                        "data": BASE64.encode(r.data().as_ref()),
                        "approximateArrivalTimestamp": r
                            .approximate_arrival_timestamp()
                            .map(|t| t.as_secs_f64())
                            .unwrap_or_default(),
                    },
                    "eventSource": "aws:kinesis",
                    "eventVersion": "1.0",
                    "eventID": format!("{shard_id}:{}", r.sequence_number()),
                    "eventName": "aws:kinesis:record",
                    "invokeIdentityArn": "arn:aws:iam::123456789012:role/fluss-ingest",
                    "awsRegion": region,
                    "eventSourceARN": stream_arn,
                }));
            }
            iterator = got.next_shard_iterator().map(str::to_owned);
        }
        out.push((shard_id, records));
    }
    out
}

/// The change records of every shard of DynamoDB stream `stream_arn`, as the DynamoDB Streams
/// records of a Lambda event, in stream order.
pub async fn dynamodb_records(
    streams: &aws_sdk_dynamodbstreams::Client,
    stream_arn: &str,
    region: &str,
) -> Vec<Value> {
    use aws_sdk_dynamodbstreams::types::ShardIteratorType;
    let described = streams
        .describe_stream()
        .stream_arn(stream_arn)
        .send()
        .await
        .expect("describe stream");
    let shards: Vec<String> = described
        .stream_description()
        .map(|d| {
            d.shards()
                .iter()
                .filter_map(|s| s.shard_id().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for shard in shards {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(stream_arn)
            .shard_id(&shard)
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .expect("shard iterator")
            .shard_iterator()
            .map(str::to_owned);
        while let Some(it) = iterator {
            let got = streams
                .get_records()
                .shard_iterator(it)
                .send()
                .await
                .expect("get records");
            if got.records().is_empty() {
                break;
            }
            for r in got.records() {
                let Some(change) = r.dynamodb() else { continue };
                let mut body = Map::new();
                for (name, image) in [
                    ("Keys", change.keys()),
                    ("NewImage", change.new_image()),
                    ("OldImage", change.old_image()),
                ] {
                    if let Some(image) = image {
                        body.insert(name.to_owned(), item(image));
                    }
                }
                body.insert("SequenceNumber".into(), json!(change.sequence_number()));
                body.insert("SizeBytes".into(), json!(change.size_bytes()));
                body.insert(
                    "StreamViewType".into(),
                    json!(change.stream_view_type().map(|v| v.as_str())),
                );
                if let Some(t) = change.approximate_creation_date_time() {
                    body.insert("ApproximateCreationDateTime".into(), json!(t.as_secs_f64()));
                }
                out.push(json!({
                    "eventID": r.event_id(),
                    "eventName": r.event_name().map(|n| n.as_str()),
                    "eventVersion": r.event_version(),
                    "eventSource": "aws:dynamodb",
                    "awsRegion": region,
                    "dynamodb": body,
                    "eventSourceARN": stream_arn,
                }));
            }
            iterator = got.next_shard_iterator().map(str::to_owned);
        }
    }
    out
}

/// An SDK item in the wire form a stream record carries (`{"N":"1"}`, `B` base64).
fn item(image: &HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>) -> Value {
    Value::Object(
        image
            .iter()
            .map(|(k, v)| (k.clone(), attribute(v)))
            .collect(),
    )
}

fn attribute(v: &aws_sdk_dynamodbstreams::types::AttributeValue) -> Value {
    use aws_sdk_dynamodbstreams::types::AttributeValue as A;
    match v {
        A::S(s) => json!({"S": s}),
        A::N(n) => json!({"N": n}),
        A::B(b) => json!({"B": BASE64.encode(b.as_ref())}),
        A::Bool(b) => json!({"BOOL": b}),
        A::Null(b) => json!({"NULL": b}),
        A::Ss(v) => json!({"SS": v}),
        A::Ns(v) => json!({"NS": v}),
        A::Bs(v) => json!({"BS": v.iter().map(|b| BASE64.encode(b.as_ref())).collect::<Vec<_>>()}),
        A::L(v) => json!({"L": v.iter().map(attribute).collect::<Vec<_>>()}),
        A::M(m) => json!({"M": item(m)}),
        other => panic!("attribute type not mapped by the test: {other:?}"),
    }
}

/// Rows of a [`create_log_table`] table (`seq`, `note` = `row-<seq>`) as an Arrow IPC stream,
/// the body of an Arrow write or of an Arrow Kinesis record.
pub fn log_arrow_stream(seqs: &[i64]) -> Vec<u8> {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    let notes: Vec<String> = seqs.iter().map(|s| format!("row-{s}")).collect();
    let batch = RecordBatch::try_from_iter([
        (
            "seq",
            std::sync::Arc::new(Int64Array::from(seqs.to_vec())) as ArrayRef,
        ),
        (
            "note",
            std::sync::Arc::new(StringArray::from(notes)) as ArrayRef,
        ),
    ])
    .expect("batch");
    let mut out = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).expect("writer");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish");
    drop(writer);
    out
}

/// `seq BIGINT, note STRING`, a log table with one bucket.
pub async fn create_log_table(conn: &FlussConnection, database: &str, table: &str) -> TablePath {
    let path = TablePath::new(database.to_owned(), table.to_owned());
    let schema = Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("note", DataTypes::string())
        .build()
        .expect("schema");
    integration_tests::native::create_one_bucket_table(conn, &path, schema).await;
    path
}

/// Every (seq, note) of log table `path`, sorted, polled until `expected` rows arrived, then 1 s
/// more so that a row that should be absent has had time to show up.
pub async fn log_rows(
    conn: &FlussConnection,
    path: &TablePath,
    expected: usize,
) -> Vec<(i64, String)> {
    let mut rows = integration_tests::native::log_rows_in_order(conn, path, expected).await;
    rows.sort();
    rows
}
