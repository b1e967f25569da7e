#!/bin/sh
# experiments/fnrfl/time.sh: wall time per round of each method, alone on the machine, on one
# scenario (Dirichlet 0.5) and one seed, from a fresh bucket directory each, with the same setting
# as fmnist.yaml. Prints method, seconds for the 10 rounds (evaluation included) and per round.
# From the repository root: experiments/fnrfl/time.sh > experiments/fnrfl/results/time.txt
set -eu
bin=${STARTER:-bin/starter-openblas}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'method\tseconds\tper_round\n'
for alg in fedavg '{name: fedprox, mu: 0.01}' '{name: scaffold, correction: after_step}' fednova \
	'{name: moon, mu: 1}' fnrfl '{name: fnrfl, variant: code}' '{name: fnrfl, variant: corrected}'; do
	sed -n '/^grid:/q;p' experiments/fnrfl/fmnist.yaml |
		sed -e 's/^name: .*/name: fnrfl-time/' -e 's/^seeds: .*/seeds: [0]/' \
			-e 's/^partition: .*/partition: {scheme: noniid-labeldir, clients: 10, alpha: 0.5, public_per_class: 100}/' >"$tmp/spec.yaml"
	printf 'algorithm: %s\n' "$alg" >>"$tmp/spec.yaml"
	start=$(date +%s.%N)
	"$bin" run --local --blob "file://$tmp/blob?create_dir=1&metadata=skip" -f "$tmp/spec.yaml" >/dev/null 2>&1
	end=$(date +%s.%N)
	rm -rf "$tmp/blob"
	awk -v a="$alg" -v s="$start" -v e="$end" 'BEGIN { printf "%s\t%.1f\t%.2f\n", a, e - s, (e - s) / 10 }' </dev/null
done
