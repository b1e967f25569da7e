#!/bin/sh
# experiments/fnrfl/run.sh: FNR-FL against the NIID-Bench baselines (fmnist.yaml, mnist.yaml) and the
# centralised bound (central.yaml), in-process, then the queries of sql/ into results/. From the
# repository root:
#   experiments/fnrfl/run.sh                      # everything (about 1.5 h on 2 cores, fast build)
#   SPECS="experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml" experiments/fnrfl/run.sh
# then the public-set-size ablation (public.yaml, about 20 minutes), unless PUBLIC=0.
set -eu
bin=${STARTER:-bin/starter-openblas}
[ -x "$bin" ] || make build-openblas >/dev/null
[ -d "${FLSWEEP_DATA_DIR:-.data/datasets}/mnist" ] || "$bin" data fetch mnist --dir "${FLSWEEP_DATA_DIR:-.data/datasets}/mnist"
SPECS=${SPECS:-"experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml experiments/fnrfl/mnist.yaml"}
STARTER=$bin experiments/sweeps.sh experiments/fnrfl pivot table2 traffic refine leak -- $SPECS
[ "${PUBLIC:-1}" = 0 ] || STARTER=$bin experiments/sweeps.sh experiments/fnrfl public -- experiments/fnrfl/public.yaml
