#!/usr/bin/env bash
# Our figures beside PyTorch's, in one run (issue 15, target 5); `make bench`
# runs both parts. Figures only: nothing is asserted about time.
#
#   infra/bench/peer.sh models   training samples/s per model: the PyTorch peer
#                                (infra/bench/peer/torch_peer.py models), ours
#                                (bin/starter bench --json, the default build) and,
#                                when built, the pure-Go build (bin/starter-purego)
#   infra/bench/peer.sh demo     the demo workload, ms per round: a plain PyTorch
#                                FedAvg loop (1 thread; 2 threads, one point; 2
#                                processes of 1 thread, as the spec's run.concurrency 2), ours
#                                in-process and through Temporal (infra/bench/rounds.sh)
#
# Environment: PYTHON (default /usr/bin/python3, Debian's, where python3-torch
# installs), BENCH_MODELS (default the five paper models of issue 15; resnet18
# is measured with BENCH_RESNET_SECONDS, default 1, the others with
# BENCH_SECONDS, default 3), BENCH_REPEAT (default 1: the models' runs, shown by
# their medians and the medians of each run's ratios; a shared machine's speed
# drifts between runs by more than the ratios' differences), SPEC (default
# examples/demo.yaml), FLSWEEP_DATA_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
MODELS=${BENCH_MODELS:-mlp,cnn-hics,lenet,cnn-fedeba-cifar,resnet18}
SECONDS_MODEL=${BENCH_SECONDS:-3}
SECONDS_RESNET=${BENCH_RESNET_SECONDS:-1}
REPEAT=${BENCH_REPEAT:-1}
SPEC=${SPEC:-examples/demo.yaml}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Debian's OpenBLAS 0.3.21 (which Debian's torch calls for its products) does
# not know CPUs newer than itself and falls back to slow generic kernels on
# them (the Emerald Rapids Xeon of issue 15's later runs: PyTorch's MLP at
# 49,704 samples/s against 114,605 with the AVX-512 kernels). Our trainer
# corrects its own OpenBLAS the same way (internal/gemm/openblas.go), so the
# peer gets the kernel family the CPU supports too, unless
# OPENBLAS_CORETYPE is set: SkylakeX with AVX-512 F, CD, BW, DQ and VL,
# Haswell with AVX2 and FMA.
if [ -z "${OPENBLAS_CORETYPE+set}" ] && [ -r /proc/cpuinfo ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
  if has avx512f && has avx512cd && has avx512bw && has avx512dq && has avx512vl; then
    PEER_CORETYPE=SkylakeX
  elif has avx2 && has fma; then
    PEER_CORETYPE=Haswell
  fi
fi
peer_python() {
  if [ -n "${PEER_CORETYPE:-}" ]; then
    OPENBLAS_CORETYPE=$PEER_CORETYPE "$PYTHON" "$@"
  else
    "$PYTHON" "$@"
  fi
}

have_python() { command -v "$PYTHON" >/dev/null 2>&1; }
have_torch() { have_python && "$PYTHON" -c 'import torch' >/dev/null 2>&1; }
no_torch() {
  echo "PyTorch is not installed for $PYTHON: no peer figures ('make torch' installs Debian's python3-torch)"
}

# bench BIN NAME MODEL SECONDS runs BIN bench --json for one model into
# $WORK/NAME-MODEL.json and prints the file's name.
bench() {
  "$1" bench --json --models "$3" --seconds "$4" >"$WORK/$2-$3.json"
  echo "$WORK/$2-$3.json"
}

# models measures model by model, PyTorch, ours and the pure-Go build back to
# back, so that the three figures of a row share the machine's load (on a
# shared machine it drifts within minutes).
models() {
  echo "peer benchmark: training speed per model ($MODELS), ours and PyTorch, one run"
  [ -n "${PEER_CORETYPE:-}" ] && echo "PyTorch's OpenBLAS: OPENBLAS_CORETYPE=$PEER_CORETYPE (the CPU's kernel family; set OPENBLAS_CORETYPE to choose)"
  local torch=yes ours="" purego="" peer="" m secs
  have_torch || { torch=no; no_torch; }
  case "$REPEAT" in '' | *[!0-9]* | 0) echo "BENCH_REPEAT=$REPEAT: want a whole number of runs, at least 1" >&2; exit 2 ;; esac
  for r in $(seq "$REPEAT"); do
    [ "$REPEAT" -gt 1 ] && echo "run $r of $REPEAT"
    for m in ${MODELS//,/ }; do
      secs=$SECONDS_MODEL
      [ "$m" = resnet18 ] && secs=$SECONDS_RESNET
      if [ "$torch" = yes ]; then
        peer_python infra/bench/peer/torch_peer.py models --json --models "$m" --seconds "$secs" >"$WORK/torch-$m-$r.json"
        peer="${peer:+$peer,}$WORK/torch-$m-$r.json"
      fi
      ours="${ours:+$ours,}$(bench bin/starter "ours-$r" "$m" "$secs")"
      if [ -x bin/starter-purego ]; then
        purego="${purego:+$purego,}$(bench bin/starter-purego "purego-$r" "$m" "$secs")"
      fi
    done
  done
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
    peer_python infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 1 --procs 1 >"$WORK/t1.json"
    # Two threads in one process can be many times slower than one on a loaded
    # 2-core machine (OpenMP's threads wait for each other): one point (30
    # rounds) bounds its time.
    peer_python infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 2 --procs 1 --points 0.5:1 >"$WORK/t2.json"
    peer_python infra/bench/peer/torch_peer.py demo --json --data "$data" --threads 1 --procs 2 >"$WORK/p2.json"
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
