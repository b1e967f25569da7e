#!/bin/sh
# Creates (or upgrades) Temporal's PostgreSQL databases with the server's own
# schema tool, temporal-sql-tool of the admin-tools image (temporalio/admin-tools
# at TEMPORAL_SERVER_VERSION), and the schemas embedded in it. The same steps
# as infra/server/setup-schema.sh of the production script, in POSIX sh for the
# image's busybox. Idempotent: an existing database is kept, setup-schema
# records version 0.0 only once, update-schema applies only the missing versions.
#
# Environment (the server's own names): POSTGRES_SEEDS, DB_PORT, POSTGRES_USER,
# POSTGRES_PWD, DBNAME, VISIBILITY_DBNAME.
# Run by the compose service temporal-schema and the Kubernetes Job temporal-schema.
set -eu
export SQL_PLUGIN=postgres12
export SQL_HOST="${POSTGRES_SEEDS:?POSTGRES_SEEDS names the PostgreSQL host}"
export SQL_PORT="${DB_PORT:-5432}"
export SQL_USER="${POSTGRES_USER:-temporal}"
export SQL_PASSWORD="${POSTGRES_PWD:?POSTGRES_PWD is the PostgreSQL password}"

# PostgreSQL may still be starting: wait up to 5 minutes for its port (with
# nc, which the admin-tools image has; without it, a failure below fails the
# Job or service, which then retries).
if command -v nc >/dev/null 2>&1; then
  i=0
  until nc -z -w 5 "$SQL_HOST" "$SQL_PORT"; do
    i=$((i + 1))
    [ "$i" -lt 60 ] || { echo "setup-schema: PostgreSQL at $SQL_HOST:$SQL_PORT does not answer" >&2; exit 1; }
    sleep 5
  done
fi

for pair in "${DBNAME:-temporal}:postgresql/v12/temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:postgresql/v12/visibility"; do
  db=${pair%%:*} schema=${pair#*:}
  # create-database fails when the database exists: that is the idempotent case.
  temporal-sql-tool --db "$db" create-database >/dev/null 2>&1 || true
  # setup-schema -v 0.0 creates the schema_version tables; on a database that
  # has them it fails harmlessly, and update-schema (which needs them) then
  # tells whether the database is usable.
  temporal-sql-tool --db "$db" setup-schema -v 0.0 >/dev/null 2>&1 || true
  temporal-sql-tool --db "$db" update-schema --schema-name "$schema"
done
echo "setup-schema: ${DBNAME:-temporal} and ${VISIBILITY_DBNAME:-temporal_visibility} on $SQL_HOST:$SQL_PORT are up to date"
