#!/usr/bin/env bash
# `make lint-infra`: the SAM template through `sam validate --lint`, cfn-lint with the serverless
# rules, checkov (on the SAM template and on its CloudFormation translation) and the template's
# own tests. Zero findings or a failure; every suppression is a comment in template.yaml.
# Tools come from the venvs the Makefile installs: SAM_VENV, LINT_VENV, CHECKOV_VENV.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${FLUSS_GW_CACHE:-$HOME/.cache/fluss-lambda-gateway}/sam-lint"
mkdir -p "$out"
export SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
cd "$root"

"$SAM_VENV/bin/sam" validate --lint --template infra/sam/template.yaml --region "$AWS_DEFAULT_REGION" \
  > "$out/sam.log" 2>&1 || { cat "$out/sam.log"; exit 1; }
echo "sam validate --lint: $(tail -n 1 "$out/sam.log")"

rules="$("$LINT_VENV/bin/cfn-lint" --append-rules cfn_lint_serverless.rules --list-rules | grep -cE '^[EWI]S?[0-9]{4}:')"
serverless="$("$LINT_VENV/bin/cfn-lint" --append-rules cfn_lint_serverless.rules --list-rules | grep -cE '^[EWI]S[0-9]{4}:')"
"$LINT_VENV/bin/cfn-lint" --append-rules cfn_lint_serverless.rules -- infra/sam/template.yaml
echo "cfn-lint $("$LINT_VENV/bin/cfn-lint" --version | cut -d' ' -f2): $rules rules ($serverless serverless rules), 0 findings"

"$SAM_VENV/bin/python" infra/sam/deploy_local.py translate --out "$out/translated.json"
for target in infra/sam/template.yaml "$out/translated.json"; do
  # --skip-download: no call to Prisma Cloud for guidelines (and none is reachable here).
  BC_SKIP_MAPPING=TRUE "$CHECKOV_VENV/bin/checkov" --file "$target" --framework cloudformation \
    --compact --quiet --skip-download > "$out/checkov.log" 2>&1 || { cat "$out/checkov.log"; exit 1; }
  echo "checkov $("$CHECKOV_VENV/bin/checkov" --version) on ${target#"$root"/}: $(grep -E '^Passed checks' "$out/checkov.log")"
done

"$SAM_VENV/bin/python" -m pytest -q -p no:cacheprovider infra/sam/tests/test_template.py
