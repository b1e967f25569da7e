#!/bin/sh
# Once the server answers: creates the namespace and registers the search
# attributes the point workflows set (workflows.SearchAttributes). The same
# steps as infra/server/init.sh of the production script, in POSIX sh for the
# admin-tools image. Idempotent.
#
# Environment: TEMPORAL_ADDRESS (host:port), TEMPORAL_NAMESPACE (default
# "default"), NAMESPACE_RETENTION (default 720h); the temporal CLI also reads
# TEMPORAL_TLS_* and TEMPORAL_API_KEY.
# Run by the compose service temporal-init and the Kubernetes Job temporal-init.
set -eu
ADDR="${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS names the Temporal frontend}"
NS="${TEMPORAL_NAMESPACE:-default}"

# The server may still be starting (or waiting for its schema): up to 10 minutes.
i=0
until temporal operator cluster health --address "$ADDR" 2>/dev/null | grep -q SERVING; do
  i=$((i + 1))
  [ "$i" -lt 120 ] || { echo "init-temporal: the server at $ADDR is not healthy" >&2; exit 1; }
  sleep 5
done

if ! temporal operator namespace describe --address "$ADDR" --namespace "$NS" >/dev/null 2>&1; then
  temporal operator namespace create --address "$ADDR" --namespace "$NS" --retention "${NAMESPACE_RETENTION:-720h}"
fi
# Keep this list equal to workflows.SearchAttributes (infra/validate checks it).
ATTRS="FLSweep=Keyword FLPoint=Keyword FLDataset=Keyword FLAlgorithm=Keyword FLSampler=Keyword FLLabel=Keyword FLStatus=Keyword FLSeed=Int FLRound=Int FLAccuracy=Double"
# A namespace just created reaches the server's namespace cache some seconds
# later; until then the search-attribute calls answer "not found": retry.
attempt=0
while :; do
  attempt=$((attempt + 1))
  if have=$(temporal operator search-attribute list --address "$ADDR" --namespace "$NS" 2>&1); then
    ok=1
    for a in $ATTRS; do
      name=${a%%=*} type=${a#*=}
      if echo "$have" | grep -qw "$name"; then continue; fi
      temporal operator search-attribute create --address "$ADDR" --namespace "$NS" --name "$name" --type "$type" || ok=0
    done
    [ "$ok" = 1 ] && break
  fi
  [ "$attempt" -lt 60 ] || { echo "init-temporal: search attributes on $ADDR/$NS: $have" >&2; exit 1; }
  sleep 1
done
echo "init-temporal: namespace $NS with the flsweep search attributes on $ADDR"
