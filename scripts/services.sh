#!/usr/bin/env bash
# Makes sure every service the tests talk to is running on this machine:
# PostgreSQL, PgBouncer in transaction mode in front of it, MariaDB, Redis,
# RabbitMQ and NATS with JetStream (and the chromium and promtool commands
# some tests run). A service that
# is down is started; one that is missing is installed from Debian's packages
# first. Any service still unreachable after that fails the run loudly —
# tests never skip for a missing service.
set -euo pipefail

log() { printf 'services: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # name port seconds
  local i
  for ((i = 0; i < $3 * 4; i++)); do
    port_open "$2" && return 0
    sleep 0.25
  done
  log "FATAL: $1 is not listening on 127.0.0.1:$2 after $3s"
  return 1
}

apt_updated=""
install() { # debian packages...
  if [[ -z "$apt_updated" ]]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

postgres() {
  port_open 5432 && return 0
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    install postgresql
    local hba
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -n1)
    # The tests connect as postgres over TCP without a password.
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n' >"$hba"
  fi
  log "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >&2 || true
  wait_port PostgreSQL 5432 60
  for db in test root; do
    psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='$db'" | grep -q 1 ||
      psql -h 127.0.0.1 -U postgres -c "create database $db" >&2
  done
}

# PgBouncer 1.18 (Debian's) in transaction mode on 127.0.0.1:6432, in front
# of the local PostgreSQL: pgstore's tests and the relay's run through it
# as well as direct. It has a configuration of its own (the packaged
# service is left alone); it cannot run as root, so it runs as postgres.
PGBOUNCER_DIR=/var/lib/reliar-pgbouncer
pgbouncer_service() {
  port_open 6432 && return 0
  [[ -x /usr/sbin/pgbouncer ]] || install pgbouncer
  log "starting PgBouncer (transaction mode) on :6432"
  mkdir -p "$PGBOUNCER_DIR"
  cat >"$PGBOUNCER_DIR/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6432
unix_socket_dir =
auth_type = trust
auth_file = $PGBOUNCER_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
ignore_startup_parameters = extra_float_digits,search_path
pidfile = $PGBOUNCER_DIR/pgbouncer.pid
logfile = $PGBOUNCER_DIR/pgbouncer.log
INI
  printf '"postgres" ""\n' >"$PGBOUNCER_DIR/userlist.txt"
  chown -R postgres:postgres "$PGBOUNCER_DIR" 2>/dev/null || true
  if [[ $(id -u) -eq 0 ]]; then
    /usr/sbin/pgbouncer -d -u postgres "$PGBOUNCER_DIR/pgbouncer.ini" >&2
  else
    /usr/sbin/pgbouncer -d "$PGBOUNCER_DIR/pgbouncer.ini" >&2
  fi
  wait_port PgBouncer 6432 30 || { tail -n 20 "$PGBOUNCER_DIR/pgbouncer.log" >&2 || true; return 1; }
  psql -h 127.0.0.1 -p 6432 -U postgres -d test -tAc 'select 1' | grep -q 1 ||
    { log "FATAL: PgBouncer on :6432 does not reach PostgreSQL"; return 1; }
}

mariadb() {
  port_open 3306 && return 0
  local fresh=""
  if ! command -v mariadbd >/dev/null; then
    install mariadb-server
    fresh=1
  fi
  log "starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd >&2
  wait_port MariaDB 3306 60
  if [[ -n "$fresh" ]]; then
    # Debian's root logs in through the unix socket; the tests use TCP with
    # an empty password, as on the reference machine.
    mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD(''); CREATE DATABASE IF NOT EXISTS test;" >&2
  fi
}

redis() {
  port_open 6379 && return 0
  command -v redis-server >/dev/null || install redis-server
  log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log >&2
  wait_port Redis 6379 30
}

rabbitmq() {
  port_open 5672 && return 0
  command -v rabbitmq-server >/dev/null || install rabbitmq-server
  log "starting RabbitMQ"
  rabbitmq-server -detached >&2 || true
  wait_port RabbitMQ 5672 120
}

nats() {
  port_open 4222 && return 0
  command -v nats-server >/dev/null || install nats-server
  log "starting NATS with JetStream"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log >&2
  wait_port NATS 4222 30
}

# The admin page's test drives a real headless browser.
chromium_browser() {
  command -v chromium >/dev/null && return 0
  install chromium
  command -v chromium >/dev/null || { log "FATAL: chromium is not installed"; return 1; }
}

# The alert rules' tests (deploy/) run Prometheus' promtool, from Debian's
# prometheus package; its server is not started (nothing here needs it).
promtool_cli() {
  command -v promtool >/dev/null && return 0
  install --no-install-recommends prometheus
  command -v promtool >/dev/null || { log "FATAL: promtool is not installed"; return 1; }
}

postgres
pgbouncer_service
mariadb
redis
rabbitmq
nats
chromium_browser
promtool_cli
log "all services up: PostgreSQL :5432, PgBouncer :6432, MariaDB :3306, Redis :6379, RabbitMQ :5672, NATS :4222; chromium at $(command -v chromium); promtool at $(command -v promtool)"
