#!/usr/bin/env bash
# run.sh [pg] [sqlite] [memory] [pgsql] | all: builds what the chosen suites need,
# checks the prerequisites, runs the suites one after the other into one
# output directory and prints the summary with the median ratio per suite.
#
#   bench/run.sh all                          # every suite, 3 pairs of 10 s per concurrency
#   PAIRS=1 DURATION=5 bench/run.sh memory    # a quick look
#   bench/run.sh pgsql                        # paykit vs a replay of its own SQL (needs PGLOG)
#
# Env: PAIRS (3), DURATION (10), PORT (18080; the stripe-mock anchor uses PORT+1),
#      DB_PREFIX (perf_), OUT (default bench-out/<date-time>), CONNS (each suite's default),
#      PGHOST PGPORT PGUSER (127.0.0.1 5432 postgres)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"

usage() {
  echo "usage: bench/run.sh [pg] [sqlite] [memory] [pgsql] | all" >&2
  exit 2
}
SUITES=()
for a in "$@"; do
  case $a in
  all) SUITES+=(pg sqlite memory) ;;
  pg | sqlite | memory | pgsql) SUITES+=("$a") ;;
  *) usage ;;
  esac
done
[ ${#SUITES[@]} -gt 0 ] || usage

has() { case " ${SUITES[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
tools=(go wrk)
if has pg || has pgsql; then tools+=(pgbench psql); fi
if has pgsql; then tools+=(python3 curl); fi
need "${tools[@]}"
if has pg || has pgsql; then pg_ready; fi

echo "building into $BIN"
build_server
if has sqlite && [ -z "${ANCHOR:-}" ]; then
  build_tool sqlite-anchor
  ANCHOR=$BIN/sqlite-anchor
fi
if has memory; then ensure_stripe_mock; fi
export OUT BIN SERVER PAIRS DURATION PORT DB_PREFIX
if [ -n "${ANCHOR:-}" ]; then export ANCHOR; fi
if [ -n "${STRIPE_MOCK:-}" ]; then export STRIPE_MOCK; fi
echo "output: $OUT  (PAIRS=$PAIRS DURATION=${DURATION}s PORT=$PORT)"

declare -A seen=()
for s in "${SUITES[@]}"; do
  [ -z "${seen[$s]:-}" ] || continue
  seen[$s]=1
  case $s in
  pgsql) bash "$BENCH_DIR/run-pg-sql-pairs.sh" ;;
  *) bash "$BENCH_DIR/run-$s-pairs.sh" ;;
  esac
done

bash "$BENCH_DIR/summarize.sh" "$RESULTS" | tee "$OUT/summary.md"
echo
echo "results: $RESULTS; summary: $OUT/summary.md"
