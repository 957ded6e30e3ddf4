#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1, for tests of the SQL session store.
#
#   scripts/postgres.sh start DIR PORT   # prints postgres://postgres@127.0.0.1:PORT/adkflow
#   scripts/postgres.sh stop DIR         # stops the server and removes DIR
#   scripts/postgres.sh install          # only makes sure the server binaries are there
#
# `start` installs Debian's `postgresql` package when initdb/pg_ctl are missing (needs root),
# creates a fresh cluster in DIR (trust authentication, nothing flushed to disk; DIR must not exist or will be wiped,
# and its parent must be reachable by user `postgres`), starts it listening on 127.0.0.1:PORT
# with its unix socket in DIR, waits until it accepts connections, creates database
# `adkflow`, and prints the URL on stdout and nothing else; progress and timings go to
# stderr. initdb refuses to run as root, so as root the server runs as user `postgres`.
set -euo pipefail

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The newest bin directory holding both initdb and pg_ctl. Debian keeps them out of PATH.
find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  return 1
}

install_server() {
  find_bindir >/dev/null && return 0
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL (initdb, pg_ctl) is not installed and we are not root; install Debian's 'postgresql' package"
  local t0
  t0=$(now)
  say "installing Debian's postgresql package"
  # The package would otherwise create and start its own cluster on port 5432.
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/adk-flow.conf
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends postgresql >&2 \
    || die "apt-get install postgresql failed"
  find_bindir >/dev/null || die "postgresql installed, but no initdb/pg_ctl under /usr/lib/postgresql/*/bin"
  say "installed in $(since "$t0") s"
}

# Runs a server binary as the owner of the data directory.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir=$1 port=$2 bindir t0
  case "$port" in '' | *[!0-9]*) die "PORT must be a number, got '$port'" ;; esac
  install_server
  bindir=$(find_bindir)
  t0=$(now)
  rm -rf "$dir"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  # A throwaway cluster: nothing is flushed to disk (initdb --no-sync, fsync=off). Clients
  # see the same transactions, locks and errors; only durability across a crash of the
  # machine, which no test can observe, is given up (it cost seconds per test).
  as_owner "$bindir/initdb" --no-sync -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  if ! as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >&2; then
    tail -n 20 "$dir/server.log" >&2 || true
    die "the server did not start on 127.0.0.1:$port"
  fi
  as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres adkflow >&2 \
    || die "createdb failed"
  say "PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') ready on 127.0.0.1:$port in $(since "$t0") s (data in $dir)"
  echo "postgres://postgres@127.0.0.1:$port/adkflow"
}

stop() {
  local dir=$1 bindir
  [ -d "$dir/data" ] || { rm -rf "$dir"; return 0; }
  bindir=$(find_bindir) || die "no pg_ctl to stop the server in $dir"
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >&2 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 3 ] || die "usage: postgres.sh start DIR PORT"; start "$2" "$3" ;;
  stop) [ $# -eq 2 ] || die "usage: postgres.sh stop DIR"; stop "$2" ;;
  install) install_server ;;
  *) die "usage: postgres.sh start DIR PORT | stop DIR | install" ;;
esac
