#!/usr/bin/env bash
# Round time of a sweep run in-process (`starter run --local`) versus through
# Temporal (dev server + one local worker), on the same spec, machine and run.
# Prints wall times, seconds per round and their ratio, and the worker's peak
# resident memory over the Temporal run (worker.sh up restarts it, so the
# peak is this run's); asserts nothing.
#
#   infra/bench/rounds.sh [SPEC]       (default examples/demo.yaml)
#
# It runs bin/starter and bin/worker, the default build (`make build`: the
# OpenBLAS build where the machine allows it). ROUNDS_JSON=FILE also writes
# the figures there as JSON (infra/bench/peer.sh joins them with the PyTorch
# peer's).
set -euo pipefail
cd "$(dirname "$0")/../.."
SPEC=${1:-examples/demo.yaml}
STAMP=$(date +%Y%m%d%H%M%S)
WORK=$(mktemp -d)
# A dev server this script starts, it stops (with the worker) at the end; one
# that was running (make demo's) it leaves running.
started=no
infra/dev/temporal.sh status >/dev/null 2>&1 || started=yes
cleanup() {
  rm -rf "$WORK"
  if [ "$started" = yes ]; then
    infra/dev/worker.sh down >/dev/null 2>&1 || true
    infra/dev/temporal.sh down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

infra/dev/temporal.sh up >/dev/null
infra/dev/worker.sh up >/dev/null

name=$(sed -n 's/^name: *//p' "$SPEC" | head -1)
points=$(bin/starter validate -f "$SPEC" | sed -n 's/.*, \([0-9]*\) point(s)$/\1/p')
rounds=$(sed -n 's/^rounds: *//p' "$SPEC" | head -1)
total=$((points * rounds))

run_one() { # mode
  local spec="$WORK/$1.yaml" start end
  sed "s/^name: .*/name: bench-$STAMP-$1/" "$SPEC" >"$spec"
  start=$(date +%s.%N)
  if [ "$1" = local ]; then
    bin/starter run -f "$spec" --local --blob "file://$WORK/blob?create_dir=1&metadata=skip" >"$WORK/$1.log" || { tail -5 "$WORK/$1.log" >&2; exit 1; }
  else
    bin/starter sweep start -f "$spec" --wait >"$WORK/$1.log"
  fi
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

echo "spec $SPEC ($name): $points points x $rounds rounds = $total rounds; $(nproc) cores"
tl=$(run_one local)
tt=$(run_one temporal)
wpid=$(cat .data/worker.pid 2>/dev/null || true)
wpeak=$(awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/$wpid/status" 2>/dev/null || true)
# The two runs must compute the same models.
grep -o 'p[0-9a-f]\{10,\} .* done .*' "$WORK/local.log" | awk '{print $1, $NF}' | sort >"$WORK/l.sum"
grep -o 'p[0-9a-f]\{10,\} .* done .*' "$WORK/temporal.log" | awk '{print $1, $NF}' | sort >"$WORK/t.sum"
same=$(cmp -s "$WORK/l.sum" "$WORK/t.sum" && echo yes || echo NO)
awk -v tl="$tl" -v tt="$tt" -v n="$total" -v same="$same" 'BEGIN {
  printf "%-22s %10s %12s\n", "mode", "wall s", "s/round"
  printf "%-22s %10.1f %12.3f\n", "in-process (--local)", tl, tl / n
  printf "%-22s %10.1f %12.3f\n", "Temporal (dev server)", tt, tt / n
  printf "Temporal / in-process: %.2f; identical final models: %s\n", tt / tl, same
}'
echo "worker peak resident memory (VmHWM): ${wpeak:-unknown} MB"
if [ -n "${ROUNDS_JSON:-}" ]; then
  version=$(${GO:-go} version -m bin/starter 2>/dev/null | sed -n 's/.*conf\.Version=\([^ "]*\).*/\1/p' | head -1)
  awk -v tl="$tl" -v tt="$tt" -v n="$total" -v same="$same" -v spec="$SPEC" -v version="${version:-unknown}" -v wpeak="${wpeak:-0}" 'BEGIN {
    printf "{\"spec\": \"%s\", \"version\": \"%s\", \"rounds\": %d, \"in_process_s_per_round\": %.6f, \"temporal_s_per_round\": %.6f, \"identical\": \"%s\", \"worker_peak_mb\": %d}\n",
      spec, version, n, tl / n, tt / n, same, wpeak
  }' >"$ROUNDS_JSON"
fi
