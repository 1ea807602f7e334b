#!/usr/bin/env bash
# Builds the decoder's libFuzzer target (Tests/Fuzz) with the address sanitizer, replays the committed seed corpus
# (each input's leaks checked), then fuzzes on from it.
#
#   scripts/fuzz.sh --ci
#       What CI runs: the replay, then FUZZ_RUNS (default 500) new inputs from the fixed seed FUZZ_SEED (default
#       1). The target is deterministic, so a commit gives the same inputs and the same result on every run: the
#       replay is the regression check, and the new inputs a first look past it that fits CI's 40 minutes;
#       exploring, below, is where new inputs are found.
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
#       Exploring: fuzz until SECONDS (default 60, the replay's minute or so included) from a random seed; libFuzzer
#       prints it as "Seed:", and -seed=N runs the same inputs again.
#
# A crash, a timeout or a leak fails, with the input saved in the build folder's artifacts/; give that file to
# the fuzzer binary to run it again. FUZZ_BUILD_DIR sets the build folder (default .build/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=explore
if [[ ${1:-} == --ci ]]; then
    mode=ci
    shift
else
    seconds=${1:-60}
    shift || true
fi

build=${FUZZ_BUILD_DIR:-.build/fuzz}
mkdir -p "$build/artifacts"
build=$(cd "$build" && pwd)
fuzzer="$build/decoder-fuzzer"
# The core and the simulated server the target decodes against, compiled as one module (their imports of the core
# become imports of themselves, which swiftc ignores).
mapfile -t sources < <(find Sources/NestedCloudKitCodable Sources/NestedCloudKitRules Sources/NestedCloudKitServer Tests/Fuzz -name '*.swift' | sort)
# Rebuilt only when a source or this script changed: a build takes a few minutes.
if [[ ! -x $fuzzer || -n $(find "${sources[@]}" "$0" -newer "$fuzzer" -print -quit) ]]; then
    echo "== building the fuzz target (sanitizers: fuzzer, address)"
    start=$SECONDS
    # From the build folder, where whole-module optimization on two threads leaves its partial module files.
    root=$PWD
    (cd "$build" && swiftc -swift-version 6 -parse-as-library -module-name NestedCloudKitCodable \
        -package-name NestedCloudKitCodable -sanitize=fuzzer,address -O -g -wmo -num-threads 2 \
        "${sources[@]/#/$root/}" -o "$fuzzer" 2>&1) |
        sed '/Cannot export local symbol/d' # gold's noise about the sanitizer's own symbols
    echo "built in $((SECONDS - start)) s"
fi

# Swift's own crash backtracer would take the trap before libFuzzer could print the stack and save the input.
export SWIFT_BACKTRACE=enable=no
# The same Dictionary and Set order in every process, so that an input takes the same path on every run.
export SWIFT_DETERMINISTIC_HASHING=1
common=(-timeout=10 -rss_limit_mb=4096 -max_len=4096 -detect_leaks=1 -artifact_prefix="$build/artifacts/"
        -print_final_stats=1)

if [[ $mode == ci ]]; then
    seed=${FUZZ_SEED:-1}
    runs=${FUZZ_RUNS:-500}
    corpus_size=$(find Tests/Fuzz/corpus -type f | wc -l)
    # New inputs go to a folder emptied first, so that what earlier runs found doesn't change this run's inputs.
    rm -rf "$build/corpus-ci"
    mkdir -p "$build/corpus-ci"
    echo "== the decoder's fuzzer: $corpus_size corpus inputs, then about $runs new ones from seed $seed"
    echo "   (again: FUZZ_SEED=$seed FUZZ_RUNS=$runs scripts/fuzz.sh --ci)"
    start=$SECONDS
    # -runs counts every execution, the replay's included: libFuzzer runs an empty input and each corpus file
    # first, and runs again, with leak checks, each input that ends with more mallocs than frees.
    "$fuzzer" "$build/corpus-ci" Tests/Fuzz/corpus -seed="$seed" -runs=$((corpus_size + 1 + runs)) "${common[@]}"
    echo "fuzzed in $((SECONDS - start)) s"
else
    mkdir -p "$build/corpus"
    echo "== fuzzing for $seconds s"
    # New inputs go to the build folder; the committed corpus is only read.
    "$fuzzer" "$build/corpus" Tests/Fuzz/corpus -max_total_time="$seconds" "${common[@]}" "$@"
fi
