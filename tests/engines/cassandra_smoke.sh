#!/usr/bin/env bash
# Smoke test of scripts/engines/cassandra.sh in one mode (single by default; `cassandra_smoke.sh cluster` for
# the three-node ring): start (unless that mode already runs), every node answers CQL, nodetool status shows
# the nodes Up/Normal, then a CQL round trip with the DataStax Java driver of the jar set (through
# `cassandra.sh cql`): create a keyspace (RF 1, or 3 on the cluster), write a row with a client-supplied
# timestamp a day in the future, read it back with its WRITETIME, drop the keyspace. Stops Cassandra only
# if it started it. With QIM_SMOKE_USE_RUNNING=1 (scripts/test.sh) it never starts one: not running fails.
set -uo pipefail
SMOKE_NAME=cassandra
source "$(dirname "${BASH_SOURCE[0]}")/smoke_lib.sh"
cassandra=("$ENGINES/cassandra.sh")
mode=${1:-${QIM_CASSANDRA_MODE:-single}}
p=${QIM_CASSANDRA_ADDRESS_PREFIX:-127.0.0.}
case $mode in
  single) nodes=1 hosts=${p}1 ;;
  cluster) nodes=3 hosts=${p}1,${p}2,${p}3 ;;
  *) echo "usage: $0 [single|cluster]" >&2; exit 2 ;;
esac

started=0
if "${cassandra[@]}" status "$mode" >/dev/null 2>&1; then
  echo "cassandra $mode already running: using it, leaving it running"
elif smoke_use_running; then
  smoke_fail "cassandra $mode is not running (QIM_SMOKE_USE_RUNNING=1: the caller starts it, the smoke must not)"
  smoke_summary
  exit
else
  "${cassandra[@]}" start "$mode" && started=1
fi
smoke_check "every $mode node answers CQL on 9042" "${cassandra[@]}" wait "$mode"

status=$("${cassandra[@]}" nodetool status 2>&1)
un=$(grep -c '^UN ' <<<"$status")
if ((un == nodes)); then smoke_pass "nodetool status shows $nodes UN"; else smoke_fail "nodetool status shows $un UN, expected $nodes"; echo "$status" | sed 's/^/    /'; fi

ks="qim_smoke_$$"
ts=$((($(date +%s) + 86400) * 1000000)) # microseconds, one day ahead: Cassandra accepts future timestamps
cl=ONE
[[ $mode == cluster ]] && cl=ALL
errfile=$(mktemp)
out=$("${cassandra[@]}" cql -h "$hosts" -c "$cl" 2>"$errfile" <<CQL
CREATE KEYSPACE $ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': $nodes};
CREATE TABLE $ks.t (k text PRIMARY KEY, v text);
INSERT INTO $ks.t (k, v) VALUES ('hello', 'world') USING TIMESTAMP $ts;
SELECT v, WRITETIME(v) FROM $ks.t WHERE k = 'hello';
DROP KEYSPACE $ks;
CQL
)
if [[ $out == "world"$'\t'"$ts" ]]; then
  smoke_pass "CQL round trip at consistency $cl (RF $nodes, client timestamp $ts)"
else
  smoke_fail "CQL round trip: got [$out], expected [world<TAB>$ts]"
  sed 's/^/    /' "$errfile"
fi
rm -f "$errfile"

if ((started)); then "${cassandra[@]}" stop "$mode"; fi
smoke_summary
