#!/bin/sh
# experiments/hicsfl: runs the HiCS-FL comparison in this process (no Temporal needed), as three
# sweeps (baselines.yaml, clustering.yaml, variants.yaml), and prints the summaries of README.md from their
# Parquet tables. Usage, from anywhere:
#   experiments/hicsfl/run.sh
# It uses the fast build (bin/starter-openblas, `make build-openblas`) when it is there, else
# bin/starter (built here). A finished point is not run again, so a rerun only prints.
set -eu
cd "$(dirname "$0")/../.."
if [ -z "${STARTER:-}" ]; then
	if [ -x bin/starter-openblas ]; then STARTER=bin/starter-openblas; else make build >/dev/null; STARTER=bin/starter; fi
fi
make data >/dev/null
NAMES=""
for spec in experiments/hicsfl/baselines.yaml experiments/hicsfl/clustering.yaml experiments/hicsfl/variants.yaml; do
	"$STARTER" run --local -f "$spec"
	NAMES="$NAMES${NAMES:+,}$(awk '$1 == "name:" {print $2; exit}' "$spec")"
done
OUT=${OUT:-experiments/hicsfl/results}
mkdir -p "$OUT"
for q in speed share cost entropy smooth; do
	echo "== $q"
	"$STARTER" sweep query -- "$NAMES" "$(cat experiments/hicsfl/sql/$q.sql)" | tee "$OUT/$q.txt"
done
