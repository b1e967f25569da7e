#!/usr/bin/env bash
# Cross-device scale (issue "Cross-device scale"): N clients of FedProx's Synthetic(1, 1), 100 a
# round, the MLP (infra/bench/crossdevice/base.yaml), one point per method, each run in its own
# process (`starter run --local --timings`): where a round's time goes, step by step (selection,
# training, aggregation, evaluation, commit) and in the blob store's reads and writes, the peak
# resident memory of the process (worker and starter in one) and the blob bytes per round. Prints
# figures; asserts nothing except that each run stays under the memory ceiling (CEILING_MB, default
# 4096: the issue's worker target), which fails the script. Then uniform, FedFV and SCAFFOLD at each N
# through Temporal beside in-process (infra/bench/rounds.sh), with the worker's peak memory.
#
#   infra/bench/crossdevice.sh              # N = 1,000, 10,000 and 100,000
#   NS="1000" infra/bench/crossdevice.sh    # one size
#   METHODS="uniform fedfv" infra/bench/crossdevice.sh
#   TEMPORAL=0 infra/bench/crossdevice.sh   # without the runs through Temporal (rounds.sh)
#   TEMPORAL_METHODS="uniform" infra/bench/crossdevice.sh
#
# Rounds: 5, or the sampler's warm-up plus 2 where it has one (HiCS-FL trains every client once
# before it clusters: N/100 rounds). Methods too slow at a size are skipped with the reason
# (the architecture doc's cost table has them): clustered sampling (Algorithm 2) and DivFL, in
# either refresh, above 1,000 clients, HiCS-FL above 1,000 (its selection alone is sampling's
# BenchmarkHiCS10000). Clustered sampling runs with importance: uniform (its urns need p_k ≤ 1/m;
# under size importance some Synthetic clients are above 1/100).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${STARTER:-bin/starter}
[ -x "$BIN" ] || make build >/dev/null
NS=${NS:-"1000 10000 100000"}
METHODS=${METHODS:-"uniform pow-d fedcor divfl-selected divfl hics clustered-similarity scaffold feddyn fedfv fedadam"}
CEILING_MB=${CEILING_MB:-4096}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

method_lines() { # method N: the spec lines that choose it
	case $1 in
	uniform) echo "sampler: uniform" ;;
	pow-d) echo "sampler: {name: pow-d, d: 200}" ;;
	fedcor) echo "sampler: fedcor" ;;
	divfl-selected) echo "sampler: {name: divfl, refresh: selected}" ;;
	divfl) echo "sampler: divfl" ;;
	hics) echo "sampler: hics" ;;
	clustered-similarity) echo "sampler: clustered-similarity" ;;
	scaffold | feddyn | fedfv) printf 'sampler: uniform\nalgorithm: %s\n' "$1" ;;
	fedadam) printf 'sampler: uniform\nserver_optimizer: {name: fedadam, lr: 0.01}\n' ;;
	*) echo "crossdevice.sh: unknown method $1" >&2; exit 2 ;;
	esac
}

too_slow() { # method N: why it is skipped at N, or nothing
	case $1 in
	divfl | divfl-selected | clustered-similarity) [ "$2" -le 1000 ] || echo "O(N²·|θ|) distances between the remembered updates every round" ;;
	hics) [ "$2" -le 1000 ] || echo "N/100 warm-up rounds, then O(N³) row distances (BenchmarkHiCS10000)" ;;
	esac
}

importance_of() { # method: clustered sampling puts each client in urns of mass 1/m, so p_k ≤ 1/m
	case $1 in
	clustered-similarity) echo uniform ;;
	*) echo size ;;
	esac
}

rounds_of() { # method N
	case $1 in
	hics) echo $(($2 / 100 + 2)) ;;
	*) echo 5 ;;
	esac
}

# workload N METHOD NAME ROUNDS: the spec of one run. Above 10,000 users every user holds
# SAMPLES_LARGE samples (dataset.samples, 40 by default) instead of FedProx's lognormal sizes, which
# at 100,000 users would be 45 million samples, past the generator's bound.
workload() {
	local sizes=""
	[ "$1" -le 10000 ] || sizes=", samples: ${SAMPLES_LARGE:-40}"
	sed -e "s/^name: .*/name: $3/" -e "s/users: [0-9]*}/users: $1$sizes}/" -e "s/clients: [0-9]*,/clients: $1,/" \
		-e "s/^rounds: .*/rounds: $4/" -e "s/^importance: .*/importance: $(importance_of "$2")/" infra/bench/crossdevice/base.yaml
	method_lines "$2" "$1"
}

# summarise N METHOD OUT: one row of the closing table from a run's --timings output: the time per
# round of the selection (SelectClients + QueryClients), training, aggregation, evaluation and commit,
# the blob store's time, the MB written and read per round and the peak memory.
summarise() {
	awk -v n="$1" -v m="$2" '
		function ms(v, u) { return u == "s" ? v * 1000 : u == "ms" ? v : v / 1000 }
		/^ran / { for (i = 1; i <= NF; i++) if ($i == "per" && $(i+1) == "round)") { w = $(i-5); r = $(i-2); sub(/\(/, "", w) } }
		$1 ~ /^(SelectClients|QueryClients)$/ { sel += ms($(NF-1), $NF) }
		$1 == "TrainClients" { tr = ms($(NF-1), $NF) }
		$1 == "Aggregate" { ag = ms($(NF-1), $NF) }
		$1 == "Evaluate" { ev = ms($(NF-1), $NF) }
		$1 == "CommitRound" { co = ms($(NF-1), $NF) }
		$1 == "blob" { io += ms($(NF-1), $NF) }
		/^peak resident memory/ { peak = $(NF-1) }
		END { printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s / %s | %s |\n", n, m, sel, tr, ag, ev, co, io, w, r, peak }
	' "$3"
}

fail=0
for n in $NS; do
	for m in $METHODS; do
		echo "== N = $n, $m"
		why=$(too_slow "$m" "$n")
		if [ -n "$why" ]; then
			echo "skipped: $why"
			continue
		fi
		spec=$WORK/$m-$n.yaml
		{
			workload "$n" "$m" "xdev-$n-$m" "$(rounds_of "$m" "$n")"
		} >"$spec"
		out=$WORK/$m-$n.out
		"$BIN" run --local --timings -f "$spec" --blob "file://$WORK/blob-$m-$n?create_dir=1&metadata=skip" >"$out" 2>&1 || {
			tail -5 "$out" >&2
			fail=1
			continue
		}
		sed -n '/^ran /,/^peak/p' "$out"
		summarise "$n" "$m" "$out" >>"$WORK/table"
		peak=$(sed -n 's/^peak resident memory (VmHWM): \([0-9]*\) MB$/\1/p' "$out")
		if [ -n "$peak" ] && [ "$peak" -gt "$CEILING_MB" ]; then
			echo "crossdevice.sh: N = $n, $m: peak memory $peak MB is over the ceiling of $CEILING_MB MB" >&2
			fail=1
		fi
		rm -rf "$WORK/blob-$m-$n"
	done
done
# Through Temporal: a point of each TEMPORAL_METHODS (default: uniform, FedFV and SCAFFOLD, the
# stateful ones with the most server and client state) at each N, 20 rounds, in-process and through
# the dev server with one local worker (infra/bench/rounds.sh: wall time per round of each, whether
# the two computed the same model, and the worker's peak memory, held to the ceiling like the
# in-process runs'). TEMPORAL=0 skips it.
if [ "${TEMPORAL:-1}" != 0 ]; then
	for n in $NS; do
		for m in ${TEMPORAL_METHODS:-uniform fedfv scaffold}; do
			echo "== N = $n, $m, in-process and through Temporal (20 rounds)"
			spec=$WORK/temporal-$m-$n.yaml
			{
				workload "$n" "$m" "xdev-$n-$m-temporal" 20
			} >"$spec"
			infra/bench/rounds.sh "$spec" >"$WORK/temporal.out" || { tail -5 "$WORK/temporal.out" >&2; fail=1; continue; }
			tail -5 "$WORK/temporal.out"
			peak=$(sed -n 's/^worker peak resident memory (VmHWM): \([0-9]*\) MB$/\1/p' "$WORK/temporal.out")
			if [ -n "$peak" ] && [ "$peak" -gt "$CEILING_MB" ]; then
				echo "crossdevice.sh: N = $n, $m through Temporal: the worker's peak memory $peak MB is over the ceiling of $CEILING_MB MB" >&2
				fail=1
			fi
		done
	done
fi

echo
echo "per round (ms; evaluation once a run, shown per round):"
echo "| N | method | selection | training | aggregation | evaluation | commit | blob I/O | MB written / read | peak MB |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
[ -f "$WORK/table" ] && cat "$WORK/table"
exit $fail
