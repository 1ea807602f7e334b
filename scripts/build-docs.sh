#!/usr/bin/env bash
# Builds the DocC documentation of each library product with warnings as errors, so that a dead symbol link, a
# page no topic reaches, or a malformed directive fails CI instead of shipping. The archives land in
# .build/docs/TARGET.doccarchive; `swift package --disable-sandbox preview-documentation --target TARGET` serves one.
set -euo pipefail
cd "$(dirname "$0")/.."

output=.build/docs
mkdir -p "$output"
for target in NestedCloudKitCodable NestedCloudKitMacros NestedCloudKitSQLite NestedCloudKitWebServices NestedCloudKitSync \
    NestedCloudKitEmulator; do
    echo "== documentation: $target"
    # --disable-indexing: the LMDB index only serves Xcode, and skipping it keeps the build quick.
    swift package --allow-writing-to-directory "$output" \
        generate-documentation --target "$target" --output-path "$output/$target.doccarchive" \
        --disable-indexing --warnings-as-errors
done
