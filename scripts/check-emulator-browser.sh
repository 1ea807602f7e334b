#!/usr/bin/env bash
# The emulator's dashboard in a real browser: start the emulator, sign in a test user through the admin API, save a
# record through CloudKit's records/modify with the user's web auth token, and check that headless Chromium renders
# the dashboard with that record (scripts/check-emulator-dashboard.sh).
# Usage: scripts/check-emulator-browser.sh PATH_TO_cloudkit-emulator
set -euo pipefail
bin=${1:?usage: $0 PATH_TO_cloudkit-emulator}
work=$(mktemp -d)
emulator_pid=
cleanup() {
    if [[ -n "$emulator_pid" ]]; then kill -TERM "$emulator_pid" 2>/dev/null || true; wait "$emulator_pid" || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin" --port 0 --in-memory >"$work/out" 2>"$work/err" &
emulator_pid=$!
for _ in $(seq 120); do
    grep -q "^CloudKit emulator listening on " "$work/out" && break
    sleep 0.5
done
base=$(sed -n 's/^CloudKit emulator listening on //p' "$work/out")
[[ -n "$base" ]] || { echo "FAIL: the emulator didn't start"; cat "$work/err"; exit 1; }

token=$(curl -fsS -X POST "$base/emulator/v1/sign-in" -d '{"user":"alice"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ckWebAuthToken"])')
container=iCloud.com.example.dashboard
curl -fsS -X POST "$base/database/1/$container/development/private/records/modify?ckAPIToken=dev&ckWebAuthToken=$token" \
    -H 'Content-Type: application/json' \
    -d '{"operations":[{"operationType":"create","record":{"recordName":"dashboard-note","recordType":"Note","fields":{"title":{"value":"seen in a browser","type":"STRING"}}}}]}' \
    >/dev/null
echo "ok: saved dashboard-note as alice"
bash "$(dirname "$0")/check-emulator-dashboard.sh" "$base" dashboard-note
