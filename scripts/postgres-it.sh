#!/usr/bin/env bash
# PostgreSQL integration check of the utility ledger: the same ledger tests that run on
# SQLite in `cargo test`, against a real, throw-away PostgreSQL server on loopback.
#
# 1. Installs Debian's `postgresql` package when no server binaries are found (apt-get).
# 2. initdb's a cluster in a temporary directory (as the `postgres` user: Debian's server
#    refuses root), password authentication on TCP for the role the wrong-password test
#    uses, and starts it on a free 127.0.0.1 port. Durability stays on (fsync,
#    synchronous_commit, full_page_writes); the memory and checkpoint settings are those
#    of a server sized for a write-heavy ledger (256 MB shared buffers, 16 MB WAL buffers,
#    checkpoints every 4 GB of WAL or 30 min) rather than the 128 MB / 1 GB defaults.
# 3. Runs the ledger tests of `cargo test --test cli utility_ledger` (and the traffic log's,
#    `traffic_log_`) that take a backend with REWARD_MEMORY_TEST_PG_URL set: each runs
#    against a fresh database of that server.
# The server is stopped and its directory removed on exit.
#
# Environment: PG_IT_KEEP=1 keeps the temp dir; PG_IT_FILTER overrides the test filter;
# PG_IT_SHELL=1 starts the server, prints the URL and waits (for benchmarks).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '[postgres-it] %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

find_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
    done
    return 1
}

PG_BIN=$(find_bin || true)
if [ -z "$PG_BIN" ]; then
    log "installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    PG_BIN=$(find_bin) || fail "no PostgreSQL server binaries after installing postgresql"
fi
log "server binaries: $PG_BIN ($("$PG_BIN/postgres" --version))"

RUN_AS=()
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
    RUN_AS=(runuser -u postgres --)
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-pgit.XXXXXX")
chmod 755 "$WORK"
DATA="$WORK/data"
cleanup() {
    local status=$?
    if [ -f "$DATA/postmaster.pid" ]; then
        "${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ "$status" -ne 0 ] && [ -f "$WORK/server.log" ]; then
        log "server log (last 30 lines):"
        tail -n 30 "$WORK/server.log" >&2 || true
    fi
    if [ "${PG_IT_KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASSWORD="it-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$PASSWORD" >"$WORK/pwfile"
mkdir -p "$DATA"
[ ${#RUN_AS[@]} -gt 0 ] && chown -R postgres "$WORK"
"${RUN_AS[@]}" "$PG_BIN/initdb" -D "$DATA" -U postgres --pwfile="$WORK/pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$WORK/initdb.log" 2>&1 \
    || { cat "$WORK/initdb.log" >&2; fail "initdb"; }
rm -f "$WORK/pwfile"
# Password authentication is checked for the `ledger_auth` role (the wrong-password
# test); the test user's own connections skip the deliberately slow SCRAM handshake.
{
    echo "host all ledger_auth 127.0.0.1/32 scram-sha-256"
    echo "host all postgres 127.0.0.1/32 trust"
    cat "$DATA/pg_hba.conf"
} >"$WORK/pg_hba.conf"
cp "$WORK/pg_hba.conf" "$DATA/pg_hba.conf"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$DATA" -l "$WORK/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $WORK -c max_connections=100 -c fsync=on -c synchronous_commit=on -c full_page_writes=on -c shared_buffers=256MB -c wal_buffers=16MB -c max_wal_size=4GB -c checkpoint_timeout=30min" \
    start >/dev/null || fail "server did not start"
log "server on 127.0.0.1:$PORT"

export REWARD_MEMORY_TEST_PG_URL="postgres://postgres:$PASSWORD@127.0.0.1:$PORT/postgres"

if [ "${PG_IT_SHELL:-0}" = 1 ]; then
    printf '%s\n' "$REWARD_MEMORY_TEST_PG_URL"
    log "PG_IT_SHELL=1: server stays up until this script is interrupted"
    while :; do sleep 3600 & wait $!; done
fi

START=$(date +%s)
# The tests that take a backend run on PostgreSQL only here (SQLite ran in `cargo test`);
# the file-system fault tests are SQLite-specific and skipped (the 57P03 test has its own
# stand-in server).
# The traffic log's tests (`traffic_log_*`: recall, apply and utility-attribute events,
# rank-evaluate --ledger) take a backend too.
FILTERS=("${PG_IT_FILTER:-utility_ledger}")
[ -z "${PG_IT_FILTER:-}" ] && FILTERS+=(traffic_log_)
(cd "$ROOT" && REWARD_MEMORY_TEST_PG_ONLY=1 cargo test --locked --quiet --test cli \
    "${FILTERS[0]}" -- "${FILTERS[@]:1}" --skip sigkill --skip full_disk --skip bad_ledger_files \
    --skip new_ledger_file --skip printed_ledger_packets --skip damaged_ledger \
    --skip append_checks --skip read_only --skip pretty_printed --skip server_starting_up) \
    || fail "ledger tests against PostgreSQL"
log "PASS ($(( $(date +%s) - START )) s of tests)"
