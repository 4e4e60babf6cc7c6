//! `fluss-ingest` end to end: messages sent to real moto SQS queues, records put to a moto
//! Kinesis stream and items written to a moto DynamoDB table with a stream are read back through
//! the SDK, turned into the Lambda events AWS delivers, and invoked on the function through
//! `cargo lambda watch`; the rows are read back from the real cluster. Kafka (no broker here)
//! runs from the `events/` fixture. Partial batch failures name exactly the right records.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, StreamSpecification, StreamViewType,
};
use fluss::metadata::{DataTypes, Schema, TablePath};
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};

use crate::support::ingest::*;
use crate::support::*;

const DB: &str = "ingest_it";
const INVOKE_BOUND: Duration = Duration::from_secs(120);

/// The gateway's own lookup route (served by `cargo lambda watch` too) for key `key` of `path`.
async fn lookup_row(gw: &Gateway, path: &TablePath, key: Value) -> Value {
    let url = format!("{}/lookup", records_url("default", path));
    let a = gw.send("POST", &url, Some(&json!({"keys":[key]}))).await;
    assert_eq!(a.status, 200, "{a:?}");
    a.body["results"][0].clone()
}

struct Names {
    queue: String,
    fifo: String,
    stream: String,
    ddb_table: String,
    topic: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_every_source_land_in_fluss_with_truthful_partial_failures() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let u = unique_name("i");
    let names = Names {
        queue: format!("ingest-it-{u}").replace('_', "-"),
        fifo: format!("ingest-it-{u}.fifo").replace('_', "-"),
        stream: format!("ingest-it-{u}").replace('_', "-"),
        ddb_table: format!("IngestIt{u}"),
        topic: format!("ingest-topic-{u}").replace('_', "-"),
    };
    let events = create_log_table(&conn, DB, &format!("events_{u}")).await;
    let clicks = create_log_table(&conn, DB, &format!("clicks_{u}")).await;
    let kafka = create_log_table(&conn, DB, &format!("kafka_{u}")).await;
    let orders = TablePath::new(DB.to_owned(), format!("orders_{u}"));
    create_pk_table(&conn, &orders).await;
    let users = TablePath::new(DB.to_owned(), format!("users_{u}"));
    let users_schema = Schema::builder()
        .column("id", DataTypes::bigint())
        .column("name", DataTypes::string())
        .column("balance", DataTypes::decimal(38, 10))
        .column("big", DataTypes::bigint())
        .column("active", DataTypes::boolean())
        .column("tags", DataTypes::array(DataTypes::string()))
        .column(
            "attrs",
            DataTypes::map(DataTypes::string(), DataTypes::string()),
        )
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema");
    create_table(&conn, &users, users_schema).await;

    // Redelivery: a log table whose `note` takes each record's source coordinates, and a
    // primary-key table keyed by them.
    let redelivered = create_log_table(&conn, DB, &format!("redelivered_{u}")).await;
    let deduped = TablePath::new(DB.to_owned(), format!("deduped_{u}"));
    let deduped_schema = Schema::builder()
        .column("src", DataTypes::string())
        .column("seq", DataTypes::bigint())
        .primary_key(vec!["src"])
        .and_then(|b| b.build())
        .expect("schema");
    create_table(&conn, &deduped, deduped_schema).await;
    let aws = sdk_config(&stack).await;
    let region = stack.var("AWS_REGION").to_owned();
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let kinesis = aws_sdk_kinesis::Client::new(&aws);
    let ddb = aws_sdk_dynamodb::Client::new(&aws);
    let streams = aws_sdk_dynamodbstreams::Client::new(&aws);

    // moto resources.
    let queue_url = sqs
        .create_queue()
        .queue_name(&names.queue)
        .send()
        .await
        .expect("create queue")
        .queue_url()
        .expect("url")
        .to_owned();
    let fifo_url = sqs
        .create_queue()
        .queue_name(&names.fifo)
        .attributes(aws_sdk_sqs::types::QueueAttributeName::FifoQueue, "true")
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::ContentBasedDeduplication,
            "true",
        )
        .send()
        .await
        .expect("create fifo queue")
        .queue_url()
        .expect("url")
        .to_owned();
    let mut redelivery_urls = Vec::new();
    for queue in [format!("redeliver-{u}"), format!("dedupe-{u}")] {
        let url = sqs
            .create_queue()
            .queue_name(queue.replace('_', "-"))
            .send()
            .await
            .expect("create queue")
            .queue_url()
            .expect("url")
            .to_owned();
        redelivery_urls.push(url);
    }
    let standard_arn = queue_arn(&sqs, &queue_url).await;
    let fifo_arn = queue_arn(&sqs, &fifo_url).await;
    kinesis
        .create_stream()
        .stream_name(&names.stream)
        .shard_count(2)
        .send()
        .await
        .expect("create stream");
    let stream_arn = kinesis
        .describe_stream_summary()
        .stream_name(&names.stream)
        .send()
        .await
        .expect("describe stream")
        .stream_description_summary()
        .expect("summary")
        .stream_arn()
        .to_owned();
    let ddb_stream_arn = ddb
        .create_table()
        .table_name(&names.ddb_table)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("id")
                .key_type(KeyType::Hash)
                .build()
                .expect("key"),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("id")
                .attribute_type(ScalarAttributeType::N)
                .build()
                .expect("attribute"),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .expect("stream spec"),
        )
        .send()
        .await
        .expect("create dynamodb table")
        .table_description()
        .and_then(|d| d.latest_stream_arn())
        .expect("stream arn")
        .to_owned();

    // The function, configured as a deploy would be: routes by queue name, stream ARN, DynamoDB
    // table name and Kafka topic.
    let mut env = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in [
        (
            "FLUSS_GATEWAY__INGEST__ROUTES",
            "fifo,clicks,users,kafka,redeliver,dedupe".to_owned(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__REDELIVER__SOURCE",
            format!("redeliver-{u}").replace('_', "-"),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__REDELIVER__TABLE",
            format!("{DB}.{}", redelivered.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__REDELIVER__SOURCE_COLUMN",
            "note".to_owned(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__DEDUPE__SOURCE",
            format!("dedupe-{u}").replace('_', "-"),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__DEDUPE__TABLE",
            format!("{DB}.{}", deduped.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__DEDUPE__SOURCE_COLUMN",
            "src".to_owned(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__FIFO__SOURCE",
            names.fifo.clone(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__FIFO__TABLE",
            format!("{DB}.{}", orders.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__CLICKS__SOURCE",
            stream_arn.clone(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__CLICKS__TABLE",
            format!("{DB}.{}", clicks.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__USERS__SOURCE",
            names.ddb_table.clone(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__USERS__TABLE",
            format!("{DB}.{}", users.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__KAFKA__SOURCE",
            names.topic.clone(),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__KAFKA__TABLE",
            format!("{DB}.{}", kafka.table()),
        ),
        (
            "FLUSS_GATEWAY__INGEST__ROUTE__KAFKA__OPERATION",
            "append".to_owned(),
        ),
    ] {
        env.push_str(&format!("{k}={v}\n"));
    }
    let env_file = std::env::temp_dir().join(format!("ingest-{u}.env"));
    std::fs::write(&env_file, env).expect("env file");
    let gw = Gateway::watch_with(&env_file).await;

    let j = Journey {
        conn,
        gw,
        u,
        region,
        names,
        sqs,
        kinesis,
        ddb,
        streams,
        queue_url,
        fifo_url,
        standard_arn,
        fifo_arn,
        stream_arn,
        ddb_stream_arn,
        events,
        clicks,
        kafka,
        orders,
        users,
        redelivery_urls,
        redelivered,
        deduped,
    };
    let sent = sqs_standard_envelopes(&j).await;
    sqs_fifo_bare_rows(&j).await;
    let seq_of = kinesis_two_shards(&j).await;
    dynamodb_streams_cdc(&j).await;
    kafka_by_topic(&j).await;
    sqs_redelivery(&j).await;
    not_an_event(&j).await;

    // Poison records are logged once, by id and reason, never by payload.
    let log = std::fs::read_to_string(j.gw.log.as_ref().expect("watch log")).expect("log");
    drop(j);
    let _ = std::fs::remove_file(&env_file);
    assert!(
        !log.contains("secret-payload"),
        "a record payload reached the log"
    );
    let plain = integration_tests::logs::strip_ansi(&log);
    for id in [&sent[1].1, &sent[3].1, &seq_of["secret-payload-kin"]] {
        let field = format!("record={id} ");
        let lines = plain
            .lines()
            .filter(|l| l.contains("poison record") && l.contains(&field));
        assert_eq!(lines.count(), 1, "one poison line for {id}");
    }
}

/// What the steps of the journey share: the function under `cargo lambda watch`, the SDK
/// clients, the sources and the tables they are routed to.
struct Journey {
    conn: fluss::client::FlussConnection,
    gw: Gateway,
    u: String,
    region: String,
    names: Names,
    sqs: aws_sdk_sqs::Client,
    kinesis: aws_sdk_kinesis::Client,
    ddb: aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    queue_url: String,
    fifo_url: String,
    standard_arn: String,
    fifo_arn: String,
    stream_arn: String,
    ddb_stream_arn: String,
    events: TablePath,
    clicks: TablePath,
    kafka: TablePath,
    orders: TablePath,
    users: TablePath,
    /// The queues routed to `redelivered` and `deduped`.
    redelivery_urls: Vec<String>,
    redelivered: TablePath,
    deduped: TablePath,
}

/// SQS standard, envelopes: three appends, one poison body, one for a missing table.
/// Returns the message ids sent, in order.
async fn sqs_standard_envelopes(j: &Journey) -> Vec<(usize, String)> {
    let (conn, gw, sqs, region, u) = (&j.conn, &j.gw, &j.sqs, &j.region, &j.u);
    let (queue_url, standard_arn, events) = (j.queue_url.clone(), &j.standard_arn, &j.events);
    let mut sent = Vec::new();
    for (i, body) in [
        json!({"table": format!("{DB}.{}", events.table()), "append": {"seq": 1, "note": "one"}}).to_string(),
        "not json: secret-payload-7f3a".to_owned(),
        json!({"table": format!("{DB}.{}", events.table()), "append": {"seq": "9007199254740993", "note": "two"}}).to_string(),
        json!({"table": format!("{DB}.missing_{u}"), "append": {"seq": 3}}).to_string(),
        json!({"table": format!("{DB}.{}", events.table()), "append": {"seq": 3, "note": "three"}}).to_string(),
    ]
    .into_iter()
    .enumerate()
    {
        let id = sqs
            .send_message()
            .queue_url(&queue_url)
            .message_body(body)
            .send()
            .await
            .expect("send message")
            .message_id()
            .expect("id")
            .to_owned();
        sent.push((i, id));
    }
    let records = sqs_records(sqs, &queue_url, standard_arn, region).await;
    assert_eq!(records.len(), 5, "{records:?}");
    let answer = invoke(gw.addr, &json!({ "Records": records }), INVOKE_BOUND).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let failed: BTreeSet<String> = reported(&answer).iter().map(Value::to_string).collect();
    let want: BTreeSet<String> = [json!(sent[1].1), json!(sent[3].1)]
        .iter()
        .map(Value::to_string)
        .collect();
    assert_eq!(
        failed, want,
        "the poison and the missing-table message, by id: {answer:?}"
    );
    assert_eq!(
        log_rows(conn, events, 3).await,
        [
            (1, "one".to_owned()),
            (3, "three".to_owned()),
            (9_007_199_254_740_993, "two".to_owned())
        ]
    );
    sent
}

/// SQS FIFO, bare rows through the route (auto: upsert, the table has a primary key);
/// order kept per message group, so the later upsert of key 1 wins.
async fn sqs_fifo_bare_rows(j: &Journey) {
    let (conn, gw, sqs, region) = (&j.conn, &j.gw, &j.sqs, &j.region);
    let (fifo_url, fifo_arn, orders) = (j.fifo_url.clone(), &j.fifo_arn, &j.orders);
    for (group, row) in [
        ("g1", json!({"id": 1, "name": "first", "score": 1})),
        ("g2", json!({"id": 2, "name": "other"})),
        (
            "g1",
            json!({"id": 1, "name": "second", "score": "9007199254740993"}),
        ),
    ] {
        sqs.send_message()
            .queue_url(&fifo_url)
            .message_group_id(group)
            .message_body(row.to_string())
            .send()
            .await
            .expect("send fifo");
    }
    let records = sqs_records(sqs, &fifo_url, fifo_arn, region).await;
    assert_eq!(records.len(), 3, "{records:?}");
    let answer = invoke(gw.addr, &json!({ "Records": records }), INVOKE_BOUND).await;
    assert_eq!(reported(&answer), Vec::<Value>::new(), "{answer:?}");
    let expected = [
        (1, Some((Some("second"), Some(9_007_199_254_740_993)))),
        (2, Some((Some("other"), None))),
    ];
    assert_pk_rows(conn, orders, &expected).await;
}

/// Kinesis, two shards, bare rows to a log table. Shard 0 holds a row the codec refuses
/// between two good ones: it and everything after it in that shard are reported and absent;
/// shard 1 is written whole. Lambda delivers one shard per invocation, so do we.
/// Returns the sequence number of each record by its note.
async fn kinesis_two_shards(j: &Journey) -> BTreeMap<String, String> {
    let (conn, gw, kinesis, region, names) = (&j.conn, &j.gw, &j.kinesis, &j.region, &j.names);
    let (stream_arn, clicks) = (&j.stream_arn, &j.clicks);
    let shards = kinesis
        .list_shards()
        .stream_name(&names.stream)
        .send()
        .await
        .expect("list shards");
    let starts: Vec<String> = shards
        .shards()
        .iter()
        .map(|s| {
            s.hash_key_range()
                .expect("range")
                .starting_hash_key()
                .to_owned()
        })
        .collect();
    assert_eq!(starts.len(), 2);
    let mut seq_of = BTreeMap::new();
    for (shard, row) in [
        (0, json!({"seq": 10, "note": "a"})),
        (
            0,
            json!({"seq": "not-a-number", "note": "secret-payload-kin"}),
        ),
        (0, json!({"seq": 12, "note": "c"})),
        (1, json!({"seq": 20, "note": "d"})),
        (1, json!({"seq": 21, "note": "e"})),
    ] {
        let put = kinesis
            .put_record()
            .stream_name(&names.stream)
            .partition_key("k")
            .explicit_hash_key(&starts[shard])
            .data(aws_sdk_kinesis::primitives::Blob::new(row.to_string()))
            .send()
            .await
            .expect("put record");
        seq_of.insert(
            row["note"].as_str().unwrap().to_owned(),
            put.sequence_number().to_owned(),
        );
    }
    let by_shard = kinesis_records(kinesis, &names.stream, stream_arn, region).await;
    let mut reported_all = Vec::new();
    for (shard, records) in &by_shard {
        let answer = invoke(gw.addr, &json!({ "Records": records }), INVOKE_BOUND).await;
        assert_eq!(answer.status, 200, "{shard}: {answer:?}");
        reported_all.extend(reported(&answer));
    }
    assert_eq!(
        reported_all,
        [json!(seq_of["secret-payload-kin"]), json!(seq_of["c"])],
        "the refused record and the one after it in its shard"
    );
    assert_eq!(
        log_rows(conn, clicks, 3).await,
        [
            (10, "a".to_owned()),
            (20, "d".to_owned()),
            (21, "e".to_owned())
        ]
    );
    seq_of
}

/// DynamoDB Streams as CDC: two inserts, a modify, a remove; numbers exact.
async fn dynamodb_streams_cdc(j: &Journey) {
    let (gw, ddb, streams, region, names) = (&j.gw, &j.ddb, &j.streams, &j.region, &j.names);
    let (ddb_stream_arn, users) = (&j.ddb_stream_arn, &j.users);
    let put = |id: &str, name: &str| {
        ddb.put_item()
            .table_name(&names.ddb_table)
            .item("id", AttributeValue::N(id.to_owned()))
            .item("name", AttributeValue::S(name.to_owned()))
            .item(
                "balance",
                AttributeValue::N("12345678901234567890.0123456789".to_owned()),
            )
            .item("big", AttributeValue::N("9223372036854775807".to_owned()))
            .item("active", AttributeValue::Bool(true))
            .item(
                "tags",
                AttributeValue::Ss(vec!["a".to_owned(), "b".to_owned()]),
            )
            .item(
                "attrs",
                AttributeValue::M(
                    [("tier".to_owned(), AttributeValue::S("gold".to_owned()))].into(),
                ),
            )
            .send()
    };
    put("1", "ann").await.expect("put 1");
    put("2", "bob").await.expect("put 2");
    put("1", "ann-modified").await.expect("modify 1");
    ddb.delete_item()
        .table_name(&names.ddb_table)
        .key("id", AttributeValue::N("2".to_owned()))
        .send()
        .await
        .expect("delete 2");
    let records = dynamodb_records(streams, ddb_stream_arn, region).await;
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["eventName"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        ["INSERT", "INSERT", "MODIFY", "REMOVE"],
        "{records:?}"
    );
    let answer = invoke(gw.addr, &json!({ "Records": records }), INVOKE_BOUND).await;
    assert_eq!(reported(&answer), Vec::<Value>::new(), "{answer:?}");
    let one = lookup_row(gw, users, json!({"id": 1})).await;
    assert_eq!(one["found"], true, "{one}");
    let row = &one["row"];
    assert_eq!(row["name"], "ann-modified", "{one}");
    assert_eq!(row["balance"], "12345678901234567890.0123456789", "{one}");
    assert_eq!(row["big"], "9223372036854775807", "{one}");
    assert_eq!(row["active"], true, "{one}");
    let mut tags: Vec<&str> = row["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    tags.sort();
    assert_eq!(tags, ["a", "b"], "{one}");
    assert_eq!(row["attrs"], json!({"tier": "gold"}), "{one}");
    assert_eq!(
        lookup_row(gw, users, json!({"id": 2})).await["found"],
        false,
        "the REMOVE applied"
    );
}

/// Kafka (MSK shape) from the fixture: routed by topic; failures name partition + offset.
async fn kafka_by_topic(j: &Journey) {
    let (conn, gw, names, kafka) = (&j.conn, &j.gw, &j.names, &j.kafka);
    let fixture =
        std::fs::read_to_string(integration_tests::repo_root().join("events/ingest-kafka.json"))
            .expect("fixture")
            .replace("${TOPIC}", &names.topic);
    let event: Value = serde_json::from_str(&fixture).expect("fixture json");
    let answer = invoke(gw.addr, &event, INVOKE_BOUND).await;
    assert_eq!(
        reported(&answer),
        [json!({"partition": format!("{}-0", names.topic), "offset": 16})],
        "the tombstone, by partition and offset: {answer:?}"
    );
    let rows = log_rows(conn, kafka, 2).await;
    assert_eq!(
        rows,
        [(100, "kafka-a".to_owned()), (200, "kafka-b".to_owned())]
    );
}

/// SQS delivers at least once: the same batch invoked twice (a redelivery after a timeout or a
/// partial failure) writes its rows twice. With a route's `source-column`, every row carries its
/// message id: in a log table the copies are told apart downstream (same id twice), and in a
/// primary-key table keyed by it the second delivery overwrites the first (one row per message).
async fn sqs_redelivery(j: &Journey) {
    let (conn, gw, sqs, region) = (&j.conn, &j.gw, &j.sqs, &j.region);
    for (url, table) in j.redelivery_urls.iter().zip([&j.redelivered, &j.deduped]) {
        for seq in [1, 2, 3] {
            sqs.send_message()
                .queue_url(url)
                .message_body(json!({ "seq": seq }).to_string())
                .send()
                .await
                .expect("send");
        }
        let arn = queue_arn(sqs, url).await;
        let records = sqs_records(sqs, url, &arn, region).await;
        assert_eq!(records.len(), 3, "{records:?}");
        let ids: BTreeMap<i64, String> = records
            .iter()
            .map(|r| {
                let body: Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
                (
                    body["seq"].as_i64().unwrap(),
                    r["messageId"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        for delivery in ["first", "redelivered"] {
            let answer = invoke(gw.addr, &json!({ "Records": records }), INVOKE_BOUND).await;
            assert_eq!(
                reported(&answer),
                Vec::<Value>::new(),
                "{delivery}: {answer:?}"
            );
        }
        if table == &j.redelivered {
            // Six rows, each message id twice: removable downstream by (note) alone.
            let rows = log_rows(conn, table, 6).await;
            let want: Vec<(i64, String)> = ids
                .iter()
                .flat_map(|(seq, id)| [(*seq, id.clone()), (*seq, id.clone())])
                .collect();
            assert_eq!(rows, want, "each row twice, each with its message id");
        } else {
            for (seq, id) in &ids {
                let found = lookup_row(gw, table, json!({ "src": id })).await;
                assert_eq!(found["found"], true, "{found}");
                assert_eq!(found["row"]["seq"], json!(seq.to_string()), "{found}");
            }
            // One row per message: the changelog holds the upsert twice, the table once.
            let absent = lookup_row(gw, table, json!({ "src": "not-a-message" })).await;
            assert_eq!(absent["found"], false);
        }
    }
}

/// Not an event this function reads: the invocation fails (Lambda retries, alarms fire).
async fn not_an_event(j: &Journey) {
    let gw = &j.gw;
    let answer = invoke(
        gw.addr,
        &json!({"Records":[{"eventSource":"aws:s3"}]}),
        INVOKE_BOUND,
    )
    .await;
    assert_ne!(answer.status, 200, "{answer:?}");
    assert!(answer.body.to_string().contains("aws:s3"), "{answer:?}");
}

async fn queue_arn(sqs: &aws_sdk_sqs::Client, url: &str) -> String {
    sqs.get_queue_attributes()
        .queue_url(url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("queue attributes")
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
        .expect("queue arn")
        .clone()
}

/// With `gateway.ingest.poison-records=skip`, a poison record is acknowledged (not reported),
/// logged by id and does not hold its shard back: the records after it are written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_poison_records_are_acknowledged_and_do_not_hold_their_shard() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let u = unique_name("s");
    let table = create_log_table(&conn, DB, &format!("skip_{u}")).await;
    let stream_arn = format!("arn:aws:kinesis:eu-west-1:123456789012:stream/skip-{u}");
    let (gw, env_file) = watch_with_settings(
        &u,
        &[
            ("FLUSS_GATEWAY__INGEST__POISON_RECORDS", "skip".to_owned()),
            ("FLUSS_GATEWAY__INGEST__ROUTES", "skip".to_owned()),
            (
                "FLUSS_GATEWAY__INGEST__ROUTE__SKIP__SOURCE",
                stream_arn.clone(),
            ),
            (
                "FLUSS_GATEWAY__INGEST__ROUTE__SKIP__TABLE",
                format!("{DB}.{}", table.table()),
            ),
        ],
    )
    .await;
    let record =
        |seq: &str, data: &[u8]| kinesis_record(&stream_arn, "shardId-000000000000", seq, data);
    let event = json!({"Records": [
        record("101", br#"{"seq":1,"note":"before"}"#),
        record("102", br#"{"seq":"x","note":"secret-payload-skip"}"#),
        record("103", b"not json"),
        record("104", br#"{"seq":4,"note":"after"}"#),
    ]});
    let answer = invoke(gw.addr, &event, INVOKE_BOUND).await;
    assert_eq!(reported(&answer), Vec::<Value>::new(), "{answer:?}");
    assert_eq!(
        log_rows(&conn, &table, 2).await,
        [(1, "before".to_owned()), (4, "after".to_owned())]
    );
    let log = std::fs::read_to_string(gw.log.as_ref().expect("watch log")).expect("log");
    drop(gw);
    let _ = std::fs::remove_file(&env_file);
    let plain = integration_tests::logs::strip_ansi(&log);
    for id in ["102", "103"] {
        let field = format!("record={id} ");
        let n = plain
            .lines()
            .filter(|l| {
                l.contains("poison record") && l.contains(&field) && l.contains("skipped=true")
            })
            .count();
        assert_eq!(n, 1, "one skipped-poison line for {id}");
    }
    assert!(
        !plain.contains("secret-payload"),
        "a record payload reached the log"
    );
}

/// [arrow] A Kinesis route with `format = arrow`: each record's payload an Arrow IPC stream of
/// many rows, written as the write route writes an Arrow body. Through `cargo lambda watch`: two
/// streams of 3 and 2 rows land (read straight from Fluss); a record that is not an Arrow
/// stream is reported as poison, and the shard's records after it are not written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrow_records_of_a_kinesis_route_land_row_for_row() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let u = unique_name("a");
    let table = create_log_table(&conn, DB, &format!("arrow_{u}")).await;
    let stream_arn = format!("arn:aws:kinesis:eu-west-1:123456789012:stream/arrow-{u}");
    let (gw, env_file) = watch_with_settings(
        &u,
        &[
            ("FLUSS_GATEWAY__INGEST__ROUTES", "frames".to_owned()),
            (
                "FLUSS_GATEWAY__INGEST__ROUTE__FRAMES__SOURCE",
                stream_arn.clone(),
            ),
            (
                "FLUSS_GATEWAY__INGEST__ROUTE__FRAMES__TABLE",
                format!("{DB}.{}", table.table()),
            ),
            (
                "FLUSS_GATEWAY__INGEST__ROUTE__FRAMES__FORMAT",
                "arrow".to_owned(),
            ),
        ],
    )
    .await;
    let stream = log_arrow_stream;
    let record =
        |shard: &str, seq: &str, data: &[u8]| kinesis_record(&stream_arn, shard, seq, data);
    let event = json!({"Records": [
        record("shardId-000000000000", "201", &stream(&[1, 2, 3])),
        record("shardId-000000000001", "301", &stream(&[10, 11])),
        record("shardId-000000000001", "302", b"{\"seq\": 12}"),
        record("shardId-000000000001", "303", &stream(&[13])),
    ]});
    let answer = invoke(gw.addr, &event, INVOKE_BOUND).await;
    // The JSON record in the Arrow route is poison; the shard's next record waits behind it.
    assert_eq!(
        reported(&answer),
        vec![json!("302"), json!("303")],
        "{answer:?}"
    );
    let rows = log_rows(&conn, &table, 5).await;
    let want: Vec<(i64, String)> = [1, 2, 3, 10, 11]
        .into_iter()
        .map(|s| (s, format!("row-{s}")))
        .collect();
    assert_eq!(rows, want);
    drop(gw);
    let _ = std::fs::remove_file(&env_file);
}

/// `cargo lambda watch` over the stack's settings and `settings`, in an env file of its own
/// (named after `u`; the caller removes it).
async fn watch_with_settings(
    u: &str,
    settings: &[(&str, String)],
) -> (Gateway, std::path::PathBuf) {
    let mut env = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in settings {
        env.push_str(&format!("{k}={v}\n"));
    }
    let env_file = std::env::temp_dir().join(format!("ingest-{u}.env"));
    std::fs::write(&env_file, env).expect("env file");
    (Gateway::watch_with(&env_file).await, env_file)
}

/// A Kinesis record of `stream_arn` as Lambda delivers it, `data` base64-encoded.
fn kinesis_record(stream_arn: &str, shard: &str, seq: &str, data: &[u8]) -> Value {
    json!({"kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "k", "sequenceNumber": seq,
            "data": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, data),
            "approximateArrivalTimestamp": 1796227200.0},
        "eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": format!("{shard}:{seq}"),
        "eventName": "aws:kinesis:record", "invokeIdentityArn": "arn:aws:iam::123456789012:role/x",
        "awsRegion": "eu-west-1", "eventSourceARN": stream_arn})
}
