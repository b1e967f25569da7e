#!/bin/sh
# experiments/sweeps.sh: the shared runner of the experiments that are several sweeps queried
# together (hicsfl, fedeba). It runs each spec in this process (no Temporal needed), then runs each
# named query of the experiment's sql/ directory over all the sweeps, printing it and writing it to
# $OUT/<query>.txt. Usage, from the repository root:
#   experiments/sweeps.sh DIR QUERY... -- SPEC...
# It uses the fast build (bin/starter-openblas, `make build-openblas`) when it is there, else
# bin/starter (built here); STARTER overrides. A finished point is not run again, so a rerun only
# prints. OUT defaults to DIR/results.
set -eu
dir=$1
shift
queries=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
	queries="$queries $1"
	shift
done
[ "$#" -gt 0 ] && shift
if [ -z "${STARTER:-}" ]; then
	if [ -x bin/starter-openblas ]; then STARTER=bin/starter-openblas; else make build >/dev/null; STARTER=bin/starter; fi
fi
make data >/dev/null
names=""
for spec in "$@"; do
	"$STARTER" run --local -f "$spec"
	names="$names${names:+,}$(awk '$1 == "name:" {print $2; exit}' "$spec")"
done
OUT=${OUT:-$dir/results}
mkdir -p "$OUT"
for q in $queries; do
	echo "== $q"
	"$STARTER" sweep query -- "$names" "$(cat "$dir/sql/$q.sql")" | tee "$OUT/$q.txt"
done
