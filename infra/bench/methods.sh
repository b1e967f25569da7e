#!/usr/bin/env bash
# What the round protocol's methods cost on the demo workload (one point, 30 rounds; specs in
# infra/bench/methods/): round time in-process vs through Temporal for FedAvg, SCAFFOLD and pow-d
# (d = 2m) (infra/bench/rounds.sh each), FedAvg without the extra measurements (the global training
# loss and the clients' losses before and after training), and the blob bytes per round of FedAvg,
# SCAFFOLD and MOON (starter run --local counts them). Prints figures; asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
for m in fedavg scaffold powd fedavg-nometrics; do
  echo "== $m"
  infra/bench/rounds.sh "infra/bench/methods/$m.yaml" | tail -4
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "== blob traffic in-process (written / read per round)"
for m in fedavg scaffold moon; do
  bin/starter run -f "infra/bench/methods/$m.yaml" --local --blob "file://$WORK/$m?create_dir=1&metadata=skip" |
    sed -n "s/^ran .*blob store: /$m: /p"
done
