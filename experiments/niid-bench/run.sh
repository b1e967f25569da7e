#!/bin/sh
# experiments/niid-bench/run.sh: NIID-Bench's Table III setting on Fashion-MNIST and MNIST, in this
# process (no Temporal needed): fmnist.yaml (FedAvg, FedProx at its four mu, SCAFFOLD both ways,
# FedNova), fmnist-extra.yaml (MOON, FedDyn, FedDC), and the same two on MNIST, then sql/table.sql and
# sql/paired.sql over all of them into results/ (experiments/sweeps.sh). A finished point is not run
# again, so rerunning resumes and then only prints. From anywhere:
#   experiments/niid-bench/run.sh                     # everything (README "Cost": about 200 CPU-hours)
#   SPECS=experiments/niid-bench/fmnist.yaml experiments/niid-bench/run.sh   # one sweep
#   MNIST=0 experiments/niid-bench/run.sh             # Fashion-MNIST only
# The MNIST sweeps run only on the full MNIST (60,000 training images): with the 8,571-image subset
# that `starter data fetch mnist` gave before, they are skipped with a message.
set -eu
cd "$(dirname "$0")/../.."
bin=${STARTER:-bin/starter-openblas}
[ -x "$bin" ] || make build-openblas >/dev/null
data=${FLSWEEP_DATA_DIR:-.data/datasets}
dir=experiments/niid-bench

# train_count DIR: the number of training labels in DIR's IDX file (gzipped or not), or 0.
train_count() {
	for f in "$1/train-labels-idx1-ubyte" "$1/train-labels-idx1-ubyte.gz"; do
		[ -f "$f" ] || continue
		case $f in *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac | head -c 8 | od -An -tu4 --endian=big -j4 -N4 | tr -d ' '
		return
	done
	echo 0
}

if [ -z "${SPECS:-}" ]; then
	SPECS="$dir/fmnist.yaml $dir/fmnist-extra.yaml"
	if [ "${MNIST:-1}" != 0 ]; then
		[ -d "$data/mnist" ] || "$bin" data fetch mnist --dir "$data/mnist"
		n=$(train_count "$data/mnist")
		if [ "$n" = 60000 ]; then
			SPECS="$SPECS $dir/mnist.yaml $dir/mnist-extra.yaml"
		else
			echo "niid-bench: $data/mnist has $n training images, not MNIST's 60,000: skipping mnist.yaml and mnist-extra.yaml" >&2
		fi
	fi
fi
STARTER=$bin exec experiments/sweeps.sh "$dir" table paired -- $SPECS
