#!/usr/bin/env bash
# Runs a command with the local stack up, and stops the stack afterwards whatever happens
# (success, failure, Ctrl-C or SIGTERM). Usage: with-stack.sh COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stop() { python3 "$here/stack.py" stop || true; }
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
python3 "$here/stack.py" start
"$@"
