#!/usr/bin/env bash
# Runs a private Redis instance (Debian's redis-server) on 127.0.0.1 for QIM's tests and benchmarks.
#
#   scripts/engines/redis.sh {start|wait|stop|logs|status|cli} [NAME [PORT]]
#
# NAME (default "redis") names the instance; PORT defaults to $QIM_REDIS_PORT or 16379. Several instances
# can run side by side, e.g. mailbox0 16379, mailbox1 16380, routing 16381. Each keeps its config, data,
# log and pid file in $QIM_RUN_DIR/redis-NAME. The system's own redis (port 6379) is never touched.
#   start   daemonizes redis-server (does nothing if this instance already runs)
#   wait    polls PING until it answers PONG ($QIM_REDIS_WAIT_TIMEOUT, default 30 s)
#   stop    SHUTDOWN NOSAVE (then SIGTERM by pid); idempotent
#   logs    last lines of the log ($LINES, default 100)
#   status  running or not, pid, port, memory
#   cli     redis-cli against this instance with the remaining arguments (cli NAME PORT ARGS...)
# Persistence is off by default (tests start from an empty store); QIM_REDIS_APPENDONLY=yes turns on the AOF.
set -euo pipefail
QIM_ENGINE=redis
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cmd=${1:-}
name=${2:-redis}
port=${3:-${QIM_REDIS_PORT:-16379}}
[[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || qim_die "bad instance name '$name' (letters, digits, _ . - only)"
[[ $port =~ ^[0-9]+$ ]] || qim_die "bad port '$port'"
QIM_ENGINE="redis:$name"
dir="$QIM_RUN_DIR/redis-$name"
pidfile="$dir/redis.pid"
logfile="$dir/redis.log"
conf="$dir/redis.conf"
marker="redis-server 127.0.0.1:$port"

# The port this instance was started with (the one in its config), if it was started before.
configured_port() { [[ -f $conf ]] && sed -n 's/^port //p' "$conf" || true; }

running_pid() {
  local p
  p=$(configured_port)
  qim_pid "$pidfile" "redis-server 127.0.0.1:${p:-$port}"
}

ping() { [[ $(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]; }

start() {
  command -v redis-server >/dev/null || qim_die "redis-server is not installed: run scripts/install-deps.sh (Debian package redis-server)"
  local pid
  if pid=$(running_pid); then
    qim_log "already running (pid $pid, port $(configured_port)); nothing to do"
    return 0
  fi
  qim_require_port_free 127.0.0.1 "$port" "redis $name"
  mkdir -p "$dir/data"
  qim_rotate_log "$logfile"
  cat >"$conf" <<EOF
# written by scripts/engines/redis.sh; rewritten at each start
bind 127.0.0.1
port $port
# Reachable from loopback only (bind above). Protected mode would also refuse loopback clients other than
# 127.0.0.1 itself, and the nemesis partition tests connect from 127.0.4.N (decision 84).
protected-mode no
daemonize yes
pidfile $pidfile
logfile $logfile
loglevel notice
dir $dir/data
save ""
appendonly ${QIM_REDIS_APPENDONLY:-no}
appendfsync everysec
maxmemory-policy noeviction
databases 16
tcp-keepalive 60
EOF
  local t0
  t0=$(qim_now_ms)
  qim_log "starting redis-server on 127.0.0.1:$port (dir $dir)"
  (
    qim_close_fds
    exec redis-server "$conf"
  ) </dev/null >/dev/null || { qim_show_log_tail "$logfile"; qim_die "redis-server failed to start; see $logfile"; }
  # daemonize: the pid file appears once the server forked
  local i
  for i in $(seq 50); do [[ -s $pidfile ]] && break; sleep 0.1; done
  pid=$(running_pid) || { qim_show_log_tail "$logfile"; qim_die "redis-server exited right after starting; see $logfile"; }
  qim_log "started (pid $pid) in $(qim_since "$t0"); run '$0 wait $name $port' to wait for PING"
}

wait_ready() {
  local p
  [[ -f $pidfile ]] || qim_die "redis $name is not running (no pid file $pidfile): run '$0 start $name ${port}' first"
  p=$(configured_port)
  qim_wait_for "redis $name PING on 127.0.0.1:${p:-$port}" "${QIM_REDIS_WAIT_TIMEOUT:-30}" "$logfile" "$pidfile" ping "${p:-$port}"
}

stop() {
  local pid p
  p=$(configured_port)
  if pid=$(running_pid); then
    local t0
    t0=$(qim_now_ms)
    qim_log "stopping (pid $pid, port ${p:-$port}): SHUTDOWN NOSAVE"
    redis-cli -h 127.0.0.1 -p "${p:-$port}" shutdown nosave >/dev/null 2>&1 || true
    local i
    for i in $(seq 100); do qim_alive "$pid" || break; sleep 0.1; done
    if qim_alive "$pid"; then
      qim_stop_pidfile "redis $name" "$pidfile" 10 "redis-server"
    else
      rm -f "$pidfile"
      qim_log "stopped after $(qim_since "$t0")"
    fi
  else
    rm -f "$pidfile"
    qim_log "not running"
  fi
}

status() {
  local pid p
  p=$(configured_port)
  if pid=$(running_pid); then
    local answer=no
    ping "${p:-$port}" && answer=PONG
    qim_log "running: pid $pid, 127.0.0.1:${p:-$port}, PING: $answer, RSS $(qim_rss_mb "$pid") MiB, dir $dir"
  else
    qim_log "not running (dir $dir)"
    return 3
  fi
}

case $cmd in
  start) start ;;
  wait) wait_ready ;;
  stop) stop ;;
  logs) tail -n "${LINES:-100}" "$logfile" 2>/dev/null || qim_die "no log yet at $logfile" ;;
  status) status ;;
  cli) shift $(($# < 3 ? $# : 3)); p=$(configured_port); exec redis-cli -h 127.0.0.1 -p "${p:-$port}" "$@" ;;
  *)
    echo "usage: $0 {start|wait|stop|logs|status|cli} [NAME [PORT]]" >&2
    exit 2
    ;;
esac
