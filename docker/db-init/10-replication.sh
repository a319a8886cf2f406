#!/bin/sh
# Lets the streaming replica of the `scale` profile (docker-compose.yml) connect for replication with the database's password.
echo "host replication all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
