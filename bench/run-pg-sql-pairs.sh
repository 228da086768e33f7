#!/usr/bin/env bash
# run-pg-sql-pairs.sh: where a create's time goes on PostgreSQL. Captures
# the statements of one create (POST /v1/payment_intents) from the server
# log, turns them into a pgbench script replaying paykit's own SQL with
# fresh ids and times (pg-templatize.py), and interleaves, per pair: paykit
# under wrk, pgbench replaying paykit's SQL on paykit's schema, and the
# anchor (pgbench-create.sql). paykit / replay is what paykit's own process
# costs on top of its SQL; replay / anchor is what its SQL and schema cost
# beside the minimal two transactions.
#
# Env: PGLOG (default: the newest /var/log/postgresql/postgresql-*-main.log),
#      PGHOST PGPORT PGUSER, PORT (18080), CONNS ("8 32"), PAIRS (3), DURATION (10),
#      OUT, DB_PREFIX (perf_), SERVER (default: built from ./examples/server)
# Creates and drops ${DB_PREFIX}pk, ${DB_PREFIX}sql, ${DB_PREFIX}sqlt, ${DB_PREFIX}pgb.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
need wrk pgbench psql go python3 curl
pg_ready
if [ -z "${PGLOG:-}" ]; then
  PGLOG=$(find /var/log/postgresql -maxdepth 1 -name 'postgresql-*-main.log' 2>/dev/null | sort -V | tail -n 1)
fi
[ -r "${PGLOG:-}" ] || { echo "set PGLOG to a readable PostgreSQL server log" >&2; exit 1; }
build_server
results_header
CONNS=${CONNS:-"8 32"}
PKDB=${DB_PREFIX}pk
TPL=${DB_PREFIX}sqlt # paykit's schema with its demo merchant: the replay's template
SQLDB=${DB_PREFIX}sql
PGBDB=${DB_PREFIX}pgb

# Capture: a warm create, then one logged in full (log_statement on for
# the template database's new sessions only; the worker is idle).
pg_fresh "$TPL"
start_paykit capture "$(pg_url "$TPL")" "$PORT" -keys "$OUT/sql.keys" -worker-interval 1h
create() {
  curl -s -o /dev/null -w '%{http_code}' -u "$PK_PUB:$PK_SEC" -H "Idempotency-Key: $1" -H 'Content-Type: application/json' \
    -d "{\"amount\":\"15000\",\"currency\":\"MYR\",\"country\":\"MY\",\"merchant_reference\":\"$1\",\"payment_method\":\"FPX\",\"payment_method_options\":{\"bank\":\"MAYBANK\"},\"customer\":{\"name\":\"A\",\"email\":\"a@example.com\"}}" \
    "http://127.0.0.1:$PORT/v1/payment_intents"
}
[ "$(create "warm$RANDOM")" = 201 ] || { echo "warm-up create failed" >&2; exit 1; }
stop_pid "$PK_PID"
psql -qX -d postgres -c "ALTER DATABASE $TPL SET log_statement = 'all'"
from0=$(wc -l <"$PGLOG")
start_paykit capture "$(pg_url "$TPL")" "$PORT" -keys "$OUT/sql.keys" -worker-interval 1h
[ "$(create "warm$RANDOM")" = 201 ] || { echo "warm-up create failed" >&2; exit 1; }
key="capture$RANDOM$RANDOM"
from=$(wc -l <"$PGLOG")
[ "$(create "$key")" = 201 ] || { echo "captured create failed" >&2; exit 1; }
sleep 0.5
stop_pid "$PK_PID"
psql -qX -d postgres -c "ALTER DATABASE $TPL RESET log_statement"
# The statements prepared once per connection (sqlstore's PREPARE, sent
# before a connection's first batched transaction; pgx's, for a statement
# sent with parameters): the replay prepares them once per pgbench client.
tail -n +"$((from0 + 1))" "$PGLOG" | python3 "$BENCH_DIR/pg-log-queries.py" "$TPL" \
  | grep '^PREPARE ' | awk '!seen[$2]++' >"$OUT/prepare.sql" || true
tail -n +"$((from + 1))" "$PGLOG" | python3 "$BENCH_DIR/pg-log-queries.py" "$TPL" \
  | grep -v -e '^-- ping' -e 'perf_' -e '^PREPARE ' >"$OUT/create.sql"
python3 "$BENCH_DIR/pg-templatize.py" "$OUT/create.sql" "$OUT/create-replay.pgb" "$key" "$OUT/prepare.sql"
echo "captured $(wc -l <"$OUT/create.sql") queries (round trips) of one create: $OUT/create.sql"

pg_fresh "$PGBDB"
psql -qX -d "$PGBDB" -f "$BENCH_DIR/pgbench-schema.sql" 2>/dev/null

# run_pgbench TAG SCRIPT DB CONC PAIR SUITE LABEL...: one pgbench run, its
# row written under each SUITE LABEL pair given.
run_pgbench() {
  local tag=$1 script=$2 db=$3 ld tps p50 p99 failed
  ld=$(load1)
  rm -f "$OUT/$tag.log"*
  pgbench -n -c "$4" -j2 -T "$DURATION" -D prepared=0 -f "$script" -l --log-prefix="$OUT/$tag.log" "$db" >"$OUT/$tag.out" 2>&1
  tps=$(awk '/^tps =/{print $3}' "$OUT/$tag.out")
  failed=$(awk '/number of failed transactions/{print $5}' "$OUT/$tag.out")
  p50=$(pct_from_pgbench_logs 0.50 "$OUT/$tag.log"*)
  p99=$(pct_from_pgbench_logs 0.99 "$OUT/$tag.log"*)
  rm -f "$OUT/$tag.log"*
  local conc=$4 pair=$5
  shift 5
  while [ $# -ge 2 ]; do
    anchor_row "$1" "$conc" "$pair" "$2" "$tps" "$p50" "$p99" "${failed:-NA}" 0 NA NA "$ld"
    shift 2
  done
}

run_paykit() { # conc pair
  pg_fresh "$PKDB"
  paykit_run pgsql "$1" "$2" "$(pg_url "$PKDB")" -keys "$OUT/pg.keys"
}

run_anchor() { # conc pair: the replay of paykit's SQL, then the anchor
  psql -qX -d postgres -c "DROP DATABASE IF EXISTS $SQLDB WITH (FORCE)" -c "CREATE DATABASE $SQLDB TEMPLATE $TPL"
  # pgsql: paykit vs the replay of its SQL; pgsql-replay: that replay (as
  # the A side) vs the anchor.
  run_pgbench "pgsql-c$1-p$2-replay" "$OUT/create-replay.pgb" "$SQLDB" "$1" "$2" pgsql paykit-sql pgsql-replay paykit
  psql -qX -d "$PGBDB" -c "TRUNCATE idem, intents, jobs, events" -c "CHECKPOINT"
  run_pgbench "pgsql-c$1-p$2-pgbench" "$BENCH_DIR/pgbench-create.sql" "$PGBDB" "$1" "$2" pgsql-replay pgbench
}

run_pairs pgsql
pg_drop "$PKDB" "$SQLDB" "$TPL" "$PGBDB"
