#!/usr/bin/env bash
# Builds the DocC documentation of each library product with warnings as errors, so that a dead symbol link, a
# page no topic reaches, or a malformed directive fails CI instead of shipping. The archives land in
# .build/docs/TARGET.doccarchive; `swift package --disable-sandbox preview-documentation --target TARGET` serves one.
set -euo pipefail
cd "$(dirname "$0")/.."

output=.build/docs
mkdir -p "$output"
targets=()
for target in NestedCloudKitCodable NestedCloudKitServer NestedCloudKitMacros NestedCloudKitSQLite NestedCloudKitWebServices \
    NestedCloudKitSync NestedCloudKitEmulator; do
    targets+=(--target "$target")
done
# One invocation for every target: the package is loaded and planned once, not once per target, which halves the
# step (about 2 minutes instead of 4 here). --disable-indexing: the LMDB index only serves Xcode.
swift package --allow-writing-to-directory "$output" \
    generate-documentation "${targets[@]}" --output-path "$output" \
    --disable-indexing --warnings-as-errors
