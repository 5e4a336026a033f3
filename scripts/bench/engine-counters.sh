#!/usr/bin/env bash
# Prints an engine's own operation counters as "<name> <value>" lines, for qim-load --engine-counters
# (which samples before and after each step and reports the deltas per message):
#
#   scripts/bench/engine-counters.sh cassandra KEYSPACE   per table of KEYSPACE, from Cassandra's table
#       metrics over JMX (nodetool sjk mxdump): <table>.writes (WriteLatency: local mutations applied),
#       <table>.reads (ReadLatency: single-partition reads), <table>.ranges (RangeLatency: range scans),
#       <table>.lwt (CasPrepareLatency: Paxos rounds begun, one per LWT statement and one per retry),
#       <table>.lwt_commit (CasCommitLatency), each printed once it is non-zero; then the sums over the
#       store's and the archive's tables (history_* are in the same keyspace): writes, reads (with
#       ranges), lwt; and apart, the shard leases' own (shard_lease: renewals by time, not per message):
#       lease_writes, lease_reads, lease_lwt. And the requests the node coordinated for clients, from its
#       ClientRequest metrics (the whole node, every keyspace, leases too): requests.<scope> for Read,
#       Write, RangeSlice, CASRead, CASWrite, and their sum, requests. A batch is one write request and an
#       `IN` read one read request however many partitions they touch: what the engine decodes and answers.
#   scripts/bench/engine-counters.sh redis PORT           INFO commandstats of the Redis on 127.0.0.1:PORT:
#       <command> calls (evalsha, hset, ...), and their sum, calls.
#
# Cassandra is reached as scripts/engines/cassandra.sh reaches it (QIM_RUN_DIR, QIM_CASSANDRA_JMX_PORT).
# Exits non-zero (and prints nothing on stdout) if the engine does not answer: a missing sample is an error.
set -euo pipefail
here=$(cd "$(dirname "$0")/../engines" && pwd)
case ${1:-} in
  cassandra)
    ks=${2:?usage: $0 cassandra KEYSPACE}
    [[ $ks =~ ^[A-Za-z0-9_]+$ ]] || { echo "engine-counters: keyspace '$ks' is not a CQL name" >&2; exit 2; }
    # QIM_ENGINE_COUNTERS_DUMP: read a saved mxdump instead of asking the node (the script's own test).
    if [[ -n ${QIM_ENGINE_COUNTERS_DUMP:-} ]]; then
      dump=$(<"$QIM_ENGINE_COUNTERS_DUMP")
    else
      dump=$(bash "$here/cassandra.sh" nodetool sjk mxdump -q "org.apache.cassandra.metrics:type=Table,keyspace=$ks,*")
      dump+=$'\n'$(bash "$here/cassandra.sh" nodetool sjk mxdump -q "org.apache.cassandra.metrics:type=ClientRequest,name=Latency,*")
    fi
    grep -q '"beans"' <<<"$dump" || { echo "engine-counters: nodetool gave no metrics for $ks" >&2; exit 1; }
    awk '
      /"name" : "org.apache.cassandra.metrics:type=ClientRequest,scope=(Read|Write|RangeSlice|CASRead|CASWrite),name=Latency"/ {
        request = $0; sub(/.*scope=/, "", request); sub(/,name=.*/, "", request)
        next
      }
      request != "" && /"Count" :/ {
        v = $0; gsub(/[^0-9]/, "", v)
        requests[request] = v; sum["requests"] += v
        request = ""
        next
      }
      /"name" : / { request = "" }
      /"name" : "org.apache.cassandra.metrics:type=Table,/ {
        table = $0; sub(/.*scope=/, "", table); sub(/,name=.*/, "", table)
        metric = $0; sub(/.*,name=/, "", metric); sub(/".*/, "", metric)
        kind = metric == "WriteLatency" ? "writes" : metric == "ReadLatency" ? "reads" : \
               metric == "RangeLatency" ? "ranges" : metric == "CasPrepareLatency" ? "lwt" : \
               metric == "CasCommitLatency" ? "lwt_commit" : ""
        next
      }
      kind != "" && /"Count" :/ {
        v = $0; gsub(/[^0-9]/, "", v)
        count[table "." kind] = v; tables[table] = 1
        # The shard leases (shard_lease) and the schema marker are not per-message work: summed apart.
        group = table == "shard_lease" || table == "qim_schema_version" ? "lease_" : ""
        if (kind == "writes" || kind == "reads" || kind == "lwt") sum[group kind] += v
        if (kind == "ranges") sum[group "reads"] += v
        kind = ""
      }
      END {
        split("writes reads ranges lwt lwt_commit", kinds, " ")
        for (t in tables)
          for (k = 1; k <= 5; k++) if (count[t "." kinds[k]] > 0) print t "." kinds[k], count[t "." kinds[k]] | "sort"
        close("sort")
        print "writes", sum["writes"] + 0; print "reads", sum["reads"] + 0; print "lwt", sum["lwt"] + 0
        print "lease_writes", sum["lease_writes"] + 0; print "lease_reads", sum["lease_reads"] + 0
        print "lease_lwt", sum["lease_lwt"] + 0
        for (r in requests) print "requests." r, requests[r] | "sort"
        close("sort")
        if (length(requests) > 0) print "requests", sum["requests"] + 0
      }' <<<"$dump"
    ;;
  redis)
    port=${2:?usage: $0 redis PORT}
    if [[ -n ${QIM_ENGINE_COUNTERS_DUMP:-} ]]; then
      stats=$(<"$QIM_ENGINE_COUNTERS_DUMP")
    else
      stats=$(redis-cli -h 127.0.0.1 -p "$port" INFO commandstats)
    fi
    grep -q '^# Commandstats' <<<"$stats" || { echo "engine-counters: no commandstats from 127.0.0.1:$port" >&2; exit 1; }
    awk -F'[_:,=]' '/^cmdstat_/ { sub(/\r$/, ""); print $2, $4; total += $4 } END { print "calls", total + 0 }' <<<"$stats"
    ;;
  *)
    echo "usage: $0 cassandra KEYSPACE | redis PORT" >&2
    exit 2
    ;;
esac
