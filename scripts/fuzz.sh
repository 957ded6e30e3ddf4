#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ one after the other, one process each (a bench, not CI).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     default: all, 270 seconds per target
#   FUZZ_MINIMIZE=1 scripts/fuzz.sh ...        then minimize each corpus in place (merge)
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh ...        run the binaries built last time
#   FUZZ_MINIMIZE=1 scripts/fuzz.sh all 0      only minimize
#
# One libFuzzer process at a time, so one core (like -jobs=1 -workers=1, without its
# detour through fuzz-N.log files).
#
# Targets: yaml_load template scripted sse gemini openai. Corpora live in
# fuzz/corpus/TARGET (committed, minimized); seeds come from scripts/fuzz-seeds.py when a
# corpus is missing. Crashes land in fuzz/artifacts/TARGET; each becomes a test in
# tests/it/fuzzed.rs. Builds in release with debug assertions and overflow checks, no
# sanitizer (the library forbids unsafe code; panics, hangs and memory are what count).
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain take them.
# Each run's summary line (time, executions, corpus, crashes) goes to fuzz/runs.log.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1

ALL=(yaml_load template scripted sse gemini openai)
target=${1:-all}
seconds=${2:-270}
if [[ $target == all ]]; then targets=("${ALL[@]}"); else targets=("$target"); fi

# max_len and RSS limit (MB) per target: workflow files are small; provider bodies are
# read whole.
declare -A MAX_LEN=([yaml_load]=8192 [template]=2048 [scripted]=8192 [sse]=4096 [gemini]=8192 [openai]=8192)
RSS_MB=1024

command -v cargo-fuzz >/dev/null || { echo "cargo install cargo-fuzz" >&2; exit 1; }
[[ -d fuzz/corpus/${targets[0]} ]] || python3 scripts/fuzz-seeds.py
[[ ${FUZZ_NO_BUILD:-0} == 1 ]] || cargo fuzz build -s none
# Run the built binaries themselves: editing the library meanwhile rebuilds nothing.
bin=fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release

for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  if (( seconds > 0 )); then
    log="fuzz/artifacts/$t/last-run.log"
    echo "== $t: ${seconds}s" >&2
    start=$(date +%s)
    status=0
    "$bin/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" \
      -max_total_time="$seconds" -max_len="${MAX_LEN[$t]}" -rss_limit_mb="$RSS_MB" \
      -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
    took=$(( $(date +%s) - start ))
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    crashes=$(find "fuzz/artifacts/$t" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
    line="$(date -u +%FT%TZ) $t seconds=$took executions=$runs corpus=$(ls "fuzz/corpus/$t" | wc -l) exit=$status artifacts=$crashes"
    echo "$line" | tee -a fuzz/runs.log >&2
    if [[ $status -ne 0 ]]; then
      grep -m3 -E 'panicked|ERROR|SUMMARY' "$log" >&2 || true
    fi
  fi
  if [[ ${FUZZ_MINIMIZE:-0} == 1 ]]; then
    rm -rf "fuzz/corpus/$t.min" && mkdir "fuzz/corpus/$t.min"
    # Edges only (no hit counts): a corpus small enough to commit, every branch kept.
    "$bin/$t" -merge=1 -use_counters=0 "fuzz/corpus/$t.min" "fuzz/corpus/$t" -max_len="${MAX_LEN[$t]}" \
      -rss_limit_mb="$RSS_MB" -timeout=10 >"fuzz/artifacts/$t/cmin.log" 2>&1
    rm -rf "fuzz/corpus/$t" && mv "fuzz/corpus/$t.min" "fuzz/corpus/$t"
    echo "   corpus minimized: $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk "fuzz/corpus/$t" | cut -f1) KB" >&2
  fi
done
