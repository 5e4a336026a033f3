#!/usr/bin/env bash
# The first hour with real processes (issue 37, items 2 and 3): the README's "Trying it" block pasted as it
# is against a `qim up`, and each first-hour mistake's message says what to do. ctest label web (the test
# command's "tls and web (C++)" phase); no engine. Two `qim up` of its own (one plain, one --dev-tls) on
# ports picked by the kernel, data under a temp dir.
#   first_hour_test.sh QIM QIMCTL SOURCE_DIR
set -uo pipefail
qim=$1 qimctl=$2 src=$3
work=$(mktemp -d /tmp/qim-first-hour-XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
[[ -n ${QIM_FIRST_HOUR_KEEP:-} ]] && trap - EXIT
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; shift; printf '     %s\n' "$@"; failed=$((failed + 1)); }
# expect NAME TEXT FILE: FILE holds TEXT (fixed string).
expect() { if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1" "expected: $2" "got: $(cat "$3")"; fi; }

# up NAME DIR [ARGS...]: a `qim up` with data in DIR; sets port_NAME and admin_NAME from running.json.
up() {
  local name=$1 dir=$2
  shift 2
  QIM_LOG_LEVEL=warn "$qim" up --data-dir "$dir" --port 0 --admin-port 0 "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  local i
  for i in $(seq 1 300); do
    if [[ -f $dir/running.json ]]; then
      eval "port_$name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gateway_port"])' "$dir/running.json")"
      eval "admin_$name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin_port"])' "$dir/running.json")"
      return 0
    fi
    sleep 0.1
  done
  echo "qim up $name did not start:"; cat "$work/$name.log"; exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The plain one's data dir is run.sh's ./qim-data as seen from $work (the README's commands use it).
up plain "$work/qim-data"
up tls "$work/tls" --dev-tls
plain_url=ws://127.0.0.1:$port_plain
dir_plain=$work/qim-data dir_tls=$work/tls
tok() { local d="dir_$1"; "$qim" token --data-dir "${!d}" --user "$2"; }

# ---- item 2: the README's "Trying it" block, pasted as it is (run.sh's ./qim-data is this test's data dir,
# its default URL this test's port, its build dir the one under test)
block=$(python3 - "$src/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## Trying it"):]
print(re.search(r"```\n(.*?)```", section, re.S).group(1))
PY
)
build=$(cd "$(dirname "$qim")/../.." && pwd)
block=${block//\$PWD\/build\/release/$build}
(
  cd "$work" || exit 1
  export QIM_URL=$plain_url
  timeout 60 bash -c "set -e; $block
sleep 1; kill -INT %1; wait %1" >"$work/readme.out" 2>&1
  echo "exit $?" >>"$work/readme.out"
)
expect "README block: bob's listen shows alice's message" "from=alice conversation=d:alice:bob body=hello bob" "$work/readme.out"
expect "README block: history shows it" "from=alice time=" "$work/readme.out"
expect "README block: listen ends with its cursor on Ctrl-C" "cursor=" "$work/readme.out"
expect "README block: runs to the end" "exit 0" "$work/readme.out"

ALICE=$(tok plain alice) BOB=$(tok plain bob)
# ---- item 2: empty answers, system entries
"$qimctl" history --url "$plain_url" --token "$(tok plain nobody)" --with carol >"$work/h.out" 2>&1
expect "history of nothing prints (no messages)" "(no messages)" "$work/h.out"
"$qimctl" sync --url "$plain_url" --token "$(tok plain nobody)" >"$work/s.out" 2>&1
expect "sync of nothing prints (no messages)" "(no messages)" "$work/s.out"
"$qimctl" group create --url "$plain_url" --token "$ALICE" --name lunch --member dave >/dev/null 2>&1
"$qimctl" sync --url "$plain_url" --token "$(tok plain dave)" >"$work/g.out" 2>&1
expect "a system entry prints as text" "system=alice created the group 'lunch'" "$work/g.out"

# ---- blocking, muting and delete for me through qimctl (docs/protocol.md "Blocking", "Mute", "Delete for me")
ERIN=$(tok plain erin) FRED=$(tok plain fred)
"$qimctl" send --url "$plain_url" --token "$FRED" --to erin "before the block" >/dev/null 2>&1
"$qimctl" block --url "$plain_url" --token "$ERIN" fred >"$work/p1" 2>&1
expect "qimctl block" "user=fred blocked=true" "$work/p1"
"$qimctl" blocks --url "$plain_url" --token "$ERIN" >"$work/p2" 2>&1
expect "qimctl blocks lists the blocked user" "user=fred" "$work/p2"
"$qimctl" send --url "$plain_url" --token "$FRED" --to erin "let me in" >/dev/null 2>"$work/p3"
expect "a blocked user's send is refused BLOCKED" "BLOCKED: 'erin' does not accept your messages" "$work/p3"
"$qimctl" unblock --url "$plain_url" --token "$ERIN" fred >/dev/null 2>&1
"$qimctl" blocks --url "$plain_url" --token "$ERIN" >"$work/p4" 2>&1
expect "qimctl unblock empties the list" "(no blocks)" "$work/p4"
"$qimctl" mute --url "$plain_url" --token "$ERIN" fred >"$work/p5" 2>&1
expect "qimctl mute (a user names the direct conversation)" "conversation=d:erin:fred muted=true muted_until=forever" "$work/p5"
"$qimctl" unmute --url "$plain_url" --token "$ERIN" fred >"$work/p6" 2>&1
expect "qimctl unmute" "muted=false" "$work/p6"
"$qimctl" delete --url "$plain_url" --token "$ERIN" fred >"$work/p7" 2>&1
expect "qimctl delete: the conversation for erin only" "conversation=d:erin:fred deleted_through=" "$work/p7"
"$qimctl" history --url "$plain_url" --token "$FRED" --with erin >"$work/p8" 2>&1
expect "... fred still has it" "body=before the block" "$work/p8"
# An edit and a recall print what changed (not their JSON) in sync and listen.
sent=$("$qimctl" send --url "$plain_url" --token "$FRED" --to gina "helo" 2>&1)
mid=$(sed -n 's/^message_id=\([0-9]*\) .*/\1/p' <<<"$sent")
"$qimctl" edit --url "$plain_url" --token "$FRED" --conversation d:fred:gina --message "$mid" "hello" >/dev/null 2>&1
"$qimctl" recall --url "$plain_url" --token "$FRED" --conversation d:fred:gina --message "$mid" >/dev/null 2>&1
"$qimctl" sync --url "$plain_url" --token "$(tok plain gina)" >"$work/p9" 2>&1
# The recall took the edit's text out of the mailbox too (decision 157): the edit's line is there, empty.
expect "sync prints an edit as what changed" "edit=$mid edits=1 body=" "$work/p9"
if grep -qF "body=hello" "$work/p9"; then bad "sync shows no edited text after the recall" "got: $(cat "$work/p9")"
else ok "sync shows no edited text after the recall"; fi
expect "sync prints a recall as what changed" "recall=$mid" "$work/p9"

# ---- item 3: errors that say what to do
"$qimctl" send --url "ws://127.0.0.1:$(free_port)" --token "$ALICE" --to bob hi 2>"$work/e1" >/dev/null
expect "connection refused: is qim up running? --url / QIM_URL" 'is `qim up` running? Give the address its banner prints after "clients connect to" with --url or QIM_URL' "$work/e1"
"$qimctl" send --url "ws://127.0.0.1:$admin_plain" --token "$ALICE" --to bob hi 2>"$work/e2" >/dev/null
expect "the admin port as the client URL" "is it the admin port" "$work/e2"
"$qimctl" send --url "wss://127.0.0.1:$port_plain" --token "$ALICE" --to bob hi 2>"$work/e3" >/dev/null
expect "wss:// to a plain port" "does not speak TLS: use ws://" "$work/e3"
"$qimctl" send --url "ws://127.0.0.1:$port_tls" --token "$(tok tls alice)" --to bob hi 2>"$work/e4" >/dev/null
expect "ws:// to a TLS port" "use wss:// and --ca" "$work/e4"
"$qimctl" send --url "wss://127.0.0.1:$port_tls" --token "$(tok tls alice)" --to bob hi 2>"$work/e5" >/dev/null
expect "an untrusted certificate: --ca" "pass --ca FILE (or QIM_TLS_CA)" "$work/e5"
"$qimctl" send --url "wss://127.0.0.1:$port_tls" --ca "$work/tls/tls/dev-cert.pem" --token "$(tok tls alice)" --to bob hi >"$work/e5b" 2>&1
expect "... and with --ca it works" "duplicate=false" "$work/e5b"
"$qimctl" sned --token x >/dev/null 2>"$work/e6"
expect "an unknown qimctl command lists the commands" "qimctl: unknown command 'sned'; the commands are: send, edit, recall, react, download, listen, history, sync, group, conversations, read, block, unblock, blocks, mute, unmute, delete (qimctl --help)" "$work/e6"
"$qim" upp >/dev/null 2>"$work/e7"
expect "an unknown qim command lists the commands" "qim: unknown command 'upp'; the commands are: up," "$work/e7"
# Attachments (docs/protocol.md "Attachments"): send --file, download. Without an object store (this qim up):
# the typed refusal. With one (scripts/test.sh's objstore phase group exports QIM_TEST_S3_*): the same bytes
# back for the peer, UNKNOWN_ATTACHMENT for anyone else.
head -c 70000 /dev/urandom >"$work/blob.bin"
printf 'a text file\n' >"$work/notes.txt"
"$qimctl" send --url "$plain_url" --token "$(tok plain alice)" --to bob --file "$work/notes.txt" 2>"$work/f1" >/dev/null
expect "send --file without an object store is refused ATTACHMENTS_DISABLED" "ATTACHMENTS_DISABLED" "$work/f1"
if [[ -n ${QIM_TEST_S3_ENDPOINT:-} ]]; then
  QIM_S3_ENDPOINT=$QIM_TEST_S3_ENDPOINT QIM_S3_BUCKET=$QIM_TEST_S3_BUCKET QIM_S3_ACCESS_KEY=$QIM_TEST_S3_ACCESS_KEY \
    QIM_S3_SECRET_KEY=$QIM_TEST_S3_SECRET_KEY up s3 "$work/s3"
  dir_s3=$work/s3 s3_url=ws://127.0.0.1:$port_s3
  "$qimctl" send --url "$s3_url" --token "$(tok s3 alice)" --to bob --file "$work/blob.bin" --type application/zip \
    "the zip" >"$work/f2" 2>&1
  expect "send --file uploads and sends" "attachment=" "$work/f2"
  fmid=$(sed -n 's/^message_id=\([0-9]*\) .*/\1/p' "$work/f2")
  fatt=$(sed -n 's/.* attachment=\([^ ]*\) .*/\1/p' "$work/f2")
  "$qimctl" sync --url "$s3_url" --token "$(tok s3 bob)" >"$work/f2b" 2>&1
  expect "sync prints the caption and the attachment's id" "body=the zip attachment=$fatt kind=file name=blob.bin size=70000" "$work/f2b"
  "$qimctl" download --url "$s3_url" --token "$(tok s3 bob)" --conversation d:alice:bob --message "$fmid" \
    --attachment "$fatt" -o "$work/got.bin" >"$work/f3" 2>&1
  expect "download saves the file" "saved=$work/got.bin size=70000 sha256=" "$work/f3"
  if cmp -s "$work/blob.bin" "$work/got.bin"; then ok "download: the same bytes"
  else bad "download: the same bytes" "got: $(cat "$work/f3")"; fi
  "$qimctl" download --url "$s3_url" --token "$(tok s3 carol)" --conversation d:alice:bob --message "$fmid" \
    --attachment "$fatt" -o "$work/no.bin" >"$work/f4" 2>&1
  expect "download by a non-member is refused UNKNOWN_ATTACHMENT" "UNKNOWN_ATTACHMENT" "$work/f4"
else
  echo "skip send --file / download against a store: QIM_TEST_S3_ENDPOINT is unset (the objstore phase group sets it)"
fi

"$qimctl" send --url "$plain_url" --token "$(tok tls alice)" --to bob hi 2>"$work/e8" >/dev/null
expect "a token minted for another data directory" "signed with another secret (minted for another data directory" "$work/e8"
"$qim" admin mailbox read --data-dir "$dir_plain" bob >/dev/null 2>"$work/e9"
expect "qim admin beside a running qim up names it" "is in use by \`qim up\` (pid" "$work/e9"
short=$("$qim" token --data-dir "$dir_plain" --user alice --ttl 1)
sleep 2
"$qimctl" send --url "$plain_url" --token "$short" --to bob hi 2>"$work/e10" >/dev/null
if grep -qE 'token expired at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC' "$work/e10"; then ok "an expired token says when, in UTC"
else bad "an expired token says when, in UTC" "got: $(cat "$work/e10")"; fi
QIM_MAILBOX_STORE_BACKEND=redis QIM_MAILBOX_REDIS=127.0.0.1:$(free_port) timeout 60 "$qim" up --data-dir "$work/noredis" \
  --port 0 --admin-port 0 >/dev/null 2>"$work/e11"
expect "an engine that cannot be reached names the variable" "check QIM_MAILBOX_REDIS (now '127.0.0.1:" "$work/e11"

echo "cli smoke: $passed passed, $failed failed"
((failed == 0))
