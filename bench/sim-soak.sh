#!/usr/bin/env bash
# sim-soak.sh: the PostgreSQL side of paykit's simulation (internal/sim):
# SERVERS example servers on one fresh database, mixed merchant load with
# retries under Idempotency-Keys for DURATION, a server killed with SIGKILL
# and restarted every KILL_EVERY while it runs, then the simulation's
# invariants checked on the database and the sandbox PSP's tables (ledger,
# refunds and disputes within payments, everything final, paykit's books
# equal to the PSP's, reconciliation, byte-identical replays, every event
# delivered). Exits non-zero when an invariant broke.
#
# Env: SERVERS (3), DURATION (2m), WORKERS (6), KILL_EVERY (3s), SETTLE (4m),
#      SEED (random; printed), KEEP (1: keep the database and logs),
#      PGHOST PGPORT PGUSER (127.0.0.1 5432 postgres), SERVER (default:
#      built from ./examples/server)
# Uses and drops a database paykit_soak_<random>.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
pg="postgres://${PGUSER:-postgres}@${PGHOST:-127.0.0.1}:${PGPORT:-5432}/postgres?sslmode=disable"
args=(-pg "$pg" -servers "${SERVERS:-3}" -duration "${DURATION:-2m}" -workers "${WORKERS:-6}"
	-kill-every "${KILL_EVERY:-3s}" -settle "${SETTLE:-4m}")
[[ -n "${SEED:-}" ]] && args+=(-seed "$SEED")
[[ -n "${SERVER:-}" ]] && args+=(-server-bin "$SERVER")
[[ "${KEEP:-}" == 1 ]] && args+=(-keep)
exec go run ./internal/sim/cmd/paykit-soak "${args[@]}"
