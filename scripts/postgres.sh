#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and the benchmarks, from Debian's packages, in a
# directory of its own, listening on a loopback port with password (SCRAM) authentication.
#
#   ./scripts/postgres.sh start DIR [--until-pid PID]   prints the server's URL (no password in
#                                                       it: DIR/pgpass holds it, for PGPASSFILE)
#   ./scripts/postgres.sh stop DIR | restart DIR
#
# With --until-pid, the server stops by itself once that process is gone (a test run that
# started it and ended, however it ended).
set -euo pipefail

cmd=${1:?start, stop or restart}
dir=$(realpath -m "${2:?a directory}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    printf 'assent-test\n' > "$dir/pwfile"
    [ "$(id -u)" = 0 ] && chown -R postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U assent --pwfile="$dir/pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 -E UTF8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/pwfile"
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 300
synchronous_commit = on
fsync = on
CONF
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    echo "127.0.0.1:$port:*:assent:assent-test" >"$dir/pgpass"
    chmod 600 "$dir/pgpass"
    echo "$port" >"$dir/port"
    if [ "${3:-}" = --until-pid ]; then
        watch=${4:?a process id}
        nohup bash -c "while kill -0 $watch 2>/dev/null; do sleep 1; done; $(declare -f as_owner); as_owner '$bin/pg_ctl' -D '$dir/data' -m immediate stop >/dev/null 2>&1; rm -rf '$dir'" \
            >/dev/null 2>&1 &
    fi
    echo "postgres://assent@127.0.0.1:$port/postgres"
    ;;
stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 restart -l "$dir/server.log" >/dev/null
    ;;
*)
    echo "usage: $0 start|stop|restart DIR" >&2
    exit 2
    ;;
esac
