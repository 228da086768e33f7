#!/usr/bin/env bash
# worker.sh [pg] [sqlite]: how fast the example server's background work
# resolves payments whose Provider call timed out (recoveries/s) and
# delivers webhooks (deliveries/s), per Store (default: both).
#
# Per Store, on a fresh database:
#  1. backlog: a server with -worker-interval 1h (its worker and the sandbox
#     PSP's callbacks idle after their first round) and a webhook endpoint of
#     mch_demo pointing at webhook-sink; wrk creates payments of the sandbox
#     "timeout" magic amount (…902: the create answers 201 processing after
#     the adapter's 3 s timeout) for LOAD_SECONDS at CONC connections. The
#     server is stopped once every job of theirs is due (a create's
#     payment.inquire job is due 30 s after it).
#  2. drain: a server on the same database with -worker-interval
#     WORKER_INTERVAL; T0 is when it is started (its start-up time is
#     printed and counted in the rates). Its worker inquires
#     (the sandbox says succeeded) while the PSP's callbacks also arrive,
#     and both kinds of webhook (processing, succeeded) go to the sink. The
#     drain ends when no payment is processing and no job is due.
# recoveries/s = payments succeeded / (last succeeded updated_at - T0)
# deliveries/s = webhooks the sink received / (its last arrival - T0)
# jobs/s       = jobs completed after T0 / (last completed_at - T0)
# Recoveries and deliveries share the worker in the drain, so each rate is
# measured while the other work runs too.
#
# Env: CONC (300), LOAD_SECONDS (20), AMOUNT (10902), SANDBOX_DELAY (100ms), WORKER_INTERVAL (1s),
#      MAX_WAIT (240 s for the drain), PORT (18080), SINK_PORT (PORT+3),
#      PGHOST PGPORT PGUSER (127.0.0.1 5432 postgres), DB_PREFIX (perf_), OUT,
#      SERVER, SINK (default: built from ./examples/server and bench/webhook-sink)
# Uses and drops database ${DB_PREFIX}pk_worker; SQLite files go to $OUT/worker.
# Needs psql for pg and sqlite3 for sqlite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
STORES=("$@")
[ ${#STORES[@]} -gt 0 ] || STORES=(pg sqlite)
need wrk curl go
for s in "${STORES[@]}"; do
  case $s in
  pg) need psql && pg_ready ;;
  sqlite) need sqlite3 ;;
  *) echo "unknown store $s (pg or sqlite)" >&2; exit 2 ;;
  esac
done
build_server
if [ -z "${SINK:-}" ]; then
  build_tool webhook-sink
  SINK=$BIN/webhook-sink
fi
CONC=${CONC:-300}
LOAD_SECONDS=${LOAD_SECONDS:-20}
AMOUNT=${AMOUNT:-10902}
SANDBOX_DELAY=${SANDBOX_DELAY:-100ms}
WORKER_INTERVAL=${WORKER_INTERVAL:-1s}
MAX_WAIT=${MAX_WAIT:-240}
SINK_PORT=${SINK_PORT:-$((PORT + 3))}
PGDB=${DB_PREFIX}pk_worker
WDIR=$OUT/worker
mkdir -p "$WDIR"
WTSV=$OUT/worker.tsv
[ -f "$WTSV" ] || printf 'store\tpayments\tsucceeded\trecovery_s\trecoveries_per_s\tdeliveries\tdelivery_s\tdeliveries_per_s\tjobs\tjobs_s\tjobs_per_s\twebhook_failed\tload1\n' >"$WTSV"

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a-b}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.1f", a/b; else print "NA" }'; }

# q SQL: one query on the current store; columns separated by a space.
# T(col) is the SQL of a timestamp column in Unix seconds.
q() {
  case $STORE in
  pg) psql -qXAt -F' ' -d "$PGDB" -c "$1" ;;
  sqlite) sqlite3 -cmd '.timeout 5000' -separator ' ' "$WDIR/pk.db" "$1" ;;
  esac
}
T() {
  case $STORE in
  pg) echo "extract(epoch FROM $1)" ;;
  sqlite) echo "((julianday($1) - 2440587.5) * 86400.0)" ;;
  esac
}
NOW_SQL() {
  case $STORE in
  pg) echo "extract(epoch FROM now())" ;;
  sqlite) echo "((julianday('now') - 2440587.5) * 86400.0)" ;;
  esac
}

# snapshot: status counts, due jobs, webhook attempts.
snapshot() {
  echo "t=$(sub "$(now)" "${T0:-$TL}") $(q "SELECT status || '=' || count(*) FROM payment_intents GROUP BY status ORDER BY status" | tr '\n' ' ')| due jobs: $(q "SELECT count(*) FROM jobs WHERE completed_at IS NULL AND $(T run_at) <= $(NOW_SQL)") | webhook attempts: $(q "SELECT count(*) FROM webhook_attempts")"
}

run_store() {
  local tag=worker-$STORE db ld i s t_due wait_s TL T0 sink_pid
  case $STORE in
  pg) pg_fresh "$PGDB"; db=$(pg_url "$PGDB") ;;
  sqlite) sqlite_rm "$WDIR/pk.db"; db=sqlite:$WDIR/pk.db ;;
  esac
  echo "== worker $STORE  uptime: $(uptime)" | tee -a "$OUT/uptime.log"

  # 1. backlog, worker idle
  start_paykit "$tag-load" "$db" "$PORT" -keys "$OUT/$tag.keys" -sandbox-delay "$SANDBOX_DELAY" -worker-interval 1h
  curl -sf -H "Authorization: Bearer $PK_TOKEN" -H 'Content-Type: application/json' -H "Idempotency-Key: wh-$RANDOM$RANDOM" \
    -d "{\"environment\":\"test\",\"url\":\"http://127.0.0.1:$SINK_PORT/hook\"}" \
    "http://127.0.0.1:$PORT/operator/merchants/mch_demo/webhook_endpoints" >"$OUT/$tag.endpoint.json"
  TL=$(now)
  wrk -t2 -c"$CONC" -d"${LOAD_SECONDS}s" --timeout 10s --latency -s "$BENCH_DIR/wrk-paykit-create.lua" \
    "http://127.0.0.1:$PORT" -- "$PK_PUB" "$PK_SEC" "$AMOUNT" >"$OUT/$tag.wrk" 2>&1
  echo "load: $(grep -E 'requests in|Requests/sec|Non-2xx|Socket' "$OUT/$tag.wrk" | tr -s ' ' | tr '\n' ';')"
  sleep 4 # creates still waiting for the adapter's 3 s timeout
  t_due=$(q "SELECT coalesce(max($(T run_at)), 0) FROM jobs WHERE completed_at IS NULL AND kind <> 'payment.expire'")
  wait_s=$(awk -v d="$t_due" -v n="$(now)" 'BEGIN{w=d-n+1; if (w<0) w=0; if (w>120) w=120; printf "%d", w}')
  echo "backlog: $(snapshot); waiting ${wait_s} s until its jobs are due"
  sleep "$wait_s"
  stop_pid "$PK_PID"
  server_log_line "$tag-load"

  # 2. drain
  port_free "$SINK_PORT"
  "$SINK" -addr "127.0.0.1:$SINK_PORT" -every 0 >"$OUT/$tag.sink" 2>&1 &
  sink_pid=$!
  track "$sink_pid"
  wait_port "$SINK_PORT"
  ld=$(load1)
  T0=$(now) # the worker starts before the server prints its keys
  start_paykit "$tag-drain" "$db" "$PORT" -keys "$OUT/$tag.keys" -sandbox-delay "$SANDBOX_DELAY" -worker-interval "$WORKER_INTERVAL"
  echo "drain server ready after $(sub "$(now)" "$T0") s"
  : >"$OUT/$tag.timeline"
  for ((i = 0; i < MAX_WAIT * 2; i++)); do
    s=$(snapshot)
    echo "$s" >>"$OUT/$tag.timeline"
    if ! echo "$s" | grep -q 'processing=' && echo "$s" | grep -q 'due jobs: 0 '; then break; fi
    sleep 0.5
  done
  echo "drained: $s"
  curl -sf "http://127.0.0.1:$PORT/metrics" | grep '^paykit_job_attempts_total' >"$OUT/$tag.job-attempts" || true
  sleep 1
  stop_pid "$PK_PID"
  server_log_line "$tag-drain"
  stop_pid "$sink_pid"

  local payments succ t_succ deliv t_deliv jobs t_jobs wfail rec_s del_s jobs_s
  payments=$(q "SELECT count(*) FROM payment_intents")
  succ=$(q "SELECT count(*) FROM payment_intents WHERE status = 'succeeded'")
  t_succ=$(q "SELECT coalesce(max($(T updated_at)), 0) FROM payment_intents WHERE status = 'succeeded'")
  jobs=$(q "SELECT count(*) FROM jobs WHERE completed_at IS NOT NULL AND $(T completed_at) >= $T0")
  t_jobs=$(q "SELECT coalesce(max($(T completed_at)), 0) FROM jobs WHERE completed_at IS NOT NULL")
  wfail=$(q "SELECT count(*) FROM webhook_attempts WHERE NOT succeeded")
  deliv=$(awk '/^total=/{for(i=1;i<=NF;i++) if ($i ~ /^total=/) {sub(/total=/,"",$i); print $i}}' "$OUT/$tag.sink")
  t_deliv=$(awk '/^total=/{for(i=1;i<=NF;i++) if ($i ~ /^last_unix=/) {sub(/last_unix=/,"",$i); print $i}}' "$OUT/$tag.sink")
  rec_s=$(sub "$t_succ" "$T0")
  del_s=$(sub "$t_deliv" "$T0")
  jobs_s=$(sub "$t_jobs" "$T0")
  echo "events by type: $(q "SELECT type || '=' || count(*) FROM events GROUP BY type ORDER BY type" | tr '\n' ' ')"
  echo "job attempts by kind (drain server): $(awk '{match($0, /kind="[^"]*"/); printf "%s=%s ", substr($0, RSTART+6, RLENGTH-7), $NF}' "$OUT/$tag.job-attempts")"
  echo "worker $STORE: $payments payments, $succ succeeded in $rec_s s: $(div "$succ" "$rec_s") recoveries/s;" \
    "$deliv webhooks delivered in $del_s s: $(div "$deliv" "$del_s") deliveries/s ($wfail failed attempts);" \
    "$jobs jobs in $jobs_s s: $(div "$jobs" "$jobs_s") jobs/s"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$STORE" "$payments" "$succ" "$rec_s" "$(div "$succ" "$rec_s")" \
    "$deliv" "$del_s" "$(div "$deliv" "$del_s")" "$jobs" "$jobs_s" "$(div "$jobs" "$jobs_s")" "$wfail" "$ld" >>"$WTSV"
  case $STORE in
  pg) pg_drop "$PGDB" ;;
  sqlite) sqlite_rm "$WDIR/pk.db" ;;
  esac
}

for STORE in "${STORES[@]}"; do run_store; done
echo
echo "| store | payments | succeeded | recoveries/s | webhooks | deliveries/s | jobs/s | failed attempts | load1 |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -F'\t' 'NR>1 {printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $6, $8, $11, $12, $13}' "$WTSV"
