#!/usr/bin/env bash
# `make run`: starts the local stack, serves the gateway functions through `cargo lambda watch`
# on 127.0.0.1:PORT, and stops everything it started on Ctrl-C or SIGTERM.
set -euo pipefail
port="${1:-9000}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
watch_pid=""

# Runs on every way out (Ctrl-C, SIGTERM or SIGHUP to the process group, an error). A second
# signal must not cut it short, and its output may have nowhere to go (the terminal closed, or
# the reader of a pipe already gone with make): the stop's lines go to a log file as well, and a
# failed write to stdout never stops the stop.
cleanup() {
  trap '' INT TERM HUP PIPE
  trap - EXIT
  if [[ -n "$watch_pid" ]] && kill -0 "$watch_pid" 2>/dev/null; then
    kill -TERM -- "-$watch_pid" 2>/dev/null || kill -TERM "$watch_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$watch_pid" 2>/dev/null || true
  fi
  local stop_log="${FLUSS_STACK_DIR:-$HOME/.cache/fluss-lambda-gateway/stack}/stop.log"
  python3 "$here/stack.py" stop > >(tee -p -a "$stop_log" 2>/dev/null || cat > /dev/null) 2>&1 || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
# Each ignores the three signals before it exits: SIGTERM to make's process group reaches this
# script twice (from the sender, then from make passing it on to its children), and a second
# signal handled between this trap and cleanup's first line ran `exit` inside the EXIT trap,
# which ends the script with the stack still running (the make-run SIGTERM test's flake:
# everything left, stop.log never written).
trap 'trap "" INT TERM HUP; exit 130' INT
trap 'trap "" INT TERM HUP; exit 143' TERM
trap 'trap "" INT TERM HUP; exit 129' HUP

python3 "$here/stack.py" start
env_file="$(python3 "$here/stack.py" env)"
log_dir="$(dirname "$env_file")/logs"
bin_dir="${CARGO_TARGET_DIR:-$root/target}/debug"

# Production-like: API keys in (moto's) Secrets Manager, the gateway on the cluster's SASL
# listener as the `admin` service account, and `alice` acting as her own SASL user.
keys_secret="fluss-gateway/local/keys"
alice_secret="fluss-gateway/local/fluss-alice"
set -a; . "$env_file"; set +a
keys() { "$bin_dir/fluss-gateway-keys" --secret-id "$keys_secret" "$@"; }
demo_key="$(keys create --principal demo --scope 'ops=*' 2>/dev/null)"
printf '%s\n' "$FLUSS_SASL_ALICE_PASSWORD" \
  | keys set-identity "$alice_secret" --username alice 2>/dev/null
alice_key="$(keys create --principal alice --scope 'ops=write+read,database=demo' \
  --identity "sasl:$alice_secret" 2>/dev/null)"
"$bin_dir/fluss-probe" grant alice database demo >/dev/null
printf 'GATEWAY_API_KEY=%s\nALICE_API_KEY=%s\n' "$demo_key" "$alice_key" >> "$env_file"

# The Idempotency-Key records (docs/idempotency.md) in moto's DynamoDB, created through its JSON
# API (moto checks no signature; the credential scope names the region the functions use).
idem_table="fluss-gateway-local-idempotency"
dynamo() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "$AWS_ENDPOINT_URL" \
    -H 'content-type: application/x-amz-json-1.0' -H "x-amz-target: DynamoDB_20120810.$1" \
    -H "authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/20260101/$AWS_REGION/dynamodb/aws4_request, SignedHeaders=host, Signature=0" \
    -d "$2"
}
dynamo CreateTable "{\"TableName\":\"$idem_table\",\"BillingMode\":\"PAY_PER_REQUEST\",
  \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],
  \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}" >/dev/null
status="$(dynamo DescribeTable "{\"TableName\":\"$idem_table\"}")"
[[ "$status" == 200 ]] || { echo "run.sh: the idempotency table is missing in moto (HTTP $status)" >&2; exit 1; }

# The functions' environment: the stack's, with the cluster on its SASL listener and auth on.
run_env="$(dirname "$env_file")/run.env"
( umask 077
  grep -v -e '^FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=' -e '_API_KEY=' "$env_file"
  cat <<ENV
FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$FLUSS_BOOTSTRAP_SASL
FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT=admin
FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ENV=FLUSS_SASL_ADMIN_PASSWORD
FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__IDENTITY_MODE=user
FLUSS_GATEWAY__SECURITY__AUTHENTICATION=api-key
FLUSS_GATEWAY__SECURITY__SECRET_ID=$keys_secret
FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE=$idem_table
ENV
  # Telemetry from the caller's environment, passed on to the functions: metrics go to an OTLP
  # receiver when OTEL_EXPORTER_OTLP_ENDPOINT is set (see docs/operations.md), logs are JSON
  # with GATEWAY_LOG_FORMAT=json. Values are quoted: headers hold `=`.
  for var in OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_METRICS_ENDPOINT \
             OTEL_EXPORTER_OTLP_HEADERS OTEL_EXPORTER_OTLP_METRICS_HEADERS OTEL_SERVICE_NAME \
             OTEL_RESOURCE_ATTRIBUTES OTEL_METRIC_EXPORT_INTERVAL OTEL_EXPORTER_OTLP_TIMEOUT \
             OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE GATEWAY_LOG_FORMAT RUST_LOG; do
    if [[ -n "${!var:-}" ]]; then printf '%s="%s"\n' "$var" "${!var}"; fi
  done
) > "$run_env"

cd "$root"
# Its own process group, so cleanup can stop cargo-lambda and the functions it spawned.
# --disable-cors: cargo-lambda's default CORS reflects any Origin with credentials, so any web
# page a developer opens could call the local gateway (and drop tables). API Gateway, too, has
# CORS off unless configured.
# The log holds function logs (request ids, principals): private, as the stack's own logs.
( umask 077; : > "$log_dir/cargo-lambda.log" )
chmod 600 "$log_dir/cargo-lambda.log"
setsid cargo lambda watch --disable-cors -A 127.0.0.1 -P "$port" --env-file "$run_env" \
  >> "$log_dir/cargo-lambda.log" 2>&1 &
watch_pid=$!

# cargo-lambda logs "started" before it binds: poll the port.
for _ in $(seq 1 600); do
  if curl -s -o /dev/null "http://127.0.0.1:$port/health"; then break; fi
  kill -0 "$watch_pid" 2>/dev/null || { tail -n 30 "$log_dir/cargo-lambda.log"; exit 1; }
  sleep 0.5
done

cat <<MSG

Fluss Lambda Gateway (local) is serving on http://127.0.0.1:$port  (auth: api-key)
  curl http://127.0.0.1:$port/health
  export GATEWAY_API_KEY=\$(sed -n 's/^GATEWAY_API_KEY=//p' $env_file)
  curl -H "x-api-key: \$GATEWAY_API_KEY" http://127.0.0.1:$port/v1/clusters
API keys:          demo (every scope, as the service account) and alice (read+write on database
                   demo, as her own SASL user): GATEWAY_API_KEY and ALICE_API_KEY in
                   $env_file (mode 0600; the keys are never printed)
Metrics:           ${OTEL_EXPORTER_OTLP_ENDPOINT:+exported over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT}${OTEL_EXPORTER_OTLP_ENDPOINT:-off (set OTEL_EXPORTER_OTLP_ENDPOINT, see docs/operations.md)}
Stack addresses:   $env_file   (make status)
Logs:              $log_dir/   (cargo-lambda.log, coordinator.log, tablet.log, zookeeper.log, moto.out)
Press Ctrl-C to stop the gateway and the stack.
MSG

wait "$watch_pid"
