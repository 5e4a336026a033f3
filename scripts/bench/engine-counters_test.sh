#!/usr/bin/env bash
# The parsing of scripts/bench/engine-counters.sh against saved engine output (ctest: engine_counters_script,
# label unit): per-table counts, the store's sums with ranges in reads, the leases apart, the node's client
# requests (totals only, not per consistency level), Redis calls.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(QIM_ENGINE_COUNTERS_DUMP=$here/testdata/mxdump.json bash "$here/engine-counters.sh" cassandra ks)
expect() { grep -qx "$1" <<<"$out" || fail "no line '$1' in:"$'\n'"$out"; }
expect "mailbox_entry.writes 2000"
expect "mailbox_dispatch.reads 950"
expect "mailbox_dispatch.ranges 50"
expect "lane_dispatch.lwt 130"
expect "writes 3000"
expect "reads 1000"
expect "lwt 130"
expect "lease_lwt 40"
expect "requests.Write 400"
expect "requests.Read 150"
expect "requests 600"
grep -q "CasPropose\|MemtableColumns\|999\|777\|^history_message" <<<"$out" && fail "a metric that is not counted came out: $out"
out=$(QIM_ENGINE_COUNTERS_DUMP=$here/testdata/commandstats.txt bash "$here/engine-counters.sh" redis 1)
expect "evalsha 300"
expect "hget 12"
expect "calls 312"
echo '{"beans":[]}' >"${TMPDIR:-/tmp}/empty-mxdump.$$"
QIM_ENGINE_COUNTERS_DUMP=${TMPDIR:-/tmp}/empty-mxdump.$$ bash "$here/engine-counters.sh" cassandra "bad name" 2>/dev/null &&
  fail "a keyspace that is not a CQL name was accepted"
rm -f "${TMPDIR:-/tmp}/empty-mxdump.$$"
echo "engine-counters: ok"
