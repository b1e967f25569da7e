#!/bin/sh
# experiments/fnrfl/run.sh: FNR-FL against the NIID-Bench baselines (fmnist.yaml, mnist.yaml) and the
# centralised bound (central.yaml), in-process, then the queries of sql/ into results/. From the
# repository root:
#   experiments/fnrfl/run.sh                      # everything (about 1.5 h on 2 cores, fast build)
#   SPECS="experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml" experiments/fnrfl/run.sh
set -eu
bin=${STARTER:-bin/starter-openblas}
[ -x "$bin" ] || make build-openblas >/dev/null
[ -d "${FLSWEEP_DATA_DIR:-.data/datasets}/mnist" ] || "$bin" data fetch mnist --dir "${FLSWEEP_DATA_DIR:-.data/datasets}/mnist"
SPECS=${SPECS:-"experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml experiments/fnrfl/mnist.yaml"}
STARTER=$bin exec experiments/sweeps.sh experiments/fnrfl pivot table2 traffic refine leak -- $SPECS
