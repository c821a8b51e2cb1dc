#!/bin/sh
# A MariaDB server on this machine for a test suite that runs elsewhere on
# it (the Slurm 24.11 suite inside its Debian 13 root, which shares this
# machine's network): Debian 13's slurmdbd 24.11.5 does not start against
# Debian 13's MariaDB 11.8 server (error 5027 "Number of columns in result
# exceeds maximum allowed" in _check_mysql_concat_is_sane), but it does
# against Debian 12's MariaDB 10.11, this machine's. A private datadir, a
# free loopback port, a random password; the suite creates and drops its
# databases slurm_acct_db_<cluster> (cluster.py, EASYPP_TEST_DB).
#
#   host-mariadb.sh start DIR   start it; prints PORT:USER:PASSWORD
#   host-mariadb.sh stop DIR    stop it and remove DIR
set -eu
cmd=${1:-} dir=${2:-}
[ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
case $cmd in
  start)
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
      { echo "host-mariadb: mariadbd not installed (apt-get install mariadb-server)" >&2; exit 1; }
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    pass=easypp-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
    mariadb-install-db --no-defaults --datadir="$dir/data" --user=root \
      --auth-root-authentication-method=socket --skip-test-db >"$dir/install.log" 2>&1
    /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dir/data" --socket="$dir/sock" \
      --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/pid" --log-error="$dir/error.log" \
      --skip-log-bin --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
      --innodb-flush-log-at-trx-commit=0 --innodb-lock-wait-timeout=900 --max-connections=80 \
      </dev/null >/dev/null 2>&1 &
    i=0
    until mariadb --no-defaults --socket="$dir/sock" -u root -e 'SELECT 1' >/dev/null 2>&1; do
      i=$((i + 1))
      [ $i -lt 60 ] || { echo "host-mariadb: not up after 60 s: $(tail -n 5 "$dir/error.log")" >&2; exit 1; }
      sleep 1
    done
    mariadb --no-defaults --socket="$dir/sock" -u root -e \
      "CREATE USER 'easypp'@'127.0.0.1' IDENTIFIED BY '$pass';
       GRANT ALL ON \`slurm\\_acct\\_db\\_%\`.* TO 'easypp'@'127.0.0.1'; FLUSH PRIVILEGES"
    echo "$port:easypp:$pass" ;;
  stop)
    if [ -f "$dir/pid" ]; then
      kill "$(cat "$dir/pid")" 2>/dev/null || true
      i=0
      while [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && [ $i -lt 30 ]; do
        sleep 1; i=$((i + 1)); done
    fi
    rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
