#!/usr/bin/env bash
# Runs the sampling-theory experiment (Fraboni et al. 2022, Figs. 1-2 at CPU scale) in-process on
# one core, then prints each sweep's summary (summary.sql) and writes it to summary-n<N>.txt.
#
#   experiments/sampling-theory/run.sh            # all of n = 10, 20, 40, 80
#   experiments/sampling-theory/run.sh 10 20      # some of them
#
# Environment: STARTER (default bin/starter-openblas if built, else bin/starter), FLSWEEP_BLOB
# (default file://$PWD/.data/blob), FLSWEEP_DATA_DIR (Fashion-MNIST in <dir>/fmnist; `make data`).
# A sweep that already ran is resumed or skipped: its points are kept in the blob store.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=experiments/sampling-theory
starter=${STARTER:-}
if [[ -z $starter ]]; then
	starter=bin/starter
	[[ -x bin/starter-openblas ]] && starter=bin/starter-openblas
fi
export FLSWEEP_BLOB=${FLSWEEP_BLOB:-file://$PWD/.data/blob?create_dir=1&metadata=skip}
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 # one core
ns=("$@")
[[ ${#ns[@]} -gt 0 ]] || ns=(10 20 40 80)
for n in "${ns[@]}"; do
	start=$SECONDS
	"$starter" run --local --workers 1 -f "$here/n$n.yaml" >/dev/null
	echo "n = $n: $((SECONDS - start)) s" >&2
done
for n in "${ns[@]}"; do
	echo "== n = $n"
	"$starter" sweep query -- "sampling-theory-n$n" "$(cat "$here/summary.sql")" | tee "$here/summary-n$n.txt"
done
