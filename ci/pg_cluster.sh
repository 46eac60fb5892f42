#!/usr/bin/env bash
# ci/pg_cluster.sh start|stop|kill|resume STATE_DIR
#
# A private PostgreSQL cluster for the test suite (ctest fixtures pg_cluster_start
# and pg_cluster_stop, tests/CMakeLists.txt): `start` runs initdb in a new
# temporary directory, starts the server on a unix socket in that directory and
# on 127.0.0.1:<a free port>, and writes STATE_DIR/url — the administrator's URL
# (trust over the socket) that the tests read to create one database per test.
# TCP logins need a password (scram-sha-256), so that wrong-password faults are
# real. `stop` stops the server (immediate shutdown) and removes the directory;
# ctest runs it even when tests failed. `start` first stops a cluster an
# interrupted earlier run left behind. `kill` stops the server at once (an
# immediate shutdown, as a crash: the fault suite's "server killed mid-run")
# and `resume` starts it again on the same data, socket and port.
# PostgreSQL refuses to run as root: as root the server runs as the `postgres`
# user Debian's package creates.
set -euo pipefail

action=${1:?usage: pg_cluster.sh start|stop|kill|resume STATE_DIR}
state=${2:?usage: pg_cluster.sh start|stop|kill|resume STATE_DIR}

bindir=$(pg_config --bindir 2>/dev/null || true)
if [[ ! -x "$bindir/initdb" ]]; then
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
fi
[[ -x "$bindir/initdb" ]] || { echo "pg_cluster.sh: no PostgreSQL server found (install postgresql: ci/setup.sh)" >&2; exit 1; }

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop() {
  [[ -f "$state/dir" ]] || return 0
  local dir
  dir=$(cat "$state/dir")
  if [[ -d "$dir/data" ]]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  rm -f "$state/dir" "$state/url" "$state/port"
}

case "$action" in
  stop)
    stop
    echo "pg_cluster.sh: stopped" >&2
    ;;
  kill)
    dir=$(cat "$state/dir")
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
  resume)
    dir=$(cat "$state/dir")
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    ;;
  start)
    mkdir -p "$state"
    stop
    dir=$(mktemp -d "${TMPDIR:-/tmp}/twinbench-pg-XXXXXX")
    echo "$dir" >"$state/dir"
    if [[ $(id -u) -eq 0 ]]; then
      id postgres >/dev/null 2>&1 || { echo "pg_cluster.sh: running as root needs the 'postgres' user" >&2; exit 1; }
      chown postgres: "$dir"
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bindir/initdb" -D "$dir/data" -U twinbench_admin --auth-local=trust --auth-host=scram-sha-256 \
      --locale=C -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 300
shared_buffers = 32MB
# fsync off (the OS keeps the data; `kill` is the server's crash, not the machine's), but every
# acknowledged commit in the WAL before the reply, so that a killed server keeps it, as a real one does.
fsync = off
full_page_writes = off
CONF
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    echo "$port" >"$state/port"
    echo "postgresql://twinbench_admin@/postgres?host=$dir&port=$port" >"$state/url"
    echo "pg_cluster.sh: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on $dir and 127.0.0.1:$port" >&2
    ;;
  *)
    echo "usage: pg_cluster.sh start|stop|kill|resume STATE_DIR" >&2
    exit 2
    ;;
esac
