#!/bin/sh
# experiments/fedeba: runs FedEBA+'s Table 1 comparison in this process (no Temporal needed), as three
# sweeps (eba.yaml: FedAvg and the FedEBA family with its ablations; tau.yaml: FedEBA+ at τ = 1 and 5;
# baselines.yaml: the six fairness baselines), and prints the summaries of README.md from their
# Parquet tables (experiments/sweeps.sh); then the α × τ × units-of-g̃ sweep (units.yaml) and its
# summary, queried alone: its gradient-units points share their IDs with points of eba.yaml and
# tau.yaml, which the other queries would count twice. Usage, from anywhere:
#   experiments/fedeba/run.sh
set -eu
cd "$(dirname "$0")/../.."
experiments/sweeps.sh experiments/fedeba table1 smooth paired weights comm -- \
	experiments/fedeba/eba.yaml experiments/fedeba/tau.yaml experiments/fedeba/baselines.yaml
exec experiments/sweeps.sh experiments/fedeba units -- experiments/fedeba/units.yaml
