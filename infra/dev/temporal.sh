#!/usr/bin/env bash
# Local Temporal dev server for the demo: SQLite under .data/, UI on :8233,
# eager activity execution on, the project's search attributes registered.
#
#   infra/dev/temporal.sh up      start it in the background (no-op if it runs)
#   infra/dev/temporal.sh down    stop it
#   infra/dev/temporal.sh status  print whether it runs
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${TEMPORAL_BIN:-bin/temporal}
DATA=.data
PORT=${TEMPORAL_PORT:-7233}
UI_PORT=${TEMPORAL_UI_PORT:-8233}
PID=$DATA/temporal.pid
LOG=$DATA/temporal.log

running() { [ -f "$PID" ] && kill -0 "$(cat "$PID")" 2>/dev/null; }
healthy() { "$BIN" operator cluster health --address "localhost:$PORT" >/dev/null 2>&1; }

case "${1:-up}" in
up)
  mkdir -p "$DATA"
  if running && healthy; then
    echo "temporal: dev server already running (pid $(cat "$PID")), UI http://localhost:$UI_PORT"
    exit 0
  fi
  if healthy; then
    echo "temporal: a server already answers on localhost:$PORT; using it"
    exit 0
  fi
  [ -x "$BIN" ] || { echo "temporal: $BIN missing; run 'make bin/temporal'" >&2; exit 1; }
  # Search attributes of point workflows (workflows/types.go, SearchAttributes).
  attrs=()
  for a in FLSweep=Keyword FLPoint=Keyword FLDataset=Keyword FLAlgorithm=Keyword FLSampler=Keyword FLLabel=Keyword FLStatus=Keyword \
           FLSeed=Int FLRound=Int FLAccuracy=Double; do
    attrs+=(--search-attribute "$a")
  done
  nohup "$BIN" server start-dev \
    --db-filename "$DATA/temporal.db" \
    --port "$PORT" --ui-port "$UI_PORT" \
    --log-level warn \
    --sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=NORMAL \
    --dynamic-config-value system.enableActivityEagerExecution=true \
    "${attrs[@]}" >"$LOG" 2>&1 &
  echo $! >"$PID"
  for _ in $(seq 1 120); do
    if healthy; then
      echo "temporal: dev server up (pid $(cat "$PID")), UI http://localhost:$UI_PORT, log $LOG"
      exit 0
    fi
    running || { echo "temporal: the server exited; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
    sleep 0.5
  done
  echo "temporal: the server did not become healthy in 60 s; see $LOG" >&2
  exit 1
  ;;
down)
  if running; then
    kill "$(cat "$PID")" && echo "temporal: stopped"
    for _ in $(seq 1 40); do running || break; sleep 0.25; done
  fi
  rm -f "$PID"
  ;;
status)
  if running && healthy; then echo "temporal: running (pid $(cat "$PID")), UI http://localhost:$UI_PORT"; else echo "temporal: not running"; exit 1; fi
  ;;
*)
  echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
