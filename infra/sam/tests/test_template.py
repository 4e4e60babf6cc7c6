"""The SAM template against the code: same routes as the watch router, timeouts consistent with
the request deadline, only configuration keys the gateway knows, least-privilege IAM."""

import re

import deploy_local
from conftest import WATCH_CATCH_ALL

# The longest an HTTP API waits for a Lambda integration (seconds); not configurable above this.
HTTP_API_INTEGRATION_TIMEOUT = 30


def template_routes(template):
    """path -> binary of every HttpApi event in the template (the `$default` route aside)."""
    binaries = deploy_local.function_binaries(template)
    routes = {}
    for name, res in template["Resources"].items():
        for event in res.get("Properties", {}).get("Events", {}).values():
            if event["Type"] == "HttpApi" and event["Properties"]["Path"] != "$default":
                path = event["Properties"]["Path"]
                assert path not in routes, f"{path} is served twice"
                assert event["Properties"]["Method"] == "ANY", f"{path}: the function answers 405 itself"
                routes[path] = binaries[name]
    return routes


def default_route_binary(template):
    binaries = deploy_local.function_binaries(template)
    for name, res in template["Resources"].items():
        for event in res.get("Properties", {}).get("Events", {}).values():
            if event["Type"] == "HttpApi" and event["Properties"]["Path"] == "$default":
                return binaries[name]
    return None


def test_the_watch_catch_all_is_the_default_route(template, watch_router):
    """`cargo lambda watch` answers paths its router does not know with its own 404 (listing every
    binary); the catch-all sends them to the function of the template's `$default` route."""
    assert watch_router.get(WATCH_CATCH_ALL) == default_route_binary(template)


def test_routes_match_the_watch_router(template, router):
    routes = template_routes(template)
    missing = sorted(set(router) - set(routes))
    extra = sorted(set(routes) - set(router))
    assert not missing, f"in the watch router, not in infra/sam/template.yaml: {missing}"
    assert not extra, f"in infra/sam/template.yaml, not in the watch router: {extra}"
    wrong = {p: (routes[p], router[p]) for p in router if routes[p] != router[p]}
    assert not wrong, f"served by another function (template, router): {wrong}"


def test_a_route_missing_on_either_side_is_named(template, router):
    """The comparison above fails, naming the route, for a route added on one side only."""
    added = dict(router, **{"/v1/clusters/{cluster}/new-thing": "fluss-ddl"})
    routes = template_routes(template)
    assert sorted(set(added) - set(routes)) == ["/v1/clusters/{cluster}/new-thing"]
    dropped = {p: b for p, b in router.items() if p != "/v1/clusters/{cluster}/configs"}
    assert sorted(set(routes) - set(dropped)) == ["/v1/clusters/{cluster}/configs"]


def test_every_function_binary_is_deployed(template):
    bins = set(deploy_local.function_binaries(template).values())
    crates = {p.name for p in (deploy_local.ROOT / "functions").iterdir() if p.is_dir()}
    # `fluss-gateway` is the all-in-one server (and single-function variant) of the same routes.
    assert bins == {f"fluss-{c}" for c in crates} - {"fluss-gateway"}


def test_open_routes_are_health_ready_and_the_404(template):
    open_paths = set()
    for res in template["Resources"].values():
        for event in res.get("Properties", {}).get("Events", {}).values():
            if event["Properties"].get("Auth", {}).get("Authorizer") == "NONE":
                open_paths.add(event["Properties"]["Path"])
    assert open_paths == {"/health", "/ready", "$default"}


def test_timeouts_fit_the_request_deadline(template):
    p = template["Parameters"]["FunctionTimeout"]
    assert p["MaxValue"] < HTTP_API_INTEGRATION_TIMEOUT, "the function must answer before API Gateway gives up"
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert template["Globals"]["Function"]["Timeout"] == {"Ref": "FunctionTimeout"}
    assert env["FLUSS_GATEWAY__REST__REQUEST_TIMEOUT"] == {"Fn::Sub": "${FunctionTimeout}s"}
    ingest = template["Resources"]["IngestFunction"]["Properties"]
    assert ingest["Timeout"] == {"Ref": "IngestTimeout"}
    assert ingest["Environment"]["Variables"]["FLUSS_GATEWAY__INGEST__TIMEOUT"] == {"Fn::Sub": "${IngestTimeout}s"}


def documented_variables():
    """The `FLUSS_GATEWAY__…` names of docs/configuration.md, placeholders as patterns."""
    text = (deploy_local.ROOT / "docs" / "configuration.md").read_text()
    names = set(re.findall(r"`(FLUSS_GATEWAY__[A-Z0-9_<>]+)`", text))
    return [re.compile("^" + re.sub(r"<[A-Z]+>", "[A-Z0-9_]+", n) + "$") for n in names]


def test_every_variable_is_a_known_setting(template):
    """The gateway refuses to start on an unknown `FLUSS_GATEWAY__` variable: the template sets
    documented ones only."""
    known = documented_variables()
    variables = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    for res in template["Resources"].values():
        variables.update(res.get("Properties", {}).get("Environment", {}).get("Variables", {}))
    unknown = [v for v in variables if v.startswith("FLUSS_GATEWAY__") and not any(k.match(v) for k in known)]
    assert not unknown, f"not in docs/configuration.md: {unknown}"


def statements(translated):
    for name, res in translated["Resources"].items():
        if res["Type"] == "AWS::IAM::Role":
            for policy in res["Properties"].get("Policies", []):
                for st in policy["PolicyDocument"]["Statement"]:
                    yield name, st


def flatten(v):
    """Every literal and branch of a (possibly conditional) IAM resource list."""
    if isinstance(v, list):
        for x in v:
            yield from flatten(x)
    elif isinstance(v, dict) and "Fn::If" in v:
        yield from flatten(v["Fn::If"][1:])
    else:
        yield v


def test_no_wildcard_resource_or_action(translated):
    seen = 0
    for role, st in statements(translated):
        stmt = st["Fn::If"][1] if "Fn::If" in st else st
        for r in flatten(stmt["Resource"]):
            assert r != "*", f"{role} {stmt.get('Sid')}: Resource *"
        actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        assert all(not a.endswith("*") for a in actions), f"{role}: wildcard action"
        seen += 1
    assert seen >= 10


def test_no_secret_value_in_the_environment(template):
    """Secrets travel by ARN: no variable of the template holds a password or key itself."""
    variables = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    for res in template["Resources"].values():
        variables.update(res.get("Properties", {}).get("Environment", {}).get("Variables", {}))
    for name in variables:
        assert not re.search(r"PASSWORD|SECRET$|_KEY$|HEADERS$", name), name
