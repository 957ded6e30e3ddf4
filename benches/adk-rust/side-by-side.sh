#!/usr/bin/env bash
# Interleaved side-by-side rounds: adk-rust S, [adk-rust built with LTO S,] adk-flow S, for
# S in a_tool, b_sequential, c_loop, d_transfer; ROUNDS times.
# Usage: side-by-side.sh ADK_RUST_BENCH ADK_FLOW ROUNDS [K [ADK_RUST_BENCH_LTO]]
# Prints one JSON line per run: the bench's own JSON plus "framework" (adk-rust,
# adk-rust-lto or adk-flow), "round" and "load1", the 1-minute load average read just
# before the run.
set -euo pipefail
rust=$1 flow=$2 rounds=$3 k=${4:-20000} rust_lto=${5:-}
for r in $(seq 1 "$rounds"); do
  for s in a_tool b_sequential c_loop d_transfer; do
    for fw in adk-rust ${rust_lto:+adk-rust-lto} adk-flow; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      case $fw in
        adk-rust) out=$("$rust" --scenario "$s" --invocations "$k" --json) ;;
        adk-rust-lto) out=$("$rust_lto" --scenario "$s" --invocations "$k" --json) ;;
        adk-flow) out=$("$flow" bench --scenario "$s" --invocations "$k" --json) ;;
      esac
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(framework=sys.argv[2], round=int(sys.argv[3]), load1=float(sys.argv[4])); print(json.dumps(d))' "$out" "$fw" "$r" "$load"
    done
  done
done
