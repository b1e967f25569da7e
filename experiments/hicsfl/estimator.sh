#!/bin/sh
# experiments/hicsfl/estimator.sh: HiCS-FL's two entropy estimates at the paper's own setting
# (estimator.yaml: the paper's CNN, plain SGD at lr 0.001; one run with the paper's estimator, one with
# our scale-free one), in this process, then sql/estimator.sql into results/estimator.txt and the
# figure results/estimator.png and .svg (entropyplot: both estimates of the paper-estimator run's
# updates per alpha-group). From the repository root:
#   experiments/hicsfl/estimator.sh
set -eu
cd "$(dirname "$0")/../.."
experiments/sweeps.sh experiments/hicsfl estimator -- experiments/hicsfl/estimator.yaml
if [ -z "${STARTER:-}" ]; then
	if [ -x bin/starter-openblas ]; then STARTER=bin/starter-openblas; else STARTER=bin/starter; fi
fi
"$STARTER" sweep query --format csv -- hicsfl-estimator "$(cat experiments/hicsfl/sql/estimator.sql)" |
	go run ./experiments/hicsfl/entropyplot -sampler 'hics(rounds=200)' \
		-labels 'α = 0.001,α = 0.002,α = 0.005,α = 0.01,α = 0.5' -o experiments/hicsfl/results/estimator
