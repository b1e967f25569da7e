#!/usr/bin/env bash
# Creates (or upgrades) Temporal's PostgreSQL databases with the server's own
# schema tool and the schemas embedded in it (temporal-sql-tool, built from
# go.temporal.io/server/cmd/tools/sql at TEMPORAL_SERVER_VERSION). Idempotent:
# an existing database is kept, setup-schema records version 0.0 only once,
# update-schema applies only the missing versions.
#
# Same environment as infra/server/config.yaml: POSTGRES_SEEDS, DB_PORT,
# POSTGRES_USER, POSTGRES_PWD, DBNAME, VISIBILITY_DBNAME.
# SQL_TOOL names the tool (default: bin/temporal-sql-tool, else on PATH).
set -euo pipefail
TOOL=${SQL_TOOL:-}
if [ -z "$TOOL" ]; then
  here=$(cd "$(dirname "$0")/../.." && pwd)
  if [ -x "$here/bin/temporal-sql-tool" ]; then TOOL=$here/bin/temporal-sql-tool; else TOOL=temporal-sql-tool; fi
fi
export SQL_PLUGIN=postgres12
export SQL_HOST=${POSTGRES_SEEDS:-127.0.0.1}
export SQL_PORT=${DB_PORT:-5432}
export SQL_USER=${POSTGRES_USER:-temporal}
export SQL_PASSWORD=${POSTGRES_PWD:-}

for pair in "${DBNAME:-temporal}:postgresql/v12/temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:postgresql/v12/visibility"; do
  db=${pair%%:*} schema=${pair#*:}
  # create-database fails when the database exists: that is the idempotent case.
  "$TOOL" --db "$db" create-database >/dev/null 2>&1 || true
  # setup-schema -v 0.0 creates the schema_version tables; on a database that
  # has them it fails harmlessly, so its error is ignored only when update-schema
  # (which needs them) then succeeds.
  "$TOOL" --db "$db" setup-schema -v 0.0 >/dev/null 2>&1 || true
  "$TOOL" --db "$db" update-schema --schema-name "$schema"
done
echo "setup-schema: ${DBNAME:-temporal} and ${VISIBILITY_DBNAME:-temporal_visibility} on $SQL_HOST:$SQL_PORT are at the schema of $("$TOOL" --version 2>/dev/null | head -1 || echo 'the tool')"
