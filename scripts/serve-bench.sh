#!/usr/bin/env bash
# Load benchmark of `adk-flow serve` (issue 11 item 9): requests/s and p50/p99 latency of
# /run and /run_sse, and the memory held by open sessions, measured from a second process
# on loopback (examples/serve_load.rs) against a release build answering from a script.
#
#   scripts/serve-bench.sh [REQUESTS] [CONCURRENCY] [SESSIONS] [DB]
#
# Defaults: 20000 turns per route, 64 in flight, 10000 sessions for the memory figure,
# sessions in memory (DB may be `sqlite:PATH` or a postgres:// URL). Each turn is one
# fresh session of workflows/support.yaml asking about an order: the router transfers to
# the orders team, whose ticket step repeats the message and whose order desk calls lookup_order
# and answers from the record through a callback (7 events). Prints one JSON line per
# measurement. Builds in release mode (minutes the first time; ADK_FLOW_BENCH_PROFILE=debug
# uses the debug build, for checking the script itself); never run by CI. Extra arguments
# for `serve` come from ADK_FLOW_SERVE_ARGS (e.g. `--no-debug-traces`).
set -euo pipefail

REQUESTS="${1:-20000}"
CONCURRENCY="${2:-64}"
SESSIONS="${3:-10000}"
DB="${4:-memory}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { echo "serve-bench.sh: $*" >&2; }

say "building $([ "${ADK_FLOW_BENCH_PROFILE:-release}" = release ] && echo release || echo debug) binaries"
PROFILE="${ADK_FLOW_BENCH_PROFILE:-release}"
if [ "$PROFILE" = release ]; then
  cargo build --release --quiet --bin adk-flow --example serve_load
else
  cargo build --quiet --bin adk-flow --example serve_load
  PROFILE=debug
fi
BIN="$ROOT/target/$PROFILE/adk-flow"
LOAD="$ROOT/target/$PROFILE/examples/serve_load"

WORK="$(mktemp -d)"
LOG="$WORK/serve.log"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cp -r workflows "$WORK/apps"
cat >"$WORK/apps/load.script.yaml" <<'YAML'
replies:
  support_router:
    - function_call: {name: transfer_to_agent, args: {agent_name: orders}}
  order_desk:
    - function_call: {name: lookup_order, args: {order_id: "42"}}
YAML

start_server() {
  : >"$LOG"
  (cd "$WORK/apps" && RUST_LOG=warn exec "$BIN" serve support.yaml --script load.script.yaml \
    --db "$DB" --port 0 ${ADK_FLOW_SERVE_ARGS:-} 2>"$LOG") &
  SERVER=$!
  for _ in $(seq 1 200); do
    URL="$(grep -o 'http://127.0.0.1:[0-9]*' "$LOG" | head -n 1 || true)"
    if [ -n "$URL" ]; then return 0; fi
    sleep 0.05
  done
  say "the server did not start:"; cat "$LOG" >&2; exit 1
}

stop_server() {
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
}

say "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for route in run run_sse; do
  start_server
  # A short warm-up, then the measured load, each turn on a fresh session.
  "$LOAD" turns "$URL" support "$route" 500 "$CONCURRENCY" >/dev/null
  "$LOAD" turns "$URL" support "$route" "$REQUESTS" "$CONCURRENCY"
  stop_server
done

start_server
"$LOAD" sessions "$URL" support "$SESSIONS" "$CONCURRENCY" "$SERVER"
stop_server
