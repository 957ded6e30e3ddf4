#!/usr/bin/env bash
# A/B of two adk-flow binaries on the bench scenarios, interleaved so that a burst of load
# hits both: for each round and scenario, OLD then NEW, one line each with the CPU per
# invocation, the throughput and the peak memory. The machine's load is printed per round.
#   scripts/ab-bench.sh OLD NEW ROUNDS SCENARIO...
#   scripts/ab-bench.sh old-adk-flow target/release/adk-flow 3 a_tool b_sequential
set -euo pipefail
if [ "$#" -lt 4 ]; then
  echo "usage: $0 OLD NEW ROUNDS SCENARIO..." >&2
  exit 2
fi
old=$1 new=$2 rounds=$3
shift 3
n=${INVOCATIONS:-20000}
for round in $(seq 1 "$rounds"); do
  echo "# round $round, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for scenario in "$@"; do
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      "$bin" bench --scenario "$scenario" --invocations "$n" --json |
        python3 -c 'import json,sys
for line in sys.stdin:
    r = json.loads(line)
    print("{:4} {:13} cpu_us_per_inv {:7.2f}  inv_per_s {:9.0f}  peak_rss_kib {}".format(
        sys.argv[1], r["scenario"], r["cpu_us_per_inv"], r["inv_per_s"], r["peak_rss_kib"]))' "$side"
    done
  done
done
