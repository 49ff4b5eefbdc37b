#!/usr/bin/env bash
# Starts (or stops) the PostgreSQL server the tests use: loopback only, port
# 55432, password authentication, user bench / password benchpw, database ycsb.
# Installs Debian's postgresql package when it is missing.
#   scripts/postgres.sh start | stop | url
set -euo pipefail
PORT=${YARDSTICK_PG_PORT:-55432}
DATA=${YARDSTICK_PG_DATA:-/tmp/yardstick-pg}
URL="postgres://bench:benchpw@127.0.0.1:$PORT/ycsb"

bindir() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$d" ]; then
        echo "scripts/postgres.sh: installing postgresql with apt-get" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
        d=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    echo "$d"
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    BIN=$(bindir)
    if [ ! -s "$DATA/PG_VERSION" ]; then
        rm -rf "$DATA" && mkdir -p "$DATA"
        [ "$(id -u)" = 0 ] && chown postgres:postgres "$DATA"
        pw=$(mktemp) && echo postgres >"$pw" && chmod 644 "$pw"
        as_pg "$BIN/initdb" -D "$DATA" -U postgres --pwfile="$pw" \
            --auth-local=trust --auth-host=scram-sha-256 >/dev/null
        rm -f "$pw"
    fi
    if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
        as_pg "$BIN/pg_ctl" -D "$DATA" -w -l "$DATA/server.log" \
            -o "-p $PORT -c listen_addresses=127.0.0.1 -k $DATA -c fsync=off -c max_connections=200" start >/dev/null
    fi
    psql_() { as_pg "$BIN/psql" -h "$DATA" -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
    psql_ -c "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='bench') THEN CREATE ROLE bench LOGIN CREATEDB PASSWORD 'benchpw'; END IF; END\$\$;"
    [ "$(psql_ -c "SELECT 1 FROM pg_database WHERE datname='ycsb'")" = 1 ] || psql_ -c "CREATE DATABASE ycsb OWNER bench"
    echo "$URL"
    ;;
stop)
    BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -n "$BIN" ] && [ -s "$DATA/PG_VERSION" ]; then
        as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
    fi
    ;;
url) echo "$URL" ;;
*) echo "usage: scripts/postgres.sh start|stop|url" >&2; exit 2 ;;
esac
