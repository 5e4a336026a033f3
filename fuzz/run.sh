#!/usr/bin/env bash
# Fuzzes the gateway's frame parser with libFuzzer for a bounded time (default 60 s).
#   fuzz/run.sh [seconds]
# Builds only the parser and the fuzz target, with clang++-14 -fsanitize=fuzzer,address,undefined, in
# build/fuzz (outside the main build tree). New inputs go to build/fuzz/corpus; the committed seeds in
# fuzz/corpus/frame_parser are read, never written. A crash leaves its input in build/fuzz/ and fails.
set -euo pipefail
seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 1 && seconds <= 3600)) || { echo "usage: $0 [seconds 1..3600]" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/fuzz"
mkdir -p "$out/obj" "$out/corpus"
cxx=clang++-14
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -I"$root/src")
sources=(src/gateway/protocol/client_frame.cc src/gateway/protocol/wire_code.cc src/gateway/protocol/json_writer.cc
         src/core/ids.cc src/core/status.cc src/core/mailbox_seq.cc)
objects=()
for s in "${sources[@]}"; do
  o="$out/obj/$(basename "${s%.cc}").o"
  if [[ ! -f "$o" || "$root/$s" -nt "$o" ]]; then "$cxx" "${flags[@]}" -c "$root/$s" -o "$o"; fi
  objects+=("$o")
done
"$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/fuzz/frame_parser_fuzz.cc" "${objects[@]}" -lsimdjson \
  -o "$out/frame_parser_fuzz"

cd "$out"
echo "fuzz: running frame_parser_fuzz for ${seconds}s"
./frame_parser_fuzz -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -dict="$root/fuzz/frame.dict" "$out/corpus" "$root/fuzz/corpus/frame_parser"
