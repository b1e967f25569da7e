#!/usr/bin/env bash
# Our figures beside PyTorch's, in one run (issue 15, target 5); `make bench`
# runs both parts. Figures only: nothing is asserted about time.
#
#   infra/bench/peer.sh models   training samples/s per model: the PyTorch peer
#                                (infra/bench/peer/torch_peer.py models), ours
#                                (bin/starter bench --json, the default build) and,
#                                when built, the pure-Go build (bin/starter-purego)
#   infra/bench/peer.sh demo     the demo workload, ms per round: a plain PyTorch
#                                FedAvg loop (1 thread; 2 threads; 2 processes of
#                                1 thread, as the spec's run.concurrency 2), ours
#                                in-process and through Temporal (infra/bench/rounds.sh)
#
# Environment: PYTHON (default /usr/bin/python3, Debian's, where python3-torch
# installs), BENCH_MODELS (default the five paper models of issue 15; resnet18
# is measured with BENCH_RESNET_SECONDS, default 1, the others with
# BENCH_SECONDS, default 3), SPEC (default examples/demo.yaml), FLSWEEP_DATA_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
MODELS=${BENCH_MODELS:-mlp,cnn-hics,lenet,cnn-fedeba-cifar,resnet18}
SECONDS_MODEL=${BENCH_SECONDS:-3}
SECONDS_RESNET=${BENCH_RESNET_SECONDS:-1}
SPEC=${SPEC:-examples/demo.yaml}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

have_python() { command -v "$PYTHON" >/dev/null 2>&1; }
have_torch() { have_python && "$PYTHON" -c 'import torch' >/dev/null 2>&1; }
no_torch() {
  echo "PyTorch is not installed for $PYTHON: no peer figures ('make torch' installs Debian's python3-torch)"
}

# split prints "LIST_WITHOUT_RESNET RESNET" of the comma-separated MODELS.
others=$(tr ',' '\n' <<<"$MODELS" | grep -vx resnet18 | paste -sd, || true)
resnet=$(tr ',' '\n' <<<"$MODELS" | grep -x resnet18 || true)

# bench BIN NAME runs BIN bench --json for the models into $WORK/NAME-*.json
# and prints the files' list, comma-separated.
bench() {
  local files=""
  if [ -n "$others" ]; then
    "$1" bench --json --models "$others" --seconds "$SECONDS_MODEL" >"$WORK/$2-a.json"
    files="$WORK/$2-a.json"
  fi
  if [ -n "$resnet" ]; then
    "$1" bench --json --models resnet18 --seconds "$SECONDS_RESNET" >"$WORK/$2-b.json"
    files="${files:+$files,}$WORK/$2-b.json"
  fi
  echo "$files"
}

models() {
  echo "peer benchmark: training speed per model ($MODELS), ours and PyTorch, one run"
  local peer="" purego=""
  if have_torch; then
    if [ -n "$others" ]; then
      "$PYTHON" infra/bench/peer/torch_peer.py models --json --models "$others" --seconds "$SECONDS_MODEL" >"$WORK/torch-a.json"
      peer="$WORK/torch-a.json"
    fi
    if [ -n "$resnet" ]; then
      "$PYTHON" infra/bench/peer/torch_peer.py models --json --models resnet18 --seconds "$SECONDS_RESNET" >"$WORK/torch-b.json"
      peer="${peer:+$peer,}$WORK/torch-b.json"
    fi
  else
    no_torch
  fi
  local ours
  ours=$(bench bin/starter ours)
  if [ -x bin/starter-purego ]; then
    purego=$(bench bin/starter-purego purego)
  fi
  if have_python; then
    "$PYTHON" infra/bench/peer/join.py models --ours "$ours" --purego "$purego" --peer "$peer"
  else
    echo "no python3: our figures alone"
    bin/starter bench --models "$MODELS" --seconds "$SECONDS_MODEL"
  fi
}

demo() {
  local peers=()
  if [ "$SPEC" != examples/demo.yaml ]; then
    echo "the PyTorch loop is the demo's (examples/demo.yaml) only: no peer figures for $SPEC"
  elif have_torch; then
    local data="${FLSWEEP_DATA_DIR:-.data/datasets}/fmnist"
    "$PYTHON" infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 1 --procs 1 >"$WORK/t1.json"
    "$PYTHON" infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 2 --procs 1 >"$WORK/t2.json"
    "$PYTHON" infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 1 --procs 2 >"$WORK/p2.json"
    peers=(--peer "1 thread=$WORK/t1.json" --peer "2 threads=$WORK/t2.json" --peer "2 processes x 1 thread=$WORK/p2.json")
  else
    no_torch
  fi
  ROUNDS_JSON="$WORK/rounds.json" infra/bench/rounds.sh "$SPEC"
  if have_python; then
    "$PYTHON" infra/bench/peer/join.py demo --rounds "$WORK/rounds.json" "${peers[@]}"
  fi
}

case "${1:-}" in
models) models ;;
demo) demo ;;
*) echo "usage: $0 models|demo" >&2; exit 2 ;;
esac
