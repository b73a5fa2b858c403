#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests (and for trying the PostgreSQL session store), on loopback only.
#
#   scripts/postgres.sh start DIR [PORT]   initdb into DIR/data if needed, start it on 127.0.0.1:PORT (default: a free
#                                          port), socket in DIR; prints the URI (postgresql://ragdial@127.0.0.1:PORT/ragdial)
#   scripts/postgres.sh stop DIR           stop it (the data stays in DIR; remove DIR to drop everything)
#
# Uses Debian's `postgresql` (installed with apt-get when missing and running as root). As root the server runs as the
# `postgres` user (PostgreSQL refuses to run as root), so DIR is handed to that user. Nothing outside DIR is written:
# no cluster under /etc/postgresql, no service. Authentication is `trust` for the one user `ragdial` on loopback: it is
# for tests, never for serving.
set -euo pipefail
cmd="${1:-}"
dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR [PORT]" >&2
  exit 2
fi

bindir() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then echo "$found"; return; fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  return 1
}

as_owner() {  # run a server command as the user owning the data (postgres when we are root)
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if ! bin="$(bindir)"; then
  if [ "$(id -u)" != 0 ]; then
    echo "PostgreSQL is not installed (Debian: apt-get install postgresql; run this script as root to install it)" >&2
    exit 1
  fi
  echo "postgres: installing Debian postgresql" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bin="$(bindir)"
fi

case "$cmd" in
  start)
    port="${3:-}"
    if [ -z "$port" ]; then
      port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    fi
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; chmod 700 "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -U ragdial -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" start >&2 \
      || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U ragdial -d postgres -qAt \
      -c "SELECT 1 FROM pg_database WHERE datname = 'ragdial'" | grep -q 1 \
      || as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U ragdial ragdial
    echo "postgresql://ragdial@127.0.0.1:$port/ragdial"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2; fi
    ;;
  *)
    echo "usage: $0 start|stop DIR [PORT]" >&2
    exit 2
    ;;
esac
