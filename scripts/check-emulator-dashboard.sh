#!/usr/bin/env bash
# Loads the emulator's dashboard (BASE_URL/) in headless Chromium and checks what it shows: an element for the record
# RECORD_NAME (data-record-name), drawn below PARENT_RECORD_NAME when one is given (a record sits under its parent,
# or the target of its DELETE_SELF reference), no record drawn twice, and the health badge (#health) reading ok. With ADMIN_TOKEN, the page is opened as
# BASE_URL/#admin-token=ADMIN_TOKEN, as a developer opens it for an emulator started with --admin-token. The emulator
# must already be running with the records saved; Chromium is installed with apt-get when it is missing.
# Usage: scripts/check-emulator-dashboard.sh BASE_URL RECORD_NAME [PARENT_RECORD_NAME [ADMIN_TOKEN]]
set -euo pipefail

if [ "$#" -lt 2 ] || [ "$#" -gt 4 ]; then
    echo "usage: $0 BASE_URL RECORD_NAME [PARENT_RECORD_NAME [ADMIN_TOKEN]]" >&2
    exit 64
fi
base_url=${1%/}
record_name=$2
parent_name=${3:-}
admin_token=${4:-}
page_url="$base_url/"
if [ -n "$admin_token" ]; then page_url="$base_url/#admin-token=$admin_token"; fi

if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing chromium"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The serializer escapes & and " in attribute values, and newer Chromium < and > too: accept either form.
escape() { sed -e 's/&/\&amp;/g' -e 's/"/\&quot;/g' <<<"$1"; }
attribute() { echo " data-record-name=\"$(escape "$1")\""; }
attribute_lt_gt() { echo " data-record-name=\"$(escape "$1" | sed -e 's/</\&lt;/g' -e 's/>/\&gt;/g')\""; }
# The byte offset of the first element for a record, or nothing.
offset() { grep -boF -e "$(attribute "$1")" -e "$(attribute_lt_gt "$1")" "$2" | head -n 1 | cut -d: -f1; }

check() {
    local dom=$1 health record_at parent_at
    record_at=$(offset "$record_name" "$dom")
    if [ -z "$record_at" ]; then
        echo "no element with data-record-name=\"$record_name\""
        return 1
    fi
    if [ -n "$parent_name" ]; then
        parent_at=$(offset "$parent_name" "$dom")
        if [ -z "$parent_at" ] || [ "$parent_at" -gt "$record_at" ]; then
            echo "$record_name isn't drawn below $parent_name, the record it belongs to"
            return 1
        fi
    fi
    if grep -q 'data-stub-record-name=' "$dom"; then
        echo "a record is drawn twice: $(grep -oE 'data-stub-record-name="[^"]*"' "$dom" | head -n 3 | tr '\n' ' ')"
        return 1
    fi
    # The text of the #health element, which the page fills in from /emulator/v1/health.
    health=$(grep -oE '<[^>]* id="health"[^>]*>[^<]*' "$dom" | head -n 1 | sed -e 's/^[^>]*>//')
    if ! grep -qE '^ok( |$)' <<<"$health"; then
        echo "#health shows \"$health\", not ok"
        return 1
    fi
}

for attempt in 1 2 3; do
    echo "== attempt $attempt: chromium --dump-dom $base_url/"  # the token, if any, stays out of the log
    # A profile of its own, so that this run does not wait on or disturb another Chromium.
    rm -rf "$work/profile"
    status=0
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
        --virtual-time-budget=8000 --dump-dom "$page_url" >"$work/dom.html" 2>"$work/chromium.log" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "chromium exited with status $status"
    elif problem=$(check "$work/dom.html"); then
        echo "dashboard: shows record $record_name${parent_name:+ below $parent_name}, health ok"
        exit 0
    else
        echo "$problem"
    fi
    if [ "$attempt" -lt 3 ]; then sleep 3; fi
done

echo "== chromium's log, last lines (without its D-Bus complaints)"
grep -v 'dbus/' "$work/chromium.log" | tail -n 20 || true
echo "== the page's #error banner"
grep -oE '<div id="error"[^>]*>([^<]|<div>|</div>)*' "$work/dom.html" \
    | sed -e 's/<\/div>/\n/g' -e 's/<[^>]*>//g' -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' \
    | sed -e '/^$/d' || true
echo "== the dumped DOM without its <style> and <script>, last 4000 characters"
if command -v perl >/dev/null 2>&1; then
    perl -0pe 's{(<(style|script)\b[^>]*>).*?(</\2>)}{$1...$3}gs' "$work/dom.html" | tail -c 4000 || true
else
    tail -c 4000 "$work/dom.html" || true
fi
echo
echo "dashboard check failed: $base_url/ does not show record $record_name with health ok" >&2
exit 1
