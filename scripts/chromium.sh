#!/usr/bin/env bash
# Headless Chromium and ADK's dev web UI, for the browser test of `adk-flow serve`.
#
#   scripts/chromium.sh install       # Debian's `chromium` package, when /usr/bin/chromium is missing (needs root)
#   scripts/chromium.sh adk-ui DIR    # ADK 1.39.1's dev UI (google/adk/cli/browser of the
#                                     # google-adk wheel, checked against its sha256) into DIR
#   scripts/chromium.sh path          # prints the browser's path
#
# Progress goes to stderr; `path` and `adk-ui` print only the path on stdout.
set -euo pipefail

say() { echo "chromium.sh: $*" >&2; }
die() { say "$*"; exit 1; }

ADK_VERSION=1.39.1
ADK_WHEEL=google_adk-${ADK_VERSION}-py3-none-any.whl
ADK_SHA256=575f15767bcf0405a0660026b57ebf14c46c71047d2916944517068d2ee3763c

find_browser() {
  local b
  for b in /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -x "$b" ]; then echo "$b"; return 0; fi
  done
  return 1
}

install_browser() {
  find_browser >/dev/null && return 0
  [ "$(id -u)" -eq 0 ] || die "Chromium is not installed and we are not root; install Debian's 'chromium' package"
  local t0=$SECONDS
  say "installing Debian's chromium package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends chromium fonts-liberation >&2 \
    || die "apt-get install chromium failed"
  find_browser >/dev/null || die "chromium installed, but no /usr/bin/chromium"
  say "installed in $((SECONDS - t0)) s: $("$(find_browser)" --version 2>/dev/null || true)"
}

adk_ui() {
  local dest=$1 tmp
  if [ -f "$dest/index.html" ]; then echo "$dest"; return 0; fi
  command -v python3 >/dev/null || die "python3 is needed to fetch the google-adk wheel"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  say "downloading google-adk==$ADK_VERSION (the wheel only, no dependencies)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: "google-adk==$ADK_VERSION" -d "$tmp" >&2 \
    || die "pip download google-adk==$ADK_VERSION failed (is PyPI reachable?)"
  [ -f "$tmp/$ADK_WHEEL" ] || die "pip did not fetch $ADK_WHEEL"
  echo "$ADK_SHA256  $tmp/$ADK_WHEEL" | sha256sum -c --quiet - >&2 \
    || die "$ADK_WHEEL does not have the expected sha256"
  python3 - "$tmp/$ADK_WHEEL" "$tmp/out" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith("google/adk/cli/browser/")]
    z.extractall(out, members)
PY
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest.partial"
  mv "$tmp/out/google/adk/cli/browser" "$dest.partial"
  mv "$dest.partial" "$dest" 2>/dev/null || rm -rf "$dest.partial"
  [ -f "$dest/index.html" ] || die "no index.html in the wheel's browser folder"
  echo "$dest"
}

case "${1:-}" in
  install) install_browser ;;
  path) find_browser || die "Chromium is not installed (scripts/chromium.sh install)" ;;
  adk-ui) [ $# -eq 2 ] || die "usage: chromium.sh adk-ui DIR"; adk_ui "$2" ;;
  *) die "usage: chromium.sh install | path | adk-ui DIR" ;;
esac
