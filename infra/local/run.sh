#!/usr/bin/env bash
# `make run`: starts the local stack, serves the gateway functions through `cargo lambda watch`
# on 127.0.0.1:PORT, and stops everything it started on Ctrl-C or SIGTERM.
set -euo pipefail
port="${1:-9000}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
watch_pid=""

cleanup() {
  trap - EXIT INT TERM
  if [[ -n "$watch_pid" ]] && kill -0 "$watch_pid" 2>/dev/null; then
    kill -TERM -- "-$watch_pid" 2>/dev/null || kill -TERM "$watch_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$watch_pid" 2>/dev/null || true
  fi
  python3 "$here/stack.py" stop || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

python3 "$here/stack.py" start
env_file="$(python3 "$here/stack.py" env)"
log_dir="$(dirname "$env_file")/logs"

cd "$root"
# Its own process group, so cleanup can stop cargo-lambda and the functions it spawned.
# --disable-cors: cargo-lambda's default CORS reflects any Origin with credentials, so any web
# page a developer opens could call the local gateway (and drop tables). API Gateway, too, has
# CORS off unless configured.
setsid cargo lambda watch --disable-cors -A 127.0.0.1 -P "$port" --env-file "$env_file" \
  > "$log_dir/cargo-lambda.log" 2>&1 &
watch_pid=$!

# cargo-lambda logs "started" before it binds: poll the port.
for _ in $(seq 1 600); do
  if curl -s -o /dev/null "http://127.0.0.1:$port/health"; then break; fi
  kill -0 "$watch_pid" 2>/dev/null || { tail -n 30 "$log_dir/cargo-lambda.log"; exit 1; }
  sleep 0.5
done

cat <<MSG

Fluss Lambda Gateway (local) is serving on http://127.0.0.1:$port
  curl http://127.0.0.1:$port/health
Stack addresses:   $env_file   (make status)
Logs:              $log_dir/   (cargo-lambda.log, coordinator.log, tablet.log, zookeeper.log, moto.out)
Press Ctrl-C to stop the gateway and the stack.
MSG

wait "$watch_pid"
