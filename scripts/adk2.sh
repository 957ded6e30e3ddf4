#!/usr/bin/env bash
# Python google-adk 2.13.0 plus this repository's `adk_flow` package (python/), in a venv, for
# recording and comparing ADK 2 Workflow event streams (tests/data/graphs/).
#
#   scripts/adk2.sh            # installs (once) and prints the venv's python on stdout
#   scripts/adk2.sh --check    # exit 0 and print the python when installed, 1 otherwise; never installs
#
# The venv lives in $ADK_FLOW_ADK2_VENV (default ${XDG_CACHE_HOME:-$HOME/.cache}/adk-flow/adk2).
# The first run creates it and installs google-adk==2.13.0, pyyaml and jinja2 from PyPI (about a
# minute, 300 MB); `adk_flow` is installed editable, so edits under python/ need no reinstall.
# Later runs only check a stamp file. Progress goes to stderr; stdout holds the python path
# and nothing else.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
VENV="${ADK_FLOW_ADK2_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/adk-flow/adk2}"
PY="${PYTHON:-python3}"
ADK="google-adk==2.13.0"
STAMP="$VENV/.adk-flow-installed-$ADK"

say() { echo "adk2.sh: $*" >&2; }

installed() {
  [ -f "$STAMP" ] && "$VENV/bin/python" -c 'import google.adk, adk_flow' 2>/dev/null
}

if [ "${1:-}" = "--check" ]; then
  if installed; then echo "$VENV/bin/python"; exit 0; fi
  say "not installed in $VENV (run scripts/adk2.sh)"
  exit 1
fi
[ $# -eq 0 ] || { say "usage: adk2.sh [--check]"; exit 2; }

if [ ! -f "$STAMP" ]; then
  say "installing $ADK into $VENV"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! "$PY" -m venv "$VENV" >&2; then
    say "cannot create a venv with $PY (on Debian/Ubuntu: apt-get install python3-venv)"
    exit 1
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$ADK" pyyaml jinja2 >&2
  touch "$STAMP"
fi
# Editable, so it always follows this checkout's python/ (cheap: no download).
if ! "$VENV/bin/python" -c 'import adk_flow, sys; sys.exit(0 if adk_flow.__file__.startswith(sys.argv[1]) else 1)' "$ROOT/python/" 2>/dev/null; then
  say "installing adk_flow from $ROOT/python (editable)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -e "$ROOT/python" >&2
fi
echo "$VENV/bin/python"
