#!/usr/bin/env bash
# Builds the decoder's libFuzzer target (Tests/Fuzz) with the address sanitizer and runs it for SECONDS
# (default 60) on the committed seed corpus, plus whatever it finds. A crash fails with the reproducer saved.
# Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true

build=${FUZZ_BUILD_DIR:-.build/fuzz}
mkdir -p "$build" "$build/corpus" "$build/artifacts"
mapfile -t sources < <(find Sources/NestedCloudKitCodable -name '*.swift' | sort)
echo "== building the fuzz target (sanitizers: fuzzer, address)"
swiftc -swift-version 6 -parse-as-library -module-name NestedCloudKitCodable -package-name NestedCloudKitCodable -sanitize=fuzzer,address -O -g \
    "${sources[@]}" Tests/Fuzz/FuzzTarget.swift -o "$build/decoder-fuzzer" 2>&1 |
    sed '/Cannot export local symbol/d' # gold's noise about the sanitizer's own symbols

echo "== fuzzing for $seconds s"
# Swift's own crash backtracer would take the trap before libFuzzer could print the stack and save the input.
export SWIFT_BACKTRACE=enable=no
# New inputs go to the build folder; the committed corpus is only read.
"$build/decoder-fuzzer" "$build/corpus" Tests/Fuzz/corpus -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=4096 -artifact_prefix="$build/artifacts/" -print_final_stats=1 "$@"
