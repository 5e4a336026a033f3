#!/usr/bin/env bash
# The distributed deployment on this machine's loopback, in one command (README, docs/running.md):
#
#   bash scripts/distributed.sh up       engines (Kafka, Redis for routing, the store), then 2 gateways,
#                                        fanout, 2 MailboxNodes and the archiver, each its own `qim` process;
#                                        returns once every /healthz answers, printing where clients connect
#   bash scripts/distributed.sh status   each process (pid, /healthz) and engine
#   bash scripts/distributed.sh down     SIGTERM to every process (gateways first; each drains), then stops
#                                        the engines this script started
#
# Environment (all optional):
#   QIM_MAILBOX_STORE_BACKEND   redis | scylla (Cassandra) | scylla-lwt (form A, the comparison)   (redis)
#   QIM_DISTRIBUTED_DIR         run dir: auth-secret, env, one data dir + log + pid a process (./qim-distributed)
#   QIM_DISTRIBUTED_BASE_PORT   gateway-1 ws BASE, admin BASE+1; gateway-2 BASE+10/+11; fanout admin
#                               BASE+21; mailbox-1 BASE+31; mailbox-2 BASE+41; archiver BASE+51     (7400)
#   QIM_DISTRIBUTED_REDIS_PORT  the Redis mailbox store (redis deployment)                    (16379)
#   QIM_DISTRIBUTED_ROUTING_PORT  the Redis routing instance                                  (16381)
#   QIM_CQL_HOSTS               set: use this Cassandra/ScyllaDB instead of starting one (scylla deployment);
#                               unset: the node this script starts, ${QIM_CASSANDRA_ADDRESS_PREFIX:-127.0.0.}1
#   QIM_CQL_KEYSPACE            keyspace of the scylla deployment                              (qim_distributed)
#   QIM_RUN_DIR                 the engines' run dir (scripts/engines/README.md)     ($QIM_DISTRIBUTED_DIR/engines)
#   QIM_KAFKA_PORT, QIM_KAFKA_CONTROLLER_PORT, QIM_KAFKA_HEAP   as scripts/engines/kafka.sh (19092, 19093)
#   QIM_SKIP_BUILD=1            use ./build/release as it is (default: scripts/build.sh first)
#   QIM_DISTRIBUTED_STATIC_SHARDS=1  the nodes own shards 0-7 and 8-15 (QIM_OWNED_SHARDS) instead of leases
# Any other QIM_* variable set here reaches every process (docs/running.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$(realpath -m "${QIM_DISTRIBUTED_DIR:-qim-distributed}")
export QIM_RUN_DIR=${QIM_RUN_DIR:-$dir/engines}
engines=$root/scripts/engines
qim=$root/build/release/src/app/qim
base=${QIM_DISTRIBUTED_BASE_PORT:-7400}
store_port=${QIM_DISTRIBUTED_REDIS_PORT:-16379}
routing_port=${QIM_DISTRIBUTED_ROUTING_PORT:-16381}
kafka_port=${QIM_KAFKA_PORT:-19092}

# name role gateway-port admin-port, in start order (nodes first, gateways last); stopped in reverse.
processes=(
  "mailbox-1 mailbox - $((base + 31))"
  "mailbox-2 mailbox - $((base + 41))"
  "archiver archiver - $((base + 51))"
  "fanout fanout - $((base + 21))"
  "gateway-1 gateway $base $((base + 1))"
  "gateway-2 gateway $((base + 10)) $((base + 11))"
)

say() { printf '[distributed %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[distributed %s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$1/healthz" >/dev/null 2>&1; }
pid_of() {
  local f="$dir/$1/qim.pid" p
  [[ -s $f ]] || return 1
  p=$(<"$f")
  kill -0 "$p" 2>/dev/null && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "qim $2" || return 1
  echo "$p"
}

# The variables every process shares, written once to $dir/env (the secret is generated on the first up).
write_env() {
  local backend=${QIM_MAILBOX_STORE_BACKEND:-redis} secret
  [[ $backend == redis || $backend == scylla || $backend == scylla-lwt ]] ||
    die "QIM_MAILBOX_STORE_BACKEND='$backend': the distributed deployment runs on redis, scylla or scylla-lwt"
  mkdir -p "$dir"
  if [[ ! -s $dir/auth-secret ]]; then
    (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/auth-secret")
  fi
  secret=$(<"$dir/auth-secret")
  {
    echo "QIM_AUTH_SECRET=$secret"
    echo "QIM_LOG_BACKEND=kafka"
    echo "QIM_KAFKA_BROKERS=127.0.0.1:$kafka_port"
    echo "QIM_MAILBOX_STORE_BACKEND=$backend"
    echo "QIM_ROUTING_REDIS=127.0.0.1:$routing_port"
    if [[ $backend == redis ]]; then
      echo "QIM_MAILBOX_REDIS=127.0.0.1:$store_port"
    else
      echo "QIM_CQL_HOSTS=${QIM_CQL_HOSTS:-${QIM_CASSANDRA_ADDRESS_PREFIX:-127.0.0.}1}"
      echo "QIM_CQL_KEYSPACE=${QIM_CQL_KEYSPACE:-qim_distributed}"
    fi
  } >"$dir/env"
  chmod 600 "$dir/env"
}

# The engines this script starts (and `down` stops); one already running (e.g. started by someone else in
# the same QIM_RUN_DIR) is used as it is and left running.
start_engines() {
  local backend started=()
  # A deployment keeps its data across down and up, as Kafka and Cassandra do: the Redis instances write
  # an append-only file (the test runs keep theirs off and start empty). Without it an `up` after a `down`
  # found Kafka's logs and positions but an empty mailbox store.
  export QIM_REDIS_APPENDONLY=${QIM_REDIS_APPENDONLY:-yes}
  backend=$(sed -n 's/^QIM_MAILBOX_STORE_BACKEND=//p' "$dir/env")
  if ! bash "$engines/kafka.sh" status >/dev/null 2>&1; then bash "$engines/kafka.sh" start; started+=(kafka); fi
  if ! bash "$engines/redis.sh" status routing "$routing_port" >/dev/null 2>&1; then
    bash "$engines/redis.sh" start routing "$routing_port"
    started+=(routing)
  fi
  if [[ $backend == redis ]] && ! bash "$engines/redis.sh" status mailbox "$store_port" >/dev/null 2>&1; then
    bash "$engines/redis.sh" start mailbox "$store_port"
    started+=(mailbox)
  fi
  if [[ $backend == scylla* && -z ${QIM_CQL_HOSTS:-} ]] &&
    ! bash "$engines/cassandra.sh" status >/dev/null 2>&1; then
    bash "$engines/cassandra.sh" start single
    started+=(cassandra)
  fi
  local e
  for e in "${started[@]}"; do echo "$e" >>"$dir/engines-started"; done
  bash "$engines/redis.sh" wait routing "$routing_port" || die "the routing Redis did not start"
  if [[ $backend == redis ]]; then
    bash "$engines/redis.sh" wait mailbox "$store_port" || die "the store's Redis did not start"
  fi
  bash "$engines/kafka.sh" wait || die "Kafka did not start (its log: $QIM_RUN_DIR/kafka/kafka.log)"
  if [[ $backend == scylla* && -z ${QIM_CQL_HOSTS:-} ]]; then
    bash "$engines/cassandra.sh" wait single || die "Cassandra did not start"
  fi
}

# start_process NAME ROLE GATEWAY-PORT ADMIN-PORT
start_process() {
  local name=$1 role=$2 port=$3 admin=$4 data="$dir/$1" shards=${QIM_SHARDS:-16} extra=()
  if pid_of "$name" "$role" >/dev/null; then say "$name already runs (pid $(pid_of "$name" "$role"))"; return 0; fi
  mkdir -p "$data"
  extra+=("QIM_DATA_DIR=$data" "QIM_ADMIN_PORT=$admin")
  case $name in
    gateway-*) extra+=("QIM_GATEWAY_PORT=$port" "QIM_GATEWAY_ID=$name") ;;
    # The nodes take their shards through leases (half each once both run; a dead node's shards go to the
    # other within the lease ttl, QIM_SHARD_LEASE_TTL_MS). QIM_DISTRIBUTED_STATIC_SHARDS=1: half each,
    # configured (QIM_OWNED_SHARDS at QIM_EPOCH).
    mailbox-1 | mailbox-2)
      extra+=("QIM_NODE_ID=$name")
      if [[ ${QIM_DISTRIBUTED_STATIC_SHARDS:-0} == 1 ]]; then
        if [[ $name == mailbox-1 ]]; then extra+=("QIM_OWNED_SHARDS=0-$((shards / 2 - 1))")
        else extra+=("QIM_OWNED_SHARDS=$((shards / 2))-$((shards - 1))"); fi
      fi
      ;;
  esac
  # shellcheck disable=SC2046 # one word a line of the env file
  env $(cat "$dir/env") "${extra[@]}" setsid "$qim" "$role" >>"$data/qim.log" 2>&1 </dev/null &
  echo $! >"$data/qim.pid"
  local deadline=$((SECONDS + 90))
  until healthy "$admin"; do
    if ! kill -0 "$(<"$data/qim.pid")" 2>/dev/null; then
      tail -n 20 "$data/qim.log" >&2
      die "$name (qim $role) exited during start; its log: $data/qim.log"
    fi
    ((SECONDS < deadline)) || { tail -n 20 "$data/qim.log" >&2; die "$name did not answer /healthz in 90 s"; }
    sleep 0.2
  done
  say "$name (qim $role) is up: pid $(<"$data/qim.pid"), admin http://127.0.0.1:$admin/healthz"
}

up() {
  [[ ${QIM_SKIP_BUILD:-0} == 1 ]] || bash scripts/build.sh
  [[ -x $qim ]] || die "$qim is missing: build first (bash scripts/build.sh)"
  write_env
  start_engines
  local p
  for p in "${processes[@]}"; do
    # shellcheck disable=SC2086
    start_process $p
  done
  local token_env="QIM_AUTH_SECRET=\$(cat $dir/auth-secret)"
  cat <<EOF

QIM distributed deployment is running ($(sed -n 's/^QIM_MAILBOX_STORE_BACKEND=//p' "$dir/env") store, Kafka on 127.0.0.1:$kafka_port, routing Redis on 127.0.0.1:$routing_port).
  clients connect to  ws://127.0.0.1:$base/  (gateway-1)   ws://127.0.0.1:$((base + 10))/  (gateway-2)
  admin (loopback)    gateway-1 http://127.0.0.1:$((base + 1))/metrics   gateway-2 http://127.0.0.1:$((base + 11))/metrics
                      fanout :$((base + 21))   mailbox-1 :$((base + 31))   mailbox-2 :$((base + 41))   archiver :$((base + 51))   (/healthz /metrics; /admin/pipeline with -H "X-QIM-Admin: 1")
  get a token         $token_env $qim token --user alice --device d1
  try it              ./build/release/src/ctl/qimctl listen --url ws://127.0.0.1:$((base + 10)) --token <bob's token>
                      ./build/release/src/ctl/qimctl send --url ws://127.0.0.1:$base --token <alice's token> --to bob "hi"
  logs                $dir/<process>/qim.log
  stop                bash scripts/distributed.sh down
EOF
}

down() {
  local i p name role pid
  for ((i = ${#processes[@]} - 1; i >= 0; i--)); do
    read -r name role _ _ <<<"${processes[$i]}"
    pid=$(pid_of "$name" "$role") || continue
    say "stopping $name (pid $pid): SIGTERM, it drains"
    kill -TERM "$pid"
    local deadline=$((SECONDS + 70))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      say "$name did not stop in 70 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  [[ -s $dir/engines-started ]] || { say "no engines to stop"; return 0; }
  while read -r p; do
    case $p in
      kafka) bash "$engines/kafka.sh" stop ;;
      routing) bash "$engines/redis.sh" stop routing "$routing_port" ;;
      mailbox) bash "$engines/redis.sh" stop mailbox "$store_port" ;;
      cassandra) bash "$engines/cassandra.sh" stop single ;;
    esac
  done <"$dir/engines-started"
  rm -f "$dir/engines-started"
  say "stopped"
}

status() {
  local p name role admin pid rc=0
  for p in "${processes[@]}"; do
    read -r name role _ admin <<<"$p"
    if pid=$(pid_of "$name" "$role"); then
      if healthy "$admin"; then say "$name: running (pid $pid), /healthz ok on :$admin"
      else say "$name: running (pid $pid), /healthz does not answer on :$admin"; rc=3; fi
    else
      say "$name: not running"
      rc=3
    fi
  done
  bash "$engines/kafka.sh" status || true
  bash "$engines/redis.sh" status routing "$routing_port" || true
  return $rc
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  *)
    echo "usage: $0 {up|down|status}   (see the top of this file for the variables)" >&2
    exit 2
    ;;
esac
