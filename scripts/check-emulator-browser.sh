#!/usr/bin/env bash
# The emulator's dashboard in a real browser: start the emulator with an admin token, sign in a test user through
# the admin API, save a folder and two notes that belong to it (one by its parent, one by a DELETE_SELF reference)
# through CloudKit's records/modify with the user's web auth token, and check that headless Chromium, opening the
# dashboard with the token in its URL's fragment, renders each note under the folder, and the folder once
# (scripts/check-emulator-dashboard.sh). Also checks, with curl, that the admin API refuses a
# call without the token and one from another web origin.
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

admin_token=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
CLOUDKIT_EMULATOR_ADMIN_TOKEN=$admin_token "$bin" --port 0 --in-memory >"$work/out" 2>"$work/err" &
emulator_pid=$!
for _ in $(seq 120); do
    grep -q "^CloudKit emulator listening on " "$work/out" && break
    sleep 0.5
done
base=$(sed -n 's/^CloudKit emulator listening on //p' "$work/out")
[[ -n "$base" ]] || { echo "FAIL: the emulator didn't start"; cat "$work/err"; exit 1; }

status=$(curl -s -o /dev/null -w '%{http_code}' "$base/emulator/v1/health")
[[ "$status" == 401 ]] || { echo "FAIL: the admin API answered $status without the admin token, not 401"; exit 1; }
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $admin_token" \
    -H 'Origin: https://evil.example' -X POST "$base/emulator/v1/reset")
[[ "$status" == 403 ]] || { echo "FAIL: the admin API answered $status to another origin, not 403"; exit 1; }
echo "ok: the admin API refuses a call without the token (401) and one from another origin (403)"

token=$(curl -fsS -X POST -H "Authorization: Bearer $admin_token" "$base/emulator/v1/sign-in" -d '{"user":"alice"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ckWebAuthToken"])')
container=iCloud.com.example.dashboard
curl -fsS -X POST "$base/database/1/$container/development/private/records/modify?ckAPIToken=dev&ckWebAuthToken=$token" \
    -H 'Content-Type: application/json' \
    -d '{"operations":[
        {"operationType":"create","record":{"recordName":"dashboard-note","recordType":"Note","parent":{"recordName":"dashboard-folder"},"fields":{"title":{"value":"seen in a browser","type":"STRING"}}}},
        {"operationType":"create","record":{"recordName":"dashboard-todo","recordType":"Note","fields":{"folder":{"value":{"recordName":"dashboard-folder","action":"DELETE_SELF"},"type":"REFERENCE"}}}},
        {"operationType":"create","record":{"recordName":"dashboard-folder","recordType":"Folder","fields":{"name":{"value":"Inbox","type":"STRING"}}}}
    ]}' \
    >/dev/null
echo "ok: saved dashboard-folder, with dashboard-note (its parent) and dashboard-todo (a DELETE_SELF reference) under it, as alice"
bash "$(dirname "$0")/check-emulator-dashboard.sh" "$base" dashboard-note dashboard-folder "$admin_token"
bash "$(dirname "$0")/check-emulator-dashboard.sh" "$base" dashboard-todo dashboard-folder "$admin_token"
