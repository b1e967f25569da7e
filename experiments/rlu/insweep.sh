#!/bin/sh
# experiments/rlu/insweep.sh: label recovery inside FL runs (insweep.yaml, insweep-momentum.yaml),
# in-process, then the queries of sql/insweep_*.sql into results/. From the repository root:
#   experiments/rlu/insweep.sh
set -eu
exec experiments/sweeps.sh experiments/rlu insweep_iacc insweep_cacc insweep_seeds -- \
	experiments/rlu/insweep.yaml experiments/rlu/insweep-momentum.yaml
