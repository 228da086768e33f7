#!/usr/bin/env bash
# backoffice.sh [throughput] [neighbour] [instances] [latency] [noop] | all:
# the background work ("back office") of the example server on PostgreSQL,
# measured from outside: over HTTP (merchant and operator APIs, /metrics),
# at webhook-sink, or through paykit's public Go API. Each part runs on
# fresh databases, the server with its default flags (plus -addr, -db and
# the bench's usual -rate-limit 0, so the load is not answered 429).
#
# throughput  For DURATION s, CONC workers of backoffice-load each create a
#             payment and approve it through the test helper; mch_demo has
#             one webhook endpoint at a healthy sink. Over [load start,
#             load stop]: events/s (GET /v1/events, by created_at),
#             deliveries/s at the sink, and their ratio; at load stop the
#             due jobs (paykit_jobs_due of /metrics); the backlog: the time
#             from load stop until the sink has every event. Then the same
#             load on a server without any endpoint: creates/s with and
#             without, and their ratio.
# neighbour   Merchant B (mch_demo) has a healthy endpoint; merchant A (made
#             through the operator API) one that never answers (sink -hang
#             forever). Without A's events, then after A makes A_EVENTS:
#             B makes NB payments, created and approved GAP apart, and one
#             of the Provider-timeout amount (…902). B's webhook lag (event
#             created_at -> arrival at the sink, first arrival of each
#             event made in the phase): p50, p99, max; B's recovery time
#             (create answer -> GET shows succeeded).
# instances   One server, an endpoint that hangs (INST_HANG: forever = never
#             answers, so each attempt ends at paykit's 15 s webhook timeout;
#             or a duration, then 200), INST_EVENTS payments made. When the
#             round of deliveries has run SECOND_AT s (from the first arrival
#             at the sink; the job lease is 1 min), the pending delivery jobs
#             are read (GET /operator/jobs: those whose lease has ended) and
#             INSTANCES-1 more servers start on the database. Until
#             INST_WINDOW s: deliveries the sink received while an earlier
#             request with the same webhook-id was still open there (a job
#             run twice while its first run is alive; a retry only follows
#             an attempt that ended), how many of the expired-lease jobs
#             that was, and the events each instance's log names that
#             another's log names too.
# latency     On an idle server (PostgreSQL, then SQLite: LAT_STORES), LAT_N
#             times: a payment created and approved, then the time from the
#             approve's answer until the sink has payment_intent.succeeded,
#             with a random pause of 0.3–1.3 s after each; p50 and max.
# noop        PAIRS interleaved pairs on fresh databases: paykit-noop (paykit
#             as a library: RegisterJobKind with a no-op handler, NOOP_N jobs
#             enqueued in transactions of 1,000 with EnqueueJobTx, then
#             Service.Run with its defaults) against river-anchor (River
#             v0.51.2, InsertMany, client defaults and RIVER_WORKERS workers):
#             jobs/s from the start of the worker until the handler ran every
#             job; ratio paykit / River.
#
# Writes results.tsv rows (suite bo-<part>; side = the measure, throughput
# = its value; the noop pairs as side paykit / river, conc = NOOP_N, so
# summarize.sh gives their median ratio), the tools' raw outputs, and
# backoffice-summary.md, which it prints at the end.
#
# Env: DURATION (60), CONC (32), BACKLOG_MAX (300 s), NB (10), GAP (200ms),
#      A_EVENTS (60), NEIGH_MAX (300 s), INSTANCES (2; 2 to 4),
#      INST_EVENTS (60), INST_HANG (forever), SECOND_AT (61), INST_WINDOW
#      (150), LAT_N (20), LAT_STORES ("pg sqlite"), NOOP_N (20000),
#      RIVER_WORKERS (1000), PAIRS (3), PORT (18080; sinks PORT+2 and
#      PORT+3, instances 2..4 PORT+4..PORT+6), DB_PREFIX (perf_; databases
#      ${DB_PREFIX}bo_*, dropped at the end), OUT, SERVER,
#      PGHOST PGPORT PGUSER (127.0.0.1 5432 postgres).
# Needs go, curl, psql.
set -euo pipefail
DURATION=${DURATION:-60}
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"

usage() {
  echo "usage: bench/backoffice.sh [throughput] [neighbour] [instances] [latency] [noop] | all" >&2
  exit 2
}
PARTS=()
for a in "$@"; do
  case $a in
  all) PARTS+=(throughput neighbour instances latency noop) ;;
  throughput | neighbour | instances | latency | noop) PARTS+=("$a") ;;
  *) usage ;;
  esac
done
[ ${#PARTS[@]} -gt 0 ] || usage

CONC=${CONC:-32}
BACKLOG_MAX=${BACKLOG_MAX:-300}
NB=${NB:-10}
GAP=${GAP:-200ms}
A_EVENTS=${A_EVENTS:-60}
NEIGH_MAX=${NEIGH_MAX:-300}
INSTANCES=${INSTANCES:-2}
INST_EVENTS=${INST_EVENTS:-60}
INST_HANG=${INST_HANG:-forever}
SECOND_AT=${SECOND_AT:-61}
INST_WINDOW=${INST_WINDOW:-150}
LAT_N=${LAT_N:-20}
LAT_STORES=${LAT_STORES:-pg sqlite}
NOOP_N=${NOOP_N:-20000}
RIVER_WORKERS=${RIVER_WORKERS:-1000}
HANG_PORT=$((PORT + 2))
SINK_PORT=$((PORT + 3))
case $INSTANCES in 2 | 3 | 4) ;; *) echo "INSTANCES must be 2, 3 or 4" >&2; exit 2 ;; esac

need go curl psql
pg_ready
echo "building into $BIN"
build_server
build_tool webhook-sink
build_tool backoffice-load
case " ${PARTS[*]} " in
*" noop "*)
  build_tool river-anchor
  # paykit-noop builds against the repository (replace ../..): when the
  # root module gained requirements since its go.sum was written, tidy it.
  if ! build_tool paykit-noop 2>"$OUT/paykit-noop.build"; then
    echo "paykit-noop: go mod tidy (the root module's requirements changed)"
    (cd "$BENCH_DIR/paykit-noop" && go mod tidy) && build_tool paykit-noop
  fi
  ;;
esac
SUMMARY=$OUT/backoffice-summary.md
results_header
echo "output: $OUT  (parts: ${PARTS[*]}; DURATION=${DURATION}s CONC=$CONC PAIRS=$PAIRS PORT=$PORT)"
{
  echo "# backoffice.sh $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (with changes)'), server $SERVER"
  echo
  echo "| part | measure | value |"
  echo "|---|---|---|"
} >"$SUMMARY"

# --- helpers -------------------------------------------------------------------

DBS=()
cleanup() {
  _bench_cleanup
  if [ ${#DBS[@]} -gt 0 ]; then pg_drop "${DBS[@]}" || true; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
calc() { awk "BEGIN{ $1 }"; }
# kv KEY LINE: the value of KEY=value in LINE ("NA" when absent).
kv() { tr ' ' '\n' <<<"$2" | awk -F= -v k="$1" '$1==k{print substr($0, length(k)+2); f=1; exit} END{if(!f) print "NA"}'; }
# summ PART MEASURE VALUE: a line of the summary table.
summ() { printf '| %s | %s | %s |\n' "$1" "$2" "$3" | tee -a "$SUMMARY"; }
# row SUITE CONC PAIR SIDE VALUE [P50 P99 ERRORS RSS CPU]: a results.tsv row.
row() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tNA\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-NA}" "${7:-NA}" "${8:-0}" \
    "${9:-NA}" "${10:-NA}" "$(load1)" >>"$RESULTS"
}

# fresh_db NAME: a fresh database, dropped at the end.
fresh_db() {
  pg_fresh "$1"
  DBS+=("$1")
}

# bo PORT COMMAND [flags]: backoffice-load against the server on PORT, as
# the merchant of BO_PK/BO_SK and the operator of BO_TOKEN.
bo() {
  local port=$1
  shift
  "$BIN/backoffice-load" -url "http://127.0.0.1:$port" "$@"
}

# as_server: the keys of the server start_paykit started last.
as_server() { export BO_PK=$PK_PUB BO_SK=$PK_SEC BO_TOKEN=$PK_TOKEN; }

# start_sink TAG PORT [flags]: webhook-sink logging to $OUT/TAG.sink.tsv;
# sets SINK_PID.
start_sink() {
  local tag=$1 port=$2
  shift 2
  port_free "$port"
  "$BIN/webhook-sink" -addr "127.0.0.1:$port" -every 0 -log "$OUT/$tag.sink.tsv" "$@" >"$OUT/$tag.sink" 2>&1 &
  SINK_PID=$!
  track "$SINK_PID"
  wait_port "$port"
}
sink_stats() { curl -sf "http://127.0.0.1:$1/stats"; }

# due_jobs PORT: "webhook_due all_due oldest_webhook_due_s" from /metrics.
due_jobs() {
  curl -sf "http://127.0.0.1:$1/metrics" | awk '
    /^paykit_jobs_due\{/ { all += $2; found = 1; if ($0 ~ /kind="webhook.deliver"/) wh = $2 }
    /^paykit_jobs_oldest_due_age_seconds\{kind="webhook.deliver"\}/ { old = $2 }
    END { if (!found) print "NA NA NA"; else printf "%s %s %s\n", wh + 0, all + 0, (old == "" ? "NA" : old) }' || echo "NA NA NA"
}

# lag_stats FILE SINCE: "n p50 p99 max" in seconds of the first arrival of
# each event created at or after SINCE (sink log: arrival, id, type,
# created_at, data id, nth, open).
lag_stats() {
  awk -F'\t' -v s="$2" '$6 == 1 && $4 >= s { print $1 - $4 }' "$1" | sort -g | awk '
    { a[NR] = $1 }
    END {
      if (NR == 0) { print "0 NA NA NA"; exit }
      i50 = int(NR * 0.50 + 0.999999); i99 = int(NR * 0.99 + 0.999999)
      printf "%d %.3f %.3f %.3f\n", NR, a[i50], a[i99], a[NR] }'
}

# --- throughput -----------------------------------------------------------------

# throughput_pass TAG ENDPOINT(yes|no): one load on a fresh database; sets
# LOAD (backoffice-load's answer), and with an endpoint EVENTS, DUE,
# DELIV, BACKLOG.
throughput_pass() {
  local tag=$1 endpoint=$2 db=${DB_PREFIX}bo_tp_$2 i st total uniq t0 t1 cpu0
  fresh_db "$db"
  if [ "$endpoint" = yes ]; then start_sink "$tag" "$SINK_PORT"; fi
  start_paykit "$tag" "$(pg_url "$db")" "$PORT"
  as_server
  if [ "$endpoint" = yes ]; then
    bo "$PORT" endpoint -merchant mch_demo -target "http://127.0.0.1:$SINK_PORT/hook" >/dev/null
  fi
  echo "== throughput, endpoint: $endpoint  uptime: $(uptime)" | tee -a "$OUT/uptime.log"
  cpu0=$(cpu_s "$PK_PID")
  LOAD=$(bo "$PORT" load -conc "$CONC" -duration "${DURATION}s" 2>"$OUT/$tag.load.err")
  DUE=$(due_jobs "$PORT")
  LOAD_CPU=$(calc "printf \"%.1f\", $(cpu_s "$PK_PID") - $cpu0")
  echo "load: $LOAD"
  echo "at load stop: webhook jobs due, all jobs due, oldest webhook due (s): $DUE"
  if [ "$endpoint" = yes ]; then
    t0=$(kv start_unix "$LOAD")
    t1=$(kv end_unix "$LOAD")
    EVENTS=$(bo "$PORT" events -after "$t0" -before "$t1")
    echo "events: $EVENTS"
    total=$(kv total "$EVENTS")
    for ((i = 0; i < BACKLOG_MAX * 2; i++)); do
      st=$(sink_stats "$SINK_PORT")
      uniq=$(kv unique "$st")
      [ "$uniq" -lt "$total" ] || break
      sleep 0.5
    done
    echo "sink: $st"
    stop_pid "$SINK_PID"
    DELIV=$(awk -F'\t' -v a="$t0" -v b="$t1" '$1 >= a && $1 < b { n++ } END { print n + 0 }' "$OUT/$tag.sink.tsv")
    if [ "$uniq" -ge "$total" ]; then
      BACKLOG=$(awk -F'\t' -v t="$t1" '$6 == 1 && $1 > m { m = $1 } END { printf "%.1f", m - t }' "$OUT/$tag.sink.tsv")
    else
      BACKLOG=">$BACKLOG_MAX (sink had $uniq of $total events)"
    fi
  fi
  stop_pid "$PK_PID"
  server_log_line "$tag"
  pg_drop "$db"
}

part_throughput() {
  local with without span ev_s de_s ratio c1 c2 win due
  throughput_pass bo-throughput-endpoint yes
  with=$LOAD
  span=$(calc "printf \"%.3f\", $(kv end_unix "$with") - $(kv start_unix "$with")")
  win=$(kv window "$EVENTS")
  ev_s=$(calc "printf \"%.1f\", $win / $span")
  de_s=$(calc "printf \"%.1f\", $DELIV / $span")
  ratio=$(calc "printf \"%.3f\", ($win > 0) ? $DELIV / $win : 0")
  read -r due _ _ <<<"$DUE"
  local due_all oldest cpu1
  read -r _ due_all oldest <<<"$DUE"
  cpu1=$LOAD_CPU
  throughput_pass bo-throughput-none no
  without=$LOAD
  c1=$(kv creates_per_s "$with")
  c2=$(kv creates_per_s "$without")
  row bo-throughput "c$CONC" 1 creates_per_s_endpoint "$c1" "$(kv create_p50_ms "$with")" "$(kv create_p99_ms "$with")" "$(kv errors "$with")" NA "$cpu1"
  row bo-throughput "c$CONC" 1 creates_per_s_none "$c2" "$(kv create_p50_ms "$without")" "$(kv create_p99_ms "$without")" "$(kv errors "$without")" NA "$LOAD_CPU"
  row bo-throughput "c$CONC" 1 events_per_s "$ev_s"
  row bo-throughput "c$CONC" 1 deliveries_per_s "$de_s"
  row bo-throughput "c$CONC" 1 deliveries_over_events "$ratio"
  row bo-throughput "c$CONC" 1 backlog_s "${BACKLOG%% *}"
  row bo-throughput "c$CONC" 1 webhook_jobs_due_at_stop "$due"
  summ throughput "load ($CONC workers × create+approve, ${DURATION} s, one endpoint): creates/s, approves/s, errors" \
    "$c1, $(kv approves_per_s "$with"), $(kv errors "$with") (create p50/p99 $(kv create_p50_ms "$with")/$(kv create_p99_ms "$with") ms)"
  summ throughput "events/s made; webhook deliveries/s at the sink (same window)" "$ev_s; $de_s"
  summ throughput "deliveries/s ÷ events/s" "**$ratio**"
  summ throughput "at load stop: webhook jobs due; all jobs due; oldest webhook due" "$due; $due_all; ${oldest} s"
  summ throughput "backlog: load stop → every event at the sink" "**${BACKLOG} s**"
  summ throughput "creates/s with an endpoint ÷ without (same load, no endpoint: $c2/s)" "$(calc "printf \"%.3f\", $c1 / $c2")"
  summ throughput "paykit CPU s during the load, with an endpoint / without" "$cpu1 / $LOAD_CPU"
}

# --- neighbour ------------------------------------------------------------------

part_neighbour() {
  local db=${DB_PREFIX}bo_neighbour tag=bo-neighbour a_id a_pk a_sk phase tp out ev total st uniq i lag n p50 p99 mx rec sink_a
  fresh_db "$db"
  start_sink "$tag-b" "$SINK_PORT"
  local sink_b=$SINK_PID
  start_sink "$tag-a" "$HANG_PORT" -hang forever
  sink_a=$SINK_PID
  start_paykit "$tag" "$(pg_url "$db")" "$PORT"
  as_server
  bo "$PORT" endpoint -merchant mch_demo -target "http://127.0.0.1:$SINK_PORT/hook" >/dev/null
  read -r a_id a_pk a_sk <<<"$(bo "$PORT" merchant -name "Noisy neighbour")"
  bo "$PORT" endpoint -merchant "$a_id" -target "http://127.0.0.1:$HANG_PORT/hook" >/dev/null
  local what
  for phase in without with; do
    what="without A's load"
    [ "$phase" = without ] || what="with A's $A_EVENTS events at its hanging endpoint"
    echo "== neighbour, $phase A  uptime: $(uptime)" | tee -a "$OUT/uptime.log"
    if [ "$phase" = with ]; then
      BO_PK=$a_pk BO_SK=$a_sk bo "$PORT" create -n "$A_EVENTS" -conc 8 | tee "$OUT/$tag-a.create"
      sleep 2 # A's deliveries are claimed and hang
      echo "A's sink: $(sink_stats "$HANG_PORT")"
    fi
    tp=$(now)
    out=$(bo "$PORT" neighbour -n "$NB" -gap "$GAP" -max "${NEIGH_MAX}s" 2>>"$OUT/$tag.$phase.err" || true)
    echo "B: $out"
    ev=$(bo "$PORT" events -after "$tp")
    total=$(kv total "$ev")
    for ((i = 0; i < NEIGH_MAX * 2; i++)); do
      st=$(sink_stats "$SINK_PORT")
      uniq=$(kv unique "$st")
      [ "$uniq" -lt "$total" ] || break
      sleep 0.5
    done
    echo "B's events in the phase: $(kv window "$ev"); B's sink: $st"
    sleep 1 # the sink writes its log every 0.5 s
    lag=$(lag_stats "$OUT/$tag-b.sink.tsv" "$tp")
    read -r n p50 p99 mx <<<"$lag"
    [ "$uniq" -ge "$total" ] || mx=">$NEIGH_MAX (sink had $uniq of $total)"
    rec=$(kv recovery_s "$out")
    [ "$(kv status "$out")" = succeeded ] || rec="$rec (status $(kv status "$out"))"
    row bo-neighbour "$phase-A" 1 b_webhook_lag_s "$p50" "$(calc "printf \"%.0f\", $p50 * 1000")" "$(calc "printf \"%.0f\", $p99 * 1000")" "$(kv errors "$out")"
    row bo-neighbour "$phase-A" 1 b_recovery_s "${rec%% *}"
    summ neighbour "$what: B's webhook lag p50 / p99 / max ($n events)" "**$p50 / $p99 / $mx s**"
    summ neighbour "$what: B's recovery of a …902 payment (create answer → GET succeeded)" "**$rec s**"
  done
  echo "A's sink: $(sink_stats "$HANG_PORT")"
  stop_pid "$PK_PID"
  server_log_line "$tag"
  stop_pid "$sink_a"
  stop_pid "$sink_b"
  pg_drop "$db"
}

# --- instances ------------------------------------------------------------------

# log_overlaps TAG: how many events have delivery attempts that overlap in
# time on two instances, as the servers' logs ($OUT/TAG-K.server.err) time
# them: a line naming event=evt_… with latency_ms=N ends an attempt that
# began N ms before the line's time. NA when no line says both.
log_overlaps() {
  local f
  for f in "$OUT/$1"-[0-9].server.err; do
    [ -f "$f" ] || continue
    awk -v inst="$f" '/event=evt_/ && /latency_ms=/ {
      t = ""; e = ""; l = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^time=/) t = substr($i, 6)
        else if ($i ~ /^event=/) e = substr($i, 7)
        else if ($i ~ /^latency_ms=/) l = substr($i, 12)
      }
      if (t == "" || e == "" || l == "") next
      # time=2026-11-29T08:28:57.371Z: seconds since the month began
      s = substr(t, 9, 2) * 86400 + substr(t, 12, 2) * 3600 + substr(t, 15, 2) * 60 + substr(t, 18, 6)
      printf "%s %s %.3f %.3f\n", e, inst, s - l / 1000, s }' "$f"
  done | sort -k1,1 -k3,3g | awk '
    $1 != ev { ev = $1; n = 0 }
    {
      for (j = 1; j <= n; j++) if (who[j] != $2 && st[j] < $4 && $3 < en[j]) hit[$1] = 1
      n++; who[n] = $2; st[n] = $3; en[n] = $4; lines++
    }
    END { if (!lines) { print "NA"; exit }; c = 0; for (e in hit) c++; print c }'
}

part_instances() {
  local db=${DB_PREFIX}bo_instances tag=bo-instances k st t0 i jobs pids=() tsv overl ovids repeats uniq total expired both shared lines
  fresh_db "$db"
  start_sink "$tag" "$HANG_PORT" -hang "$INST_HANG"
  local sink=$SINK_PID
  start_paykit "$tag-1" "$(pg_url "$db")" "$PORT"
  pids+=("$PK_PID")
  as_server
  bo "$PORT" endpoint -merchant mch_demo -target "http://127.0.0.1:$HANG_PORT/hook" >/dev/null
  echo "== instances: $INSTANCES, hang $INST_HANG  uptime: $(uptime)" | tee -a "$OUT/uptime.log"
  bo "$PORT" create -n "$INST_EVENTS" -conc 8 | tee "$OUT/$tag.create"
  for ((i = 0; i < 600; i++)); do
    st=$(sink_stats "$HANG_PORT")
    [ "$(kv total "$st")" -eq 0 ] || break
    sleep 0.1
  done
  t0=$(kv first_unix "$st")
  echo "round of deliveries started; second instance at +${SECOND_AT} s"
  # The jobs are read just before the second start (reading them takes a
  # few tens of ms), so a lease that ends by then is counted as ended.
  sleep "$(calc "w = $t0 + $SECOND_AT - 0.3 - $(now); printf \"%.2f\", (w > 0) ? w : 0")"
  jobs=$(bo "$PORT" jobs -kind webhook.deliver -expired-ids "$OUT/$tag.expired-ids" || echo "pending=NA lease_expired=NA")
  echo "just before the second start, webhook jobs: $jobs"
  echo "sink at the second start (+$(calc "printf \"%.1f\", $(now) - $t0") s): $(sink_stats "$HANG_PORT")"
  for ((k = 2; k <= INSTANCES; k++)); do
    start_paykit "$tag-$k" "$(pg_url "$db")" "$((PORT + 2 + k))"
    pids+=("$PK_PID")
  done
  sleep "$(calc "w = $t0 + $INST_WINDOW - $(now); printf \"%.1f\", (w > 0) ? w : 0")"
  echo "sink at +$INST_WINDOW s: $(sink_stats "$HANG_PORT")"
  for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
    stop_pid "${pids[k]}"
    server_log_line "$tag-$((k + 1))"
  done
  stop_pid "$sink"
  tsv=$OUT/$tag.sink.tsv
  total=$(awk 'END { print NR }' "$tsv")
  uniq=$(awk -F'\t' '$6 == 1' "$tsv" | wc -l)
  repeats=$((total - uniq))
  overl=$(awk -F'\t' '$7 > 0' "$tsv" | wc -l)
  awk -F'\t' '$7 > 0 { print $2 }' "$tsv" | sort -u >"$OUT/$tag.overlap-ids"
  ovids=$(wc -l <"$OUT/$tag.overlap-ids")
  expired=$(kv lease_expired "$jobs")
  if [ -s "$OUT/$tag.expired-ids" ]; then
    both=$(sort -u "$OUT/$tag.expired-ids" | comm -12 - "$OUT/$tag.overlap-ids" | wc -l)
  else
    both=0
  fi
  shared=$(log_overlaps "$tag")
  lines=$(for ((k = 1; k <= INSTANCES; k++)); do printf '%s ' "$(grep -c 'evt_' "$OUT/$tag-$k.server.err" || true)"; done)
  echo "sink: $total requests, $uniq webhook-ids, $repeats repeats, $overl overlapping ($ovids ids); expired-lease jobs before the second start: $expired, of which ran twice: $both"
  row bo-instances "i$INSTANCES" 1 overlapping_deliveries "$overl"
  row bo-instances "i$INSTANCES" 1 ids_run_twice "$ovids"
  row bo-instances "i$INSTANCES" 1 expired_lease_jobs_at_second_start "$expired"
  row bo-instances "i$INSTANCES" 1 expired_lease_jobs_run_twice "$both"
  row bo-instances "i$INSTANCES" 1 events_overlapping_in_logs "$shared"
  summ instances "$INSTANCES servers, $INST_EVENTS events, endpoint hang $INST_HANG, servers 2..$INSTANCES at +${SECOND_AT} s, window ${INST_WINDOW} s: requests at the sink / webhook-ids / repeats" "$total / $uniq / $repeats"
  summ instances "jobs run twice while the first run was alive (webhook-ids arriving while open at the sink; requests)" "**$ovids** ($overl)"
  summ instances "webhook jobs whose lease had ended just before the second start; of them run twice" "**$both of $expired** ($(kv pending "$jobs") pending: $(kv states "$jobs"))"
  summ instances "log lines naming an event, per instance; events whose attempts, as the logs time them, overlap on two instances" "$lines; **$shared**"
  pg_drop "$db"
}

# --- latency --------------------------------------------------------------------

part_latency() {
  local store db tag out last
  for store in $LAT_STORES; do
    tag=bo-latency-$store
    case $store in
    pg)
      fresh_db "${DB_PREFIX}bo_latency"
      db=$(pg_url "${DB_PREFIX}bo_latency")
      ;;
    sqlite)
      mkdir -p "$OUT/latency"
      sqlite_rm "$OUT/latency/pk.db"
      db=sqlite:$OUT/latency/pk.db
      ;;
    *) echo "LAT_STORES: pg or sqlite, not $store" >&2; return 1 ;;
    esac
    start_sink "$tag" "$SINK_PORT"
    start_paykit "$tag" "$db" "$PORT"
    as_server
    bo "$PORT" endpoint -merchant mch_demo -target "http://127.0.0.1:$SINK_PORT/hook" >/dev/null
    sleep 2
    echo "== latency $store  uptime: $(uptime)" | tee -a "$OUT/uptime.log"
    out=$(bo "$PORT" latency -n "$LAT_N" -sink "http://127.0.0.1:$SINK_PORT" 2>"$OUT/$tag.err" | tee "$OUT/$tag.samples")
    last=$(tail -n 1 <<<"$out")
    echo "$last"
    stop_pid "$PK_PID"
    server_log_line "$tag"
    stop_pid "$SINK_PID"
    row bo-latency "$store" 1 approve_to_webhook_ms "$(kv p50_ms "$last")" "$(kv p50_ms "$last")" "$(kv max_ms "$last")" "$(kv missing "$last")"
    summ latency "$store, idle: approve answer → payment_intent.succeeded at the sink, p50 / max ($(kv samples "$last") samples, $(kv missing "$last") missing)" \
      "**$(kv p50_ms "$last") / $(kv max_ms "$last") ms** (p90 $(kv p90_ms "$last"), min $(kv min_ms "$last"))"
    case $store in
    pg) pg_drop "${DB_PREFIX}bo_latency" ;;
    sqlite) sqlite_rm "$OUT/latency/pk.db" ;;
    esac
  done
}

# --- noop -----------------------------------------------------------------------

part_noop() {
  local p db out pk rv ratios=() ld
  for ((p = 1; p <= PAIRS; p++)); do
    echo "== noop pair $p  uptime: $(uptime)" | tee -a "$OUT/uptime.log"
    db=${DB_PREFIX}bo_noop_pk
    fresh_db "$db"
    ld=$(load1)
    out=$("$BIN/paykit-noop" -db "$(pg_url "$db")" -n "$NOOP_N" 2>"$OUT/bo-noop-p$p-paykit.err")
    echo "paykit: $out"
    pk=$(kv jobs_per_s "$out")
    printf 'noop\t%s\t%s\tpaykit\t%s\tNA\tNA\t%s\tNA\tNA\tNA\t%s\n' "$NOOP_N" "$p" "$pk" "$((NOOP_N - $(kv ran "$out")))" "$ld" >>"$RESULTS"
    pg_drop "$db"
    db=${DB_PREFIX}bo_noop_river
    fresh_db "$db"
    ld=$(load1)
    out=$("$BIN/river-anchor" -db "$(pg_url "$db")" -n "$NOOP_N" -workers "$RIVER_WORKERS" 2>"$OUT/bo-noop-p$p-river.err")
    echo "river:  $out"
    rv=$(kv jobs_per_s "$out")
    printf 'noop\t%s\t%s\triver\t%s\tNA\tNA\t%s\tNA\tNA\tNA\t%s\n' "$NOOP_N" "$p" "$rv" "$((NOOP_N - $(kv ran "$out")))" "$ld" >>"$RESULTS"
    pg_drop "$db"
    ratios+=("$(calc "printf \"%.3f\", $pk / $rv")")
    summ noop "pair $p: paykit / River jobs/s ($NOOP_N no-op jobs; River $RIVER_WORKERS workers)" "$pk / $rv = $(calc "printf \"%.3f\", $pk / $rv")"
  done
  summ noop "median ratio paykit / River ($PAIRS pairs)" "**$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')**"
}

for part in "${PARTS[@]}"; do
  echo
  echo "=== $part"
  "part_$part"
done
echo
cat "$SUMMARY"
