#!/usr/bin/env bash
# Lints the Swift sources against .swift-format (the toolchain's swift-format); any finding fails.
# To fix what it reports: swift-format format --in-place --recursive --parallel Sources Tests Tools Example Benchmarks SyncExample
set -euo pipefail
cd "$(dirname "$0")/.."
swift-format lint --strict --recursive --parallel Sources Tests Tools Example Benchmarks SyncExample
echo "swift-format: no findings"
