#!/usr/bin/env bash
# Type-checks the Apple bridge (Sources/NestedCloudKitCodable/Apple, under `#if canImport(CloudKit)`) on Linux,
# against stand-ins for CloudKit and Core Location that declare the documented signatures it uses
# (Tests/AppleStubs), then runs its conversions against the stand-ins' simple behaviour.
# A typo or a wrong call in the bridge fails here.
set -euo pipefail
cd "$(dirname "$0")/.."

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== stand-in modules"
swiftc -parse-as-library -swift-version 6 -module-name CoreLocation -emit-module -emit-module-path "$build/CoreLocation.swiftmodule" \
    -c Tests/AppleStubs/CoreLocation.swift -o "$build/CoreLocation.o"
swiftc -parse-as-library -swift-version 6 -module-name CloudKit -I "$build" -emit-module -emit-module-path "$build/CloudKit.swiftmodule" \
    -c Tests/AppleStubs/CloudKit.swift -o "$build/CloudKit.o"

mapfile -t sources < <(find Sources/NestedCloudKitCodable -name '*.swift' | sort)

echo "== type-check the library with the bridge, in Swift 6 mode, warnings as errors"
swiftc -typecheck -swift-version 6 -warnings-as-errors -module-name NestedCloudKitCodable -package-name NestedCloudKitCodable -I "$build" "${sources[@]}"

echo "== run the bridge's conversions against the stand-ins"
swiftc -swift-version 6 -module-name NestedCloudKitCodable -package-name NestedCloudKitCodable -I "$build" "${sources[@]}" Tests/AppleBridgeCheck/main.swift \
    "$build/CoreLocation.o" "$build/CloudKit.o" -o "$build/apple-bridge-check"
mkdir "$build/tmp"
TMPDIR="$build/tmp" "$build/apple-bridge-check"
