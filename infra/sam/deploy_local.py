#!/usr/bin/env python3
"""Stand the SAM template up offline (`make deploy-local`).

The template is translated by the SAM translator (aws-sam-translator, as `sam deploy` would have
CloudFormation do) and created as a stack in moto's CloudFormation. Each function's code is the
`bootstrap` that `make package` built (`.aws-sam/build/<Function>/bootstrap`), else the debug
binary of the same name, uploaded to moto's S3 as `sam package` would.

moto's CloudFormation lacks some resource types of the template (`MISSING_IN_MOTO`): it skips them
with a warning and cannot resolve references to them. Those resources are created here through
moto's own service APIs (Secrets Manager, API Gateway v2, CloudWatch) from the template's
properties, before the stack for those the stack refers to (secrets, the API's id), after it for
those referring to the stack (the API's authorizer, integrations and routes from its OpenAPI body,
the stage, the alarms). docs/deploy.md lists them.

Usage:
  deploy_local.py translate [--out FILE] [--param K=V ...]   print / write the CloudFormation template
  deploy_local.py deploy [--endpoint URL] [--param K=V ...]   create the stack (own moto server
                                                              unless --endpoint) and print what exists
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import boto3
from samcli.yamlhelper import yaml_parse
from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
from samtranslator.translator.transform import transform

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TEMPLATE = HERE / "template.yaml"
REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
CODE_BUCKET = "fluss-gateway-local-artifacts"
STACK = "fluss-gateway-local"
# Parameters of the offline stack: the required one, and a queue route so that the ingest
# function's route variables are exercised.
DEFAULT_PARAMS = {
    "FlussBootstrapServers": "fluss.internal:9123",
    "FlussServiceAccount": "gateway",
    "IngestQueueTable": "demo.events",
}
MISSING_IN_MOTO = (
    "AWS::SecretsManager::Secret",
    "AWS::ApiGatewayV2::Api",
    "AWS::ApiGatewayV2::Stage",
    "AWS::CloudWatch::Alarm",
)


def load_template() -> dict[str, Any]:
    """The SAM template with short-form intrinsics (`!Ref`) turned into their long form."""
    return yaml_parse(TEMPLATE.read_text())


def function_binaries(template: dict[str, Any]) -> dict[str, str]:
    """Logical id of each function -> the cargo binary it is built from."""
    return {
        name: res["Metadata"]["BuildProperties"]["Binary"]
        for name, res in template["Resources"].items()
        if res["Type"] == "AWS::Serverless::Function"
    }


def client(service: str, endpoint: str):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def translate(params: dict[str, str], endpoint: str | None) -> dict[str, Any]:
    """The CloudFormation template `sam deploy` would submit, code pointing at CODE_BUCKET."""
    template = load_template()
    for name in function_binaries(template):
        template["Resources"][name]["Properties"]["CodeUri"] = {
            "Bucket": CODE_BUCKET,
            "Key": f"{name}.zip",
        }
    # AWS-managed policy names would be resolved through IAM; the template uses ARNs only, so
    # the loader is never asked without an endpoint.
    loader = ManagedPolicyLoader(client("iam", endpoint) if endpoint else None)
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    return transform(template, dict(params), loader, passthrough_metadata=True)


# ------------------------------------------------------------------ intrinsic functions
class Resolver:
    """Evaluates the intrinsic functions of the translated template for the resources created
    outside moto's CloudFormation: parameters, conditions, and the physical ids and attributes
    of resources already created (the stack's or ours)."""

    def __init__(self, template: dict[str, Any], params: dict[str, str]):
        self.template = template
        self.params = {
            name: str(params.get(name, spec.get("Default", "")))
            for name, spec in template.get("Parameters", {}).items()
        }
        self.params.update(
            {
                "AWS::Region": REGION,
                "AWS::AccountId": ACCOUNT,
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackName": STACK,
            }
        )
        self.refs: dict[str, str] = {}
        self.attrs: dict[tuple[str, str], str] = {}
        self._conditions: dict[str, bool] = {}

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            self._conditions[name] = bool(self.value(self.template["Conditions"][name]))
        return self._conditions[name]

    def active(self, resource: dict[str, Any]) -> bool:
        return "Condition" not in resource or self.condition(resource["Condition"])

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [x for x in (self.value(x) for x in v) if x is not NO_VALUE]
        if not isinstance(v, dict):
            return v
        if len(v) == 1:
            (key, arg), = v.items()
            if key == "Ref":
                if arg == "AWS::NoValue":
                    return NO_VALUE
                if arg in self.params:
                    return self.params[arg]
                return self.refs[arg]
            if key == "Fn::GetAtt":
                name, attr = arg if isinstance(arg, list) else arg.split(".", 1)
                return self.attrs[(name, attr)]
            if key == "Fn::If":
                cond, yes, no = arg
                return self.value(yes if self.condition(cond) else no)
            if key == "Fn::Equals":
                a, b = (self.value(x) for x in arg)
                return str(a) == str(b)
            if key == "Fn::Not":
                return not self.value(arg[0])
            if key == "Fn::And":
                return all(self.value(x) for x in arg)
            if key == "Fn::Or":
                return any(self.value(x) for x in arg)
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::Join":
                sep, items = arg
                return sep.join(str(x) for x in self.value(items))
            if key == "Fn::Select":
                index, items = arg
                return self.value(items)[int(self.value(index))]
            if key == "Fn::Split":
                sep, text = arg
                return str(self.value(text)).split(sep)
            if key == "Fn::Sub":
                text, local = (arg, {}) if isinstance(arg, str) else arg
                local = {k: self.value(x) for k, x in local.items()}
                return re.sub(r"\$\{([^}!]+)\}", lambda m: str(self._sub(m.group(1), local)), text)
        out = {k: self.value(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x is not NO_VALUE}

    def _sub(self, name: str, local: dict[str, Any]) -> Any:
        if name in local:
            return local[name]
        if "." in name:
            res, attr = name.split(".", 1)
            return self.attrs[(res, attr)]
        return self.value({"Ref": name})


NO_VALUE = object()


def references(v: Any) -> set[str]:
    """Logical ids a template fragment refers to (Ref, GetAtt, ${…} of Fn::Sub)."""
    found: set[str] = set()
    if isinstance(v, list):
        for x in v:
            found |= references(x)
    elif isinstance(v, dict):
        for key, arg in v.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add((arg if isinstance(arg, list) else arg.split("."))[0])
            elif key == "Fn::Sub":
                text = arg if isinstance(arg, str) else arg[0]
                found |= {m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
                if not isinstance(arg, str):
                    found |= references(arg[1])
            else:
                found |= references(arg)
    return found


def fold(v: Any, r: Resolver) -> Any:
    """Decides every `Fn::If` and drops `AWS::NoValue`, as CloudFormation does: moto's
    CloudFormation keeps a `null` for `AWS::NoValue` inside lists (an IAM policy's resources)."""
    if isinstance(v, list):
        return [x for x in (fold(x, r) for x in v) if x is not NO_VALUE]
    if not isinstance(v, dict):
        return v
    if v.keys() == {"Fn::If"}:
        cond, yes, no = v["Fn::If"]
        return fold(yes if r.condition(cond) else no, r)
    if v == {"Ref": "AWS::NoValue"}:
        return NO_VALUE
    out = {k: fold(x, r) for k, x in v.items()}
    return {k: x for k, x in out.items() if x is not NO_VALUE}


def substitute(v: Any, literal: dict[str, str]) -> Any:
    """Replaces references to the resources created outside the stack by their physical ids."""
    if isinstance(v, list):
        return [substitute(x, literal) for x in v]
    if not isinstance(v, dict):
        return v
    if v.keys() == {"Ref"} and v["Ref"] in literal:
        return literal[v["Ref"]]
    if v.keys() == {"Fn::Sub"}:
        arg = v["Fn::Sub"]
        text, local = (arg, None) if isinstance(arg, str) else arg
        for name, physical in literal.items():
            text = text.replace("${" + name + "}", physical)
        return {"Fn::Sub": text if local is None else [text, substitute(local, literal)]}
    return {k: substitute(x, literal) for k, x in v.items()}


# ------------------------------------------------------------------ deployment
_ZIPS: dict[tuple[Path, float], bytes] = {}


def zipped(path: Path) -> bytes:
    """`path` as a function zip (`bootstrap`, executable); kept for the next deployment of the
    same process. A debug build (135 MB, two thirds of it debug info) is zipped without its
    debug info: deflating six of them whole took 22 of the deployment's 27 s."""
    key = (path, path.stat().st_mtime)
    if key not in _ZIPS:
        code = None
        if path.parent.name == "debug":
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "bootstrap"
                done = subprocess.run(
                    ["objcopy", "--strip-debug", str(path), str(out)], capture_output=True
                )
                if done.returncode == 0:
                    code = out.read_bytes()
        if code is None:
            code = path.read_bytes()
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            info = zipfile.ZipInfo("bootstrap")
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, code)
        _ZIPS[key] = buf.getvalue()
    return _ZIPS[key]


def upload_code(endpoint: str, binaries: dict[str, str]) -> dict[str, str]:
    """Zips each function's bootstrap into moto's S3; returns where each came from."""
    s3 = client("s3", endpoint)
    s3.create_bucket(Bucket=CODE_BUCKET)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    origin = {}
    for name, binary in binaries.items():
        candidates = [ROOT / ".aws-sam" / "build" / name / "bootstrap", target / "debug" / binary]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            sys.exit(f"no build of {binary}: run `make package` or `cargo build --bins` first")
        s3.put_object(Bucket=CODE_BUCKET, Key=f"{name}.zip", Body=zipped(path))
        origin[name] = str(path)
    return origin


def create_before(endpoint: str, r: Resolver, name: str, res: dict[str, Any]) -> None:
    """Creates a resource the stack refers to and moto's CloudFormation cannot."""
    if res["Type"] == "AWS::SecretsManager::Secret":
        props = r.value(res.get("Properties", {}))
        args = {"Name": f"{STACK}/{name}", "Description": props.get("Description", "")}
        if "SecretString" in props:
            args["SecretString"] = props["SecretString"]
        else:
            gen = props.get("GenerateSecretString", {})
            args["SecretString"] = client("secretsmanager", endpoint).get_random_password(
                PasswordLength=int(gen.get("PasswordLength", 32)),
                ExcludePunctuation=bool(gen.get("ExcludePunctuation", False)),
            )["RandomPassword"]
        if "KmsKeyId" in props:
            args["KmsKeyId"] = props["KmsKeyId"]
        arn = client("secretsmanager", endpoint).create_secret(**args)["ARN"]
        r.refs[name] = arn
    elif res["Type"] == "AWS::ApiGatewayV2::Api":
        # The shell only: its id is in the stack (permissions' SourceArn, outputs); routes,
        # integrations and the authorizer come from its body once the functions exist.
        body = res["Properties"]["Body"]
        api = client("apigatewayv2", endpoint).create_api(
            Name=str(r.value(body["info"]["title"])),
            ProtocolType="HTTP",
            Description=str(r.value(body["info"].get("description", ""))),
        )
        r.refs[name] = api["ApiId"]
    else:
        raise RuntimeError(f"{name}: {res['Type']} is created after the stack")


def create_after(endpoint: str, r: Resolver, name: str, res: dict[str, Any]) -> None:
    """Creates a resource that refers to the stack and that moto's CloudFormation cannot."""
    if res["Type"] == "AWS::ApiGatewayV2::Api":
        build_api(endpoint, r, r.refs[name], r.value(res["Properties"]["Body"]))
        return
    props = r.value(res.get("Properties", {}))
    if res["Type"] == "AWS::ApiGatewayV2::Stage":
        args = {"ApiId": props["ApiId"], "StageName": props["StageName"], "AutoDeploy": props.get("AutoDeploy", False)}
        if "AccessLogSettings" in props:
            args["AccessLogSettings"] = props["AccessLogSettings"]
        if "DefaultRouteSettings" in props:
            s = props["DefaultRouteSettings"]
            args["DefaultRouteSettings"] = {
                "DetailedMetricsEnabled": bool(s.get("DetailedMetricsEnabled", False)),
                "ThrottlingBurstLimit": int(s["ThrottlingBurstLimit"]),
                "ThrottlingRateLimit": float(s["ThrottlingRateLimit"]),
            }
        client("apigatewayv2", endpoint).create_stage(**args)
        r.refs[name] = props["StageName"]
    elif res["Type"] == "AWS::CloudWatch::Alarm":
        args = {k: v for k, v in props.items() if k != "AlarmDescription"}
        args["AlarmName"] = f"{STACK}-{name}"
        args["AlarmDescription"] = props.get("AlarmDescription", "")
        for key in ("Period", "EvaluationPeriods"):
            if key in args:
                args[key] = int(args[key])
        args["Threshold"] = float(args["Threshold"])
        for m in args.get("Metrics", []):
            if "MetricStat" in m:
                m["MetricStat"]["Period"] = int(m["MetricStat"]["Period"])
        client("cloudwatch", endpoint).put_metric_alarm(**args)
        r.refs[name] = args["AlarmName"]
    else:
        raise RuntimeError(f"{name}: {res['Type']} is not handled")


def build_api(endpoint: str, r: Resolver, api_id: str, body: dict[str, Any]) -> None:
    """The authorizer, integrations and routes of an HTTP API's OpenAPI body."""
    gw = client("apigatewayv2", endpoint)
    authorizers = {}
    for scheme, spec in body.get("components", {}).get("securitySchemes", {}).items():
        a = spec["x-amazon-apigateway-authorizer"]
        authorizers[scheme] = gw.create_authorizer(
            ApiId=api_id,
            Name=scheme,
            AuthorizerType=a["type"].upper(),
            AuthorizerUri=a["authorizerUri"],
            AuthorizerPayloadFormatVersion=a["authorizerPayloadFormatVersion"],
            EnableSimpleResponses=bool(a.get("enableSimpleResponses", False)),
            AuthorizerResultTtlInSeconds=int(a.get("authorizerResultTtlInSeconds", 0)),
            IdentitySource=a["identitySource"],
        )["AuthorizerId"]
    methods = {"x-amazon-apigateway-any-method": "ANY"}
    for path, ops in body["paths"].items():
        for op, spec in ops.items():
            method = methods.get(op, op.upper())
            i = spec["x-amazon-apigateway-integration"]
            integration = gw.create_integration(
                ApiId=api_id,
                IntegrationType=i["type"].upper(),
                IntegrationMethod=i["httpMethod"],
                IntegrationUri=i["uri"],
                PayloadFormatVersion=i["payloadFormatVersion"],
            )["IntegrationId"]
            route = {"ApiId": api_id, "RouteKey": path if path == "$default" else f"{method} {path}",
                     "Target": f"integrations/{integration}", "AuthorizationType": "NONE"}
            for requirement in spec.get("security", []):
                for scheme in requirement:
                    if scheme in authorizers:
                        route.update(AuthorizationType="CUSTOM", AuthorizerId=authorizers[scheme])
            gw.create_route(**route)
    if body.get("x-amazon-apigateway-cors"):
        c = body["x-amazon-apigateway-cors"]
        gw.update_api(ApiId=api_id, CorsConfiguration={k[0].upper() + k[1:]: v for k, v in c.items()})


def wait_stack(cfn, stack: str) -> dict[str, Any]:
    for _ in range(600):
        s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
        if not s["StackStatus"].endswith("IN_PROGRESS"):
            return s
        time.sleep(0.1)
    raise TimeoutError(f"stack {stack} still in progress")


def deploy(endpoint: str, params: dict[str, str]) -> dict[str, Any]:
    """Creates the stack in moto; returns the stack's description and what was created where."""
    template = translate(params, endpoint)
    r = Resolver(template, params)
    origin = upload_code(endpoint, function_binaries(load_template()))
    outside = {n: res for n, res in template["Resources"].items()
               if res["Type"] in MISSING_IN_MOTO and r.active(res)}
    inside_refs = set()
    for n, res in template["Resources"].items():
        if n not in outside:
            inside_refs |= references(res)
    inside_refs |= references(template.get("Outputs", {}))
    before = [n for n in outside if n in inside_refs]
    for n in before:
        create_before(endpoint, r, n, outside[n])
    stack_template = {k: v for k, v in template.items() if k != "Resources"}
    stack_template["Resources"] = {
        n: fold(substitute(res, r.refs), r)
        for n, res in template["Resources"].items() if n not in outside
    }
    stack_template["Outputs"] = fold(substitute(template.get("Outputs", {}), r.refs), r)
    cfn = client("cloudformation", endpoint)
    cfn.create_stack(
        StackName=STACK,
        TemplateBody=json.dumps(stack_template),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()],
        Capabilities=["CAPABILITY_IAM"],
    )
    stack = wait_stack(cfn, STACK)
    if stack["StackStatus"] != "CREATE_COMPLETE":
        raise RuntimeError(f"stack {STACK}: {stack['StackStatus']} {stack.get('StackStatusReason', '')}")
    for res in stack_resources(cfn):
        r.refs[res["LogicalResourceId"]] = res["PhysicalResourceId"]
    lam = client("lambda", endpoint)
    for n, res in template["Resources"].items():
        if res["Type"] == "AWS::Lambda::Function" and n in r.refs:
            r.attrs[(n, "Arn")] = lam.get_function(FunctionName=r.refs[n])["Configuration"]["FunctionArn"]
        elif res["Type"] == "AWS::Logs::LogGroup" and n in r.refs:
            r.attrs[(n, "Arn")] = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{r.refs[n]}:*"
        elif res["Type"] == "AWS::SQS::Queue" and n in r.refs:
            queue = r.refs[n].rsplit("/", 1)[-1]
            r.attrs[(n, "QueueName")] = queue
            r.attrs[(n, "Arn")] = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}"
    for n in outside:
        if n in before and outside[n]["Type"] != "AWS::ApiGatewayV2::Api":
            continue
        create_after(endpoint, r, n, outside[n])
    return {"stack": stack, "refs": dict(r.refs), "outside": sorted(outside), "code": origin,
            "template": template}


def stack_resources(cfn) -> list[dict[str, Any]]:
    """The stack's resources (moto also lists the resources whose condition is false, with no
    logical id: those are left out)."""
    return [r for r in cfn.describe_stack_resources(StackName=STACK)["StackResources"]
            if "LogicalResourceId" in r and "PhysicalResourceId" in r]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto() -> tuple[subprocess.Popen, str]:
    """A moto server of our own on a free loopback port."""
    port = free_port()
    moto = os.environ.get("MOTO_SERVER", "moto_server")
    proc = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, endpoint
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"{moto} exited with {proc.returncode}")
            time.sleep(0.1)
    proc.kill()
    sys.exit(f"{moto} did not listen on {port}")


def summary(endpoint: str, result: dict[str, Any]) -> str:
    """What exists in moto, counted by kind (the `make deploy-local` printout)."""
    cfn = client("cloudformation", endpoint)
    lines = [f"stack {STACK}: {result['stack']['StackStatus']}"]
    kinds: dict[str, int] = {}
    for res in stack_resources(cfn):
        kinds[res["ResourceType"]] = kinds.get(res["ResourceType"], 0) + 1
    lines += [f"  {n:3d} {k} (CloudFormation)" for k, n in sorted(kinds.items())]
    gw = client("apigatewayv2", endpoint)
    api = result["refs"]["Api"]
    routes = gw.get_routes(ApiId=api)["Items"]
    lines.append(f"  API {api}: {len(routes)} routes, "
                 f"{sum(1 for x in routes if x['AuthorizationType'] == 'CUSTOM')} behind the authorizer, "
                 f"{len({x['AuthorizerId'] for x in routes if 'AuthorizerId' in x})} authorizer, "
                 f"{len(gw.get_stages(ApiId=api)['Items'])} stage (created through the API Gateway v2 API)")
    secrets = client("secretsmanager", endpoint).list_secrets()["SecretList"]
    lines.append(f"  {len(secrets)} secrets (created through the Secrets Manager API)")
    alarms = client("cloudwatch", endpoint).describe_alarms()["MetricAlarms"]
    lines.append(f"  {len(alarms)} alarms (created through the CloudWatch API)")
    sources = sorted({str(Path(p).parent.parent.name) for p in result["code"].values()})
    lines.append(f"  code: {', '.join(sources)} ({'make package' if sources == ['build'] else 'debug binaries'})")
    for o in result["stack"].get("Outputs", []):
        lines.append(f"  output {o['OutputKey']} = {o['OutputValue']}")
    return "\n".join(lines)


def parse_params(items: list[str]) -> dict[str, str]:
    params = dict(DEFAULT_PARAMS)
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            sys.exit(f"--param {item}: expected Name=Value")
        params[key] = value
    return params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("translate")
    t.add_argument("--out")
    t.add_argument("--param", action="append", default=[])
    d = sub.add_parser("deploy")
    d.add_argument("--endpoint", help="a running moto server; default: start one")
    d.add_argument("--param", action="append", default=[])
    args = ap.parse_args()
    params = parse_params(args.param)
    if args.cmd == "translate":
        text = json.dumps(translate(params, None), indent=1)
        if args.out:
            Path(args.out).write_text(text)
        else:
            print(text)
        return
    proc = None
    endpoint = args.endpoint
    if endpoint is None:
        proc, endpoint = start_moto()
    try:
        started = time.monotonic()
        result = deploy(endpoint, params)
        print(summary(endpoint, result))
        print(f"deployed in {time.monotonic() - started:.1f} s")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
