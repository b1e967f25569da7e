#!/usr/bin/env bash
# Once a new server answers: creates the namespace and registers the search
# attributes the point workflows set (workflows.SearchAttributes). Idempotent.
#
#   infra/server/init.sh HOST:PORT [NAMESPACE]
#
# TEMPORAL_CLI names the Temporal CLI (default bin/temporal). The CLI reads
# TEMPORAL_TLS_* / TEMPORAL_API_KEY from the environment like our own clients.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CLI=${TEMPORAL_CLI:-$here/bin/temporal}
ADDR=${1:?usage: init.sh HOST:PORT [NAMESPACE]}
NS=${2:-default}
if ! "$CLI" operator namespace describe --address "$ADDR" --namespace "$NS" >/dev/null 2>&1; then
  "$CLI" operator namespace create --address "$ADDR" --namespace "$NS" --retention 720h >/dev/null
fi
# Keep this list equal to workflows.SearchAttributes (a test checks it).
ATTRS="FLSweep=Keyword FLPoint=Keyword FLDataset=Keyword FLAlgorithm=Keyword FLSampler=Keyword FLLabel=Keyword FLStatus=Keyword FLSeed=Int FLRound=Int FLAccuracy=Double"
# A namespace just created reaches the server's namespace cache some seconds
# later; until then the search-attribute calls answer "not found": retry.
for attempt in $(seq 1 60); do
  if have=$("$CLI" operator search-attribute list --address "$ADDR" --namespace "$NS" 2>&1); then
    ok=1
    for a in $ATTRS; do
      name=${a%%=*} type=${a#*=}
      grep -qw "$name" <<<"$have" && continue
      "$CLI" operator search-attribute create --address "$ADDR" --namespace "$NS" --name "$name" --type "$type" >/dev/null 2>&1 || ok=0
    done
    [ "$ok" = 1 ] && break
  fi
  [ "$attempt" = 60 ] && { echo "init: search attributes on $ADDR/$NS: $have" >&2; exit 1; }
  sleep 1
done
echo "init: namespace $NS with the flsweep search attributes on $ADDR"
