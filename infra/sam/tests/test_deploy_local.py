"""`make deploy-local`: the translated template stood up in moto (server mode). The resources are
read back through the AWS APIs and compared with what the template says."""

import ast
import json

import pytest

import deploy_local as dl


@pytest.fixture(scope="module")
def stack():
    proc, endpoint = dl.start_moto()
    try:
        result = dl.deploy(endpoint, dl.parse_params([]))
        yield endpoint, result
    finally:
        proc.terminate()
        proc.wait()


def functions(endpoint, result):
    lam = dl.client("lambda", endpoint)
    return {n: lam.get_function(FunctionName=result["refs"][n])["Configuration"]
            for n in dl.function_binaries(dl.load_template())}


def test_the_stack_is_complete(stack):
    endpoint, result = stack
    assert result["stack"]["StackStatus"] == "CREATE_COMPLETE"
    print(dl.summary(endpoint, result))


def test_functions_as_the_template_says(stack):
    endpoint, result = stack
    fns = functions(endpoint, result)
    assert len(fns) == 7
    keys_secret = result["refs"]["ApiKeysSecret"]
    for name, f in fns.items():
        assert f["Runtime"] == "provided.al2023" and f["Handler"] == "bootstrap", name
        assert f["Architectures"] == ["x86_64"], name
        env = f["Environment"]["Variables"]
        assert env["FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS"] == "fluss.internal:9123"
        assert env["FLUSS_GATEWAY__SECURITY__SECRET_ID"] == keys_secret
        assert env["FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ID"] == result["refs"]["FlussServiceSecret"]
        expected_mode = "api-key" if name == "AuthorizerFunction" else "authorizer"
        assert env["FLUSS_GATEWAY__SECURITY__AUTHENTICATION"] == expected_mode, name
        assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env, "export is off without OtlpEndpoint"
    assert fns["WriteFunction"]["Timeout"] == 29 and fns["WriteFunction"]["MemorySize"] == 256
    assert fns["WriteFunction"]["Environment"]["Variables"]["FLUSS_GATEWAY__REST__REQUEST_TIMEOUT"] == "29s"
    assert fns["AuthorizerFunction"]["Timeout"] == 10
    ingest = fns["IngestFunction"]
    assert ingest["Timeout"] == 60 and ingest["MemorySize"] == 512
    env = ingest["Environment"]["Variables"]
    queue_arn = "arn:aws:sqs:us-east-1:123456789012:" + result["refs"]["IngestQueue"].rsplit("/", 1)[1]
    assert env["FLUSS_GATEWAY__INGEST__ROUTES"] == "queue"
    assert env["FLUSS_GATEWAY__INGEST__ROUTE__QUEUE__SOURCE"] == queue_arn
    assert env["FLUSS_GATEWAY__INGEST__ROUTE__QUEUE__TABLE"] == "demo.events"
    assert env["FLUSS_GATEWAY__INGEST__TIMEOUT"] == "60s"
    roles = {n: f["Role"].rsplit("/", 1)[1] for n, f in fns.items()}
    assert roles["AuthorizerFunction"] == result["refs"]["AuthorizerRole"]
    assert roles["IngestFunction"] == result["refs"]["IngestRole"]
    for n in ("DdlFunction", "LookupFunction", "ConfigFunction", "OtlpFunction"):
        assert roles[n] == result["refs"]["RouteFunctionRole"], n
    assert roles["WriteFunction"] == result["refs"]["WriteFunctionRole"]
    write_env = fns["WriteFunction"]["Environment"]["Variables"]
    assert write_env["FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE"] == result["refs"]["IdempotencyTable"]
    assert write_env["FLUSS_GATEWAY__REST__IDEMPOTENCY__TTL"] == "24h"
    assert "FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE" not in fns["DdlFunction"]["Environment"]["Variables"]


def role_statements(endpoint, role):
    iam = dl.client("iam", endpoint)
    out = {}
    for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
        doc = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
        if isinstance(doc, str):
            # moto keeps a document created by CloudFormation as Python's repr of it.
            doc = json.loads(doc) if doc.startswith('{"') else ast.literal_eval(doc)
        for st in doc["Statement"]:
            out[st["Sid"]] = st
    return out


def as_list(v):
    return v if isinstance(v, list) else [v]


def test_roles_grant_only_their_secrets_and_sources(stack):
    endpoint, result = stack
    refs = result["refs"]
    keys, service = refs["ApiKeysSecret"], refs["FlussServiceSecret"]
    identities = "arn:aws:secretsmanager:us-east-1:123456789012:secret:fluss-gateway/identities/*"

    route = role_statements(endpoint, refs["RouteFunctionRole"])
    assert set(route) == {"Logs", "Secrets"}
    assert route["Secrets"]["Action"] in ("secretsmanager:GetSecretValue", ["secretsmanager:GetSecretValue"])
    assert sorted(as_list(route["Secrets"]["Resource"])) == sorted([keys, identities, service])
    assert len(as_list(route["Logs"]["Resource"])) == 4, "ddl, lookup, config, otlp"

    write = role_statements(endpoint, refs["WriteFunctionRole"])
    assert set(write) == {"Logs", "Secrets", "Idempotency"}, "only the write function keeps keys"
    assert sorted(as_list(write["Idempotency"]["Action"])) == ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem"]
    table = f"arn:aws:dynamodb:us-east-1:123456789012:table/{refs['IdempotencyTable']}"
    assert as_list(write["Idempotency"]["Resource"]) == [table]
    assert sorted(as_list(write["Secrets"]["Resource"])) == sorted([keys, identities, service])

    authorizer = role_statements(endpoint, refs["AuthorizerRole"])
    assert as_list(authorizer["Secrets"]["Resource"]) == [keys], "the authorizer reads the key document only"

    ingest = role_statements(endpoint, refs["IngestRole"])
    assert set(ingest) == {"Logs", "Secrets", "Queue"}, "no stream source configured: no stream grant"
    queue = refs["IngestQueue"].rsplit("/", 1)[1]
    assert as_list(ingest["Queue"]["Resource"]) == [f"arn:aws:sqs:us-east-1:123456789012:{queue}"]
    for role in (route, write, authorizer, ingest):
        for st in role.values():
            assert "*" not in as_list(st["Resource"])


def test_the_idempotency_table_has_its_key_and_ttl(stack, template):
    endpoint, result = stack
    ddb = dl.client("dynamodb", endpoint)
    table = ddb.describe_table(TableName=result["refs"]["IdempotencyTable"])["Table"]
    assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    # moto's CloudFormation does not apply TimeToLiveSpecification: checked in the template.
    props = template["Resources"]["IdempotencyTable"]["Properties"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_queue_dead_letter_queue_and_mapping(stack):
    endpoint, result = stack
    refs = result["refs"]
    sqs = dl.client("sqs", endpoint)
    attrs = sqs.get_queue_attributes(QueueUrl=refs["IngestQueue"], AttributeNames=["All"])["Attributes"]
    redrive = json.loads(attrs["RedrivePolicy"])
    dlq = refs["IngestQueueDlq"].rsplit("/", 1)[1]
    assert redrive["deadLetterTargetArn"] == f"arn:aws:sqs:us-east-1:123456789012:{dlq}"
    assert int(redrive["maxReceiveCount"]) == 5
    assert attrs["VisibilityTimeout"] == "360"
    lam = dl.client("lambda", endpoint)
    mapping = lam.get_event_source_mapping(UUID=refs["IngestQueueMapping"])
    assert mapping["EventSourceArn"] == attrs["QueueArn"]
    assert mapping["FunctionArn"].endswith(":" + refs["IngestFunction"])
    assert mapping["BatchSize"] == 100


def test_secrets_exist(stack):
    endpoint, result = stack
    sm = dl.client("secretsmanager", endpoint)
    keys = sm.get_secret_value(SecretId=result["refs"]["ApiKeysSecret"])["SecretString"]
    assert json.loads(keys) == {"version": 1, "keys": []}
    service = sm.get_secret_value(SecretId=result["refs"]["FlussServiceSecret"])["SecretString"]
    assert len(service) == 32 and service.isalnum()


def test_api_routes_authorizer_and_stage(stack, router):
    endpoint, result = stack
    refs = result["refs"]
    gw = dl.client("apigatewayv2", endpoint)
    api = refs["Api"]
    routes = {r["RouteKey"]: r for r in gw.get_routes(ApiId=api)["Items"]}
    assert set(routes) == {f"ANY {p}" for p in router} | {"$default"}
    fns = functions(endpoint, result)
    arn_of = {dl.function_binaries(dl.load_template())[n]: f["FunctionArn"] for n, f in fns.items()}
    authorizer_ids = set()
    for key, r in routes.items():
        path = key.split(" ", 1)[-1]
        integration = gw.get_integration(ApiId=api, IntegrationId=r["Target"].split("/")[1])
        binary = "fluss-ddl" if key == "$default" else router[path]
        assert f"/functions/{arn_of[binary]}/invocations" in integration["IntegrationUri"], key
        assert integration["PayloadFormatVersion"] == "2.0"
        if path in ("/health", "/ready", "$default"):
            assert r["AuthorizationType"] == "NONE", key
        else:
            assert r["AuthorizationType"] == "CUSTOM", key
            authorizer_ids.add(r["AuthorizerId"])
    assert len(authorizer_ids) == 1
    a = gw.get_authorizer(ApiId=api, AuthorizerId=authorizer_ids.pop())
    assert a["AuthorizerType"] == "REQUEST" and a["EnableSimpleResponses"] is True
    assert a["IdentitySource"] == ["$request.header.x-api-key"]
    assert a["AuthorizerResultTtlInSeconds"] == 60
    assert f"/functions/{arn_of['fluss-authorizer']}/invocations" in a["AuthorizerUri"]
    stage = gw.get_stage(ApiId=api, StageName="$default")
    assert stage["AutoDeploy"] is True
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] == 500
    assert stage["DefaultRouteSettings"]["ThrottlingBurstLimit"] == 1000
    assert refs["AccessLogs"] in stage["AccessLogSettings"]["DestinationArn"]
    fmt = json.loads(stage["AccessLogSettings"]["Format"])
    assert "requestId" in fmt and not any("header" in v for v in fmt.values())


def test_api_gateway_may_invoke_each_routed_function(stack):
    endpoint, result = stack
    lam = dl.client("lambda", endpoint)
    for n in ("DdlFunction", "WriteFunction", "LookupFunction", "ConfigFunction", "OtlpFunction", "AuthorizerFunction"):
        policy = json.loads(lam.get_policy(FunctionName=result["refs"][n])["Policy"])
        principals = {st["Principal"]["Service"] for st in policy["Statement"]}
        assert principals == {"apigateway.amazonaws.com"}, n
        for st in policy["Statement"]:
            assert result["refs"]["Api"] in st["Condition"]["ArnLike"]["AWS:SourceArn"], n


def test_alarms_and_dashboard(stack):
    endpoint, result = stack
    cw = dl.client("cloudwatch", endpoint)
    alarms = {a["AlarmName"].rsplit("-", 1)[1]: a for a in cw.describe_alarms()["MetricAlarms"]}
    assert set(alarms) == {"Api5xxAlarm", "ThrottlesAlarm", "WriteP99Alarm", "IngestDlqAlarm"}
    assert alarms["Api5xxAlarm"]["MetricName"] == "5xx"
    assert {"Name": "ApiId", "Value": result["refs"]["Api"]} in alarms["Api5xxAlarm"]["Dimensions"]
    assert alarms["WriteP99Alarm"]["ExtendedStatistic"] == "p99"
    dlq = result["refs"]["IngestQueueDlq"].rsplit("/", 1)[1]
    assert alarms["IngestDlqAlarm"]["Dimensions"] == [{"Name": "QueueName", "Value": dlq}]
    boards = cw.list_dashboards()["DashboardEntries"]
    assert len(boards) == 1
    body = json.loads(cw.get_dashboard(DashboardName=boards[0]["DashboardName"])["DashboardBody"])
    assert len(body["widgets"]) == 5


def test_without_the_queue_nothing_of_it_is_created():
    proc, endpoint = dl.start_moto()
    try:
        result = dl.deploy(endpoint, dl.parse_params(["CreateIngestQueue=false", "IngestQueueTable="]))
        assert "IngestQueue" not in result["refs"] and "IngestQueueMapping" not in result["refs"]
        assert dl.client("sqs", endpoint).list_queues().get("QueueUrls", []) == []
        ingest = role_statements(endpoint, result["refs"]["IngestRole"])
        assert set(ingest) == {"Logs", "Secrets"}
        env = functions(endpoint, result)["IngestFunction"]["Environment"]["Variables"]
        assert not any(k.startswith("FLUSS_GATEWAY__INGEST__ROUTE") for k in env)
    finally:
        proc.terminate()
        proc.wait()


def test_each_function_starts_with_the_environment_the_template_gives_it(stack):
    """Each function binary, given the environment moto holds for it (the secrets in moto), gets
    through its configuration and init: the gateway refuses an unknown or inconsistent
    `FLUSS_GATEWAY__` variable with exit code 2 before serving. No runtime API listens on
    AWS_LAMBDA_RUNTIME_API here, so a function that started stops at its first `next` call."""
    import os
    import socket
    import subprocess
    from pathlib import Path

    endpoint, result = stack
    target = Path(os.environ.get("CARGO_TARGET_DIR", dl.ROOT / "target")) / "debug"
    binaries = dl.function_binaries(dl.load_template())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for name, f in functions(endpoint, result).items():
        env = dict(f["Environment"]["Variables"])
        env.update(
            PATH=os.environ["PATH"],
            AWS_ENDPOINT_URL=endpoint, AWS_REGION="us-east-1",
            AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
            AWS_LAMBDA_RUNTIME_API=f"127.0.0.1:{closed}",
            AWS_LAMBDA_FUNCTION_NAME=f["FunctionName"], AWS_LAMBDA_FUNCTION_MEMORY_SIZE=str(f["MemorySize"]),
            AWS_LAMBDA_FUNCTION_VERSION="$LATEST", AWS_LAMBDA_LOG_FORMAT="JSON",
        )
        proc = subprocess.run([str(target / binaries[name])], env=env, capture_output=True, text=True, timeout=60)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 2 and "invalid configuration" not in out, f"{name}: {out[-2000:]}"
        assert "serving failed" in out, f"{name} did not reach the runtime API: {out[-2000:]}"
        print(name, proc.returncode, out.strip().splitlines()[-1][:300])
