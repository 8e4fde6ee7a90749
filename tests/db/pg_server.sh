# A real PostgreSQL server for the database tests, from Debian's postgresql package: sourced by
# run_db.sh. pg_start DIR makes a cluster in DIR (initdb), starts it on a Unix socket in DIR and
# on a free TCP port of 127.0.0.1, with a database "scalea" and a superuser "scalea" whose
# password is $PG_PASSWORD (TCP needs it: scram-sha-256; the socket trusts local users), and
# sets PG_URL (socket) and PG_TCP_URL (TCP, password in the URL). pg_stop stops it; pg_kill
# stops it at once (as a crash would), pg_restart starts it again on the same port.
# The server refuses to run as root: as root it runs as the postgres user of the package (or
# nobody), which owns DIR.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PG_PASSWORD=s3cret-Pw

pg_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$pg_user" -- "$@"; else "$@"; fi
}

pg_start() {
  pg_dir=$1
  [ -x "$pg_bin/initdb" ] || { echo "FAIL: PostgreSQL not installed (Debian: postgresql; scripts/setup-debian.sh)"; exit 1; }
  pg_user=$(id -un)
  if [ "$(id -u)" = 0 ]; then
    pg_user=nobody
    id postgres > /dev/null 2>&1 && pg_user=postgres
  fi
  mkdir -p "$pg_dir/data" "$pg_dir/sock"
  [ "$(id -u)" = 0 ] && chown -R "$pg_user" "$pg_dir"
  chmod 755 "$pg_dir"
  pg_as "$pg_bin/initdb" -D "$pg_dir/data" -U scalea --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C --no-sync > "$pg_dir/initdb.log" 2>&1 \
    || { echo "FAIL: initdb: $(tail -n 3 "$pg_dir/initdb.log")"; exit 1; }
  pg_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pg_restart
  pg_as "$pg_bin/psql" -q -h "$pg_dir/sock" -p "$pg_port" -U scalea -d postgres \
    -c "CREATE DATABASE scalea" -c "ALTER ROLE scalea PASSWORD '$PG_PASSWORD'" > /dev/null \
    || { echo "FAIL: cannot create the test database"; exit 1; }
  PG_URL="postgresql:///scalea?host=$pg_dir/sock&port=$pg_port&user=scalea"
  PG_TCP_URL="postgresql://scalea:$PG_PASSWORD@127.0.0.1:$pg_port/scalea"
}

pg_restart() {
  pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
    -o "-k $pg_dir/sock -p $pg_port -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" \
    start > /dev/null || { echo "FAIL: pg_ctl start: $(tail -n 5 "$pg_dir/server.log")"; exit 1; }
}

# psql as the test superuser on the socket: pg_sql [psql options] -c SQL
pg_sql() {
  pg_as "$pg_bin/psql" -X -q -t -A -h "$pg_dir/sock" -p "$pg_port" -U scalea -d scalea "$@"
}

pg_kill() { pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop > /dev/null 2>&1; }

pg_stop() {
  [ -n "${pg_dir:-}" ] && [ -d "$pg_dir/data" ] || return 0
  pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop > /dev/null 2>&1 || pg_kill
}
