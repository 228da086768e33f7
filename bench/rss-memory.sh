#!/usr/bin/env bash
# rss-memory.sh: memory per payment on the memory Store. Starts the example
# server with -db memory (sandbox Provider, default flags otherwise, rate
# limit off, pprof on PPROF_PORT), makes WARMUP creates, then N creates with
# wrk (wrk-paykit-create.lua: unique Idempotency-Key per request), and
# reads VmRSS from /proc/PID/status and, after a GC forced through pprof
# (/debug/pprof/heap?gc=1), VmRSS again and the Go heap in use. It does so
# at the baseline (after the warm-up), right after the creates and after
# SETTLE seconds (the worker's follow-up jobs of a create come due within
# 30 s), and prints kB per create against the baseline. The count of
# creates is the server's own (paykit_http_requests_total, 201s of
# POST /payment_intents). The sandbox PSP runs in the same process and
# keeps its own record of each payment, so it is counted too.
#
# Env: N (100000), WARMUP (1000), CONC (8), SETTLE (35), PORT (18080), PPROF_PORT (PORT+2),
#      OUT, SERVER (default: built from ./examples/server)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
need wrk curl go
build_server
N=${N:-100000}
WARMUP=${WARMUP:-1000}
CONC=${CONC:-8}
SETTLE=${SETTLE:-35}
PPROF_PORT=${PPROF_PORT:-$((PORT + 2))}
THREADS=2
port_free "$PPROF_PORT"
start_paykit rss memory "$PORT" -pprof-addr "127.0.0.1:$PPROF_PORT"

# creates COUNT TAG: about COUNT creates (each wrk thread stops after its
# share of 2xx answers, so up to CONC more are in flight then).
creates() {
  local count=$1 tag=$2 done_file="$OUT/rss.$2.done" wpid
  : >"$done_file"
  WRK_STOP_AFTER=$(((count + THREADS - 1) / THREADS)) WRK_DONE_FILE=$done_file \
    wrk -t"$THREADS" -c"$CONC" -d3600s --timeout 10s --latency -s "$BENCH_DIR/wrk-paykit-create.lua" \
    "http://127.0.0.1:$PORT" -- "$PK_PUB" "$PK_SEC" >"$OUT/rss.$tag.wrk" 2>&1 &
  wpid=$!
  track "$wpid"
  while :; do
    [ "$(wc -l <"$done_file")" -ge "$THREADS" ] && break
    kill -0 "$wpid" 2>/dev/null || break
    kill -0 "$PK_PID" 2>/dev/null || { echo "server exited" >&2; return 1; }
    sleep 0.2
  done
  kill -INT "$wpid" 2>/dev/null || true
  wait "$wpid" || true
}

# created: 201 answers of POST /payment_intents so far, from /metrics.
created() {
  curl -sf "http://127.0.0.1:$PORT/metrics" |
    awk '/^paykit_http_requests_total\{/ && /route="POST \/payment_intents"/ && /status="201"/ {s+=$NF} END{printf "%d", s}'
}

# measure: "rss_kb rss_after_gc_kb heap_alloc_kb heap_inuse_kb"
measure() {
  local rss gc heap
  rss=$(rss_kb "$PK_PID")
  heap=$(curl -sf "http://127.0.0.1:$PPROF_PORT/debug/pprof/heap?gc=1&debug=1" |
    awk '$1=="#" && $2=="HeapAlloc" {a=$4} $1=="#" && $2=="HeapInuse" {u=$4} END{printf "%d %d", a/1024, u/1024}')
  gc=$(rss_kb "$PK_PID")
  echo "$rss $gc $heap"
}

row() { # phase creates rss gc heap inuse
  printf '| %s | %s | %s | %s | %s | %s |\n' "$@"
}

per() { # kB now base creates
  awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN{ if (n>0) printf "%.2f", (a-b)/n; else print "NA" }'
}

read -r s_rss s_gc s_heap s_inuse <<<"$(measure)"
creates "$WARMUP" warmup
c0=$(created)
read -r b_rss b_gc b_heap b_inuse <<<"$(measure)"
echo "creating $N payments (wrk -t$THREADS -c$CONC) ..."
t0=$SECONDS
creates "$N" load
c1=$(created)
n=$((c1 - c0))
read -r a_rss a_gc a_heap a_inuse <<<"$(measure)"
echo "$n creates in $((SECONDS - t0)) s; settling $SETTLE s ..."
sleep "$SETTLE"
read -r z_rss z_gc z_heap z_inuse <<<"$(measure)"

{
  echo "### memory Store: $n creates after $c0 warm-up creates"
  echo
  echo "| phase | creates | VmRSS kB | VmRSS after GC kB | HeapAlloc after GC kB | HeapInuse after GC kB |"
  echo "|---|---|---|---|---|---|"
  row start 0 "$s_rss" "$s_gc" "$s_heap" "$s_inuse"
  row "baseline (after warm-up)" "$c0" "$b_rss" "$b_gc" "$b_heap" "$b_inuse"
  row "after the creates" "$c1" "$a_rss" "$a_gc" "$a_heap" "$a_inuse"
  row "after $SETTLE s settle" "$(created)" "$z_rss" "$z_gc" "$z_heap" "$z_inuse"
  echo
  echo "kB per create against the baseline:"
  echo
  echo "| phase | VmRSS | VmRSS after GC | HeapAlloc after GC |"
  echo "|---|---|---|---|"
  echo "| after the creates | $(per "$a_rss" "$b_rss" "$n") | $(per "$a_gc" "$b_gc" "$n") | $(per "$a_heap" "$b_heap" "$n") |"
  echo "| after $SETTLE s settle | $(per "$z_rss" "$b_rss" "$n") | $(per "$z_gc" "$b_gc" "$n") | $(per "$z_heap" "$b_heap" "$n") |"
  echo
  echo "load: $(grep -E 'requests in|Requests/sec|Non-2xx|Socket' "$OUT/rss.load.wrk" | tr -s ' ' | tr '\n' ';')"
} | tee "$OUT/rss-memory.md"
stop_pid "$PK_PID"
server_log_line rss
