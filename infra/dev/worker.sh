#!/usr/bin/env bash
# A local worker in the background for the demo.
#
#   infra/dev/worker.sh up      (re)start it with the current bin/worker
#   infra/dev/worker.sh down    stop it
#
# bin/worker is the build `make build` chose: the OpenBLAS build where the
# machine allows it, else pure Go (it said which and why). Its first log line
# names its build. FLSWEEP_WORKER_BIN runs another binary, e.g.
# bin/worker-purego (make build-purego); a sweep is pinned to the build that
# planned it, and only workers of that build compute its points.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=.data
PID=$DATA/worker.pid
LOG=$DATA/worker.log

running() { [ -f "$PID" ] && kill -0 "$(cat "$PID")" 2>/dev/null; }

stop() {
  if running; then
    kill "$(cat "$PID")"
    for _ in $(seq 1 60); do running || break; sleep 0.25; done
    running && kill -9 "$(cat "$PID")"
  fi
  rm -f "$PID"
}

case "${1:-up}" in
up)
  mkdir -p "$DATA"
  # Restart so that the worker runs the binary just built.
  stop
  nohup "${FLSWEEP_WORKER_BIN:-bin/worker}" "${@:2}" >>"$LOG" 2>&1 &
  echo $! >"$PID"
  sleep 0.5
  running || { echo "worker: exited at start; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  echo "worker: running (pid $(cat "$PID")), log $LOG"
  ;;
down)
  stop && echo "worker: stopped"
  ;;
*)
  echo "usage: $0 up|down" >&2; exit 2 ;;
esac
