#!/usr/bin/env bash
# The production stack on one machine, all on loopback: a private PostgreSQL
# cluster, the Temporal server (go.temporal.io/server, built by `make
# bin/temporal-server`) on it, MinIO with the bucket, and two workers sharing
# the task queue with the bucket on MinIO. Logs and pid files go under
# $STACK_DIR (.data/prod).
#
#   infra/prod/stack.sh up              start what is not running (idempotent)
#   infra/prod/stack.sh down            stop everything (data stays in $STACK_DIR)
#   infra/prod/stack.sh status          what runs, where
#   infra/prod/stack.sh env             the environment a starter needs (eval it)
#   infra/prod/stack.sh restart-server  stop and start the Temporal server only
#   infra/prod/stack.sh stop-server|start-server|stop-workers|start-workers
#
# Settings (environment):
#   STACK_DIR          .data/prod     data, logs and pid files
#   STACK_PORT_OFFSET  10000          added to every default port (0..25828: the server keeps
#                                     membership ports, 6933+offset, in a smallint): frontend
#                                     7233+offset (17233), PostgreSQL 5432+offset,
#                                     MinIO 9000+offset (console 9001+offset)
#   STACK_WORKERS      2              worker processes
#   STACK_WORKER_SLOTS 1              training slots per worker
#   STACK_TLS          0              1: TLS on the frontend with certificates made
#                                     under $STACK_DIR/tls by bin/starter tls-certs;
#                                     mtls: the same, and clients need a certificate
#   FLSWEEP_QUEUE      fl             task queue;  FLSWEEP_DATA_DIR  .data/datasets
#   TEMPORAL_NAMESPACE default
#   SERVER_BIN, SQL_TOOL, TEMPORAL_CLI, MINIO_BIN, WORKER_BIN, STARTER_BIN
#                      bin/temporal-server, bin/temporal-sql-tool, bin/temporal,
#                      bin/minio, bin/worker, bin/starter
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }

DIR=$(abs "${STACK_DIR:-.data/prod}")
OFF=${STACK_PORT_OFFSET:-10000}
NWORKERS=${STACK_WORKERS:-2}
SLOTS=${STACK_WORKER_SLOTS:-1}
TLS=${STACK_TLS:-0}
QUEUE=${FLSWEEP_QUEUE:-fl}
NS=${TEMPORAL_NAMESPACE:-default}
DATA_DIR=$(abs "${FLSWEEP_DATA_DIR:-.data/datasets}")
SERVER_BIN=$(abs "${SERVER_BIN:-bin/temporal-server}")
SQL_TOOL=$(abs "${SQL_TOOL:-bin/temporal-sql-tool}")
CLI=$(abs "${TEMPORAL_CLI:-bin/temporal}")
MINIO=$(abs "${MINIO_BIN:-bin/minio}")
WORKER=$(abs "${WORKER_BIN:-bin/worker}")
STARTER=$(abs "${STARTER_BIN:-bin/starter}")
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

# The server stores membership ports in a PostgreSQL smallint: they must stay below 32768.
if [ "$OFF" -gt 25828 ] || [ "$OFF" -lt 0 ]; then
  echo "stack: STACK_PORT_OFFSET=$OFF: want 0..25828 (the membership ports, 6933..6939 + offset, must stay below 32768)" >&2
  exit 2
fi
PG_PORT=$((5432 + OFF))
FRONTEND=127.0.0.1:$((7233 + OFF))
MINIO_ADDR=127.0.0.1:$((9000 + OFF))
MINIO_CONSOLE=127.0.0.1:$((9001 + OFF))
MINIO_USER=${MINIO_ROOT_USER:-flsweep}
MINIO_SECRET=${MINIO_ROOT_PASSWORD:-flsweep-secret}
BUCKET=flsweep
BLOB="s3://$BUCKET?endpoint=http://$MINIO_ADDR&region=us-east-1&use_path_style=true&disable_https=true"
PG_PASSWORD=temporal

pidfile() { echo "$DIR/$1.pid"; }
alive() { local f; f=$(pidfile "$1"); [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }
# stop NAME: SIGTERM, then SIGKILL after 30 s.
stop() {
  local f; f=$(pidfile "$1")
  if alive "$1"; then
    local pid; pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
    echo "stack: $1 stopped"
  fi
  rm -f "$f"
}
# wait_for WHAT TIMEOUT_S COMMAND...
wait_for() {
  local what=$1 deadline=$((SECONDS + $2)); shift 2
  while [ "$SECONDS" -lt "$deadline" ]; do "$@" >/dev/null && return 0; sleep 0.25; done
  echo "stack: $what did not come up in time; logs in $DIR" >&2
  return 1
}
need() { [ -x "$1" ] || { echo "stack: $1 is missing ($2)" >&2; exit 1; }; }

# Client settings of the stack (the names of Temporal's envconfig).
client_env() {
  echo "TEMPORAL_ADDRESS=$FRONTEND"
  echo "TEMPORAL_NAMESPACE=$NS"
  echo "FLSWEEP_QUEUE=$QUEUE"
  echo "FLSWEEP_BLOB='$BLOB'"
  echo "FLSWEEP_DATA_DIR=$DATA_DIR"
  echo "AWS_ACCESS_KEY_ID=$MINIO_USER"
  echo "AWS_SECRET_ACCESS_KEY=$MINIO_SECRET"
  if [ "$TLS" != 0 ]; then
    echo "TEMPORAL_TLS=true"
    echo "TEMPORAL_TLS_SERVER_CA_CERT_PATH=$DIR/tls/ca.pem"
    echo "TEMPORAL_TLS_SERVER_NAME=localhost"
    if [ "$TLS" = mtls ]; then
      echo "TEMPORAL_TLS_CLIENT_CERT_PATH=$DIR/tls/client.pem"
      echo "TEMPORAL_TLS_CLIENT_KEY_PATH=$DIR/tls/client-key.pem"
    fi
  fi
}

pg_up() {
  local pgdata=$DIR/pg sock=$DIR/pg-sock
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    need "$PG_BIN/initdb" "make postgres installs Debian's postgresql"
    mkdir -p "$pgdata" "$sock"
    chown postgres: "$pgdata" "$sock" 2>/dev/null || true
    chmod 700 "$pgdata"
    local pw; pw=$(mktemp); echo "$PG_PASSWORD" >"$pw"; chmod 644 "$pw"
    as_pg "$PG_BIN/initdb" -D "$pgdata" -U temporal --pwfile="$pw" -A scram-sha-256 -E UTF8 --no-locale >"$DIR/pg-initdb.log"
    rm -f "$pw"
  fi
  touch "$DIR/postgres.log"
  chown postgres: "$DIR/postgres.log" 2>/dev/null || true
  if as_pg "$PG_BIN/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then
    echo "stack: PostgreSQL already running on 127.0.0.1:$PG_PORT"
  else
    as_pg "$PG_BIN/pg_ctl" -D "$pgdata" -l "$DIR/postgres.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $sock -c max_connections=200 -c fsync=on" >/dev/null
    echo "stack: PostgreSQL up on 127.0.0.1:$PG_PORT (data $pgdata)"
  fi
}
pg_down() {
  if [ -f "$DIR/pg/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg" status >/dev/null 2>&1; then
    as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg" -m fast -w stop >/dev/null && echo "stack: PostgreSQL stopped"
  fi
}
# PostgreSQL refuses to run as root: the cluster belongs to the postgres user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

server_env() {
  export POSTGRES_SEEDS=127.0.0.1 DB_PORT=$PG_PORT POSTGRES_USER=temporal POSTGRES_PWD=$PG_PASSWORD
  export BIND_ON_IP=127.0.0.1 LOG_LEVEL=${LOG_LEVEL:-warn}
  export FRONTEND_GRPC_PORT=$((7233 + OFF)) FRONTEND_HTTP_PORT=$((7243 + OFF)) FRONTEND_MEMBERSHIP_PORT=$((6933 + OFF))
  export INTERNAL_FRONTEND_GRPC_PORT=$((7236 + OFF)) INTERNAL_FRONTEND_HTTP_PORT=$((7246 + OFF)) INTERNAL_FRONTEND_MEMBERSHIP_PORT=$((6936 + OFF))
  export HISTORY_GRPC_PORT=$((7234 + OFF)) HISTORY_MEMBERSHIP_PORT=$((6934 + OFF))
  export MATCHING_GRPC_PORT=$((7235 + OFF)) MATCHING_MEMBERSHIP_PORT=$((6935 + OFF))
  export WORKER_GRPC_PORT=$((7239 + OFF)) WORKER_MEMBERSHIP_PORT=$((6939 + OFF))
  export DYNAMIC_CONFIG_FILE_PATH=$ROOT/infra/server/dynamicconfig.yaml
  if [ "$TLS" != 0 ]; then
    export TEMPORAL_TLS_FRONTEND_CERT=$DIR/tls/server.pem TEMPORAL_TLS_FRONTEND_KEY=$DIR/tls/server-key.pem
    export TEMPORAL_TLS_CLIENT1_CA_CERT=$DIR/tls/ca.pem
    [ "$TLS" = mtls ] && export TEMPORAL_TLS_REQUIRE_CLIENT_AUTH=true
  fi
  # Our clients' own TLS settings must not leak into the server (it has its own).
  unset TEMPORAL_TLS TEMPORAL_API_KEY
}

# The CLI talks to the stack with the stack's client settings.
cli_env() {
  local kv
  while IFS= read -r kv; do
    kv=${kv//\'/}
    export "${kv?}"
  done < <(client_env)
}

server_healthy() { (cli_env; "$CLI" operator cluster health --address "$FRONTEND" 2>/dev/null) | grep -q SERVING; }
# healthy, or fail at once when the server process has exited.
server_up_or_dead() {
  alive server || { echo "stack: the Temporal server exited; see $DIR/server.log" >&2; grep -m3 '"fatal"' "$DIR/server.log" >&2 || tail -5 "$DIR/server.log" >&2; exit 1; }
  server_healthy
}

# The namespace and the search attributes (idempotent).
server_init() {
  (cli_env; TEMPORAL_CLI=$CLI infra/server/init.sh "$FRONTEND" "$NS") >>"$DIR/init.log" 2>&1 ||
    { echo "stack: namespace/search attributes failed; see $DIR/init.log" >&2; tail -3 "$DIR/init.log" >&2; exit 1; }
}

server_up() {
  if alive server && server_healthy; then
    echo "stack: Temporal server already running on $FRONTEND"
    server_init
    return
  fi
  need "$SERVER_BIN" "make bin/temporal-server builds it"
  need "$SQL_TOOL" "make bin/temporal-server builds it"
  need "$CLI" "make bin/temporal builds it"
  if [ "$TLS" != 0 ] && [ ! -f "$DIR/tls/ca.pem" ]; then
    need "$STARTER" "make build builds it"
    "$STARTER" tls-certs --dir "$DIR/tls" --hosts localhost,127.0.0.1 >/dev/null
  fi
  (server_env; SQL_TOOL=$SQL_TOOL infra/server/setup-schema.sh >>"$DIR/schema.log" 2>&1) ||
    { echo "stack: schema setup failed; see $DIR/schema.log" >&2; tail -5 "$DIR/schema.log" >&2; exit 1; }
  (
    server_env
    # All services in one process, the internal frontend included (the
    # server's default list leaves it out).
    exec nohup "$SERVER_BIN" --config-file "$ROOT/infra/server/config.yaml" --allow-no-auth start \
      --service frontend --service internal-frontend --service history --service matching --service worker \
      >>"$DIR/server.log" 2>&1
  ) &
  echo $! >"$(pidfile server)"
  wait_for "the Temporal server" 120 server_up_or_dead || { tail -20 "$DIR/server.log" >&2; exit 1; }
  server_init
  echo "stack: Temporal server up on $FRONTEND (TLS: $TLS), namespace $NS; log $DIR/server.log"
}

minio_healthy() { curl -sf "http://$MINIO_ADDR/minio/health/live" 2>/dev/null; }
minio_up() {
  if alive minio && minio_healthy; then
    echo "stack: MinIO already running on $MINIO_ADDR"
  else
    need "$MINIO" "make bin/minio builds it"
    mkdir -p "$DIR/minio"
    MINIO_ROOT_USER=$MINIO_USER MINIO_ROOT_PASSWORD=$MINIO_SECRET nohup "$MINIO" server "$DIR/minio" \
      --address "$MINIO_ADDR" --console-address "$MINIO_CONSOLE" --quiet >>"$DIR/minio.log" 2>&1 &
    echo $! >"$(pidfile minio)"
    wait_for MinIO 60 minio_healthy
    echo "stack: MinIO up on $MINIO_ADDR (console http://$MINIO_CONSOLE)"
  fi
  # Create the bucket (S3 PUT Bucket, signed by curl); 409 = it exists.
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$MINIO_USER:$MINIO_SECRET" "http://$MINIO_ADDR/$BUCKET")
  case "$code" in 200|409) ;; *) echo "stack: creating bucket $BUCKET: HTTP $code" >&2; exit 1 ;; esac
}

workers_up() {
  need "$WORKER" "make build builds it"
  local i
  for i in $(seq 1 "$NWORKERS"); do
    if alive "worker$i"; then echo "stack: worker$i already running"; continue; fi
    (
      cli_env
      exec nohup "$WORKER" --slots "$SLOTS" >>"$DIR/worker$i.log" 2>&1
    ) &
    echo $! >"$(pidfile "worker$i")"
  done
  sleep 0.5
  for i in $(seq 1 "$NWORKERS"); do
    alive "worker$i" || { echo "stack: worker$i exited at start; see $DIR/worker$i.log" >&2; tail -5 "$DIR/worker$i.log" >&2; exit 1; }
  done
  echo "stack: $NWORKERS workers on queue $QUEUE ($SLOTS slots each); blob $BLOB"
}
workers_down() { for f in "$DIR"/worker*.pid; do [ -e "$f" ] || continue; stop "$(basename "$f" .pid)"; done; }

case "${1:-status}" in
up)
  mkdir -p "$DIR"
  chmod 755 "$DIR"
  pg_up
  server_up
  minio_up
  workers_up
  echo "stack: up. Point a starter at it with: eval \"\$(infra/prod/stack.sh env)\""
  ;;
down)
  workers_down
  stop server
  stop minio
  pg_down
  ;;
restart-server)
  stop server
  server_up
  ;;
stop-server) stop server ;;
start-server) server_up ;;
stop-workers) workers_down ;;
start-workers) workers_up ;;
env)
  client_env | sed 's/^/export /'
  ;;
status)
  rc=0
  if [ -f "$DIR/pg/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" -D "$DIR/pg" status >/dev/null 2>&1; then
    echo "postgres: running on 127.0.0.1:$PG_PORT"
  else echo "postgres: not running"; rc=1; fi
  if alive server && server_healthy; then echo "temporal: running on $FRONTEND (pid $(cat "$(pidfile server)"), TLS: $TLS)"; else echo "temporal: not running"; rc=1; fi
  if alive minio; then echo "minio: running on $MINIO_ADDR (pid $(cat "$(pidfile minio)"))"; else echo "minio: not running"; rc=1; fi
  for i in $(seq 1 "$NWORKERS"); do
    if alive "worker$i"; then echo "worker$i: running (pid $(cat "$(pidfile "worker$i")"))"; else echo "worker$i: not running"; rc=1; fi
  done
  exit $rc
  ;;
*)
  echo "usage: $0 up|down|status|env|restart-server|stop-server|start-server|stop-workers|start-workers" >&2
  exit 2
  ;;
esac
