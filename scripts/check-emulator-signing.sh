#!/usr/bin/env bash
# Black-box check that the CloudKit Web Services emulator verifies server-to-server signatures exactly as
# Apple documents them ("Authenticating Web Service Requests": sign "DATE:BASE64(SHA256(BODY)):SUBPATH" with an
# ECDSA P-256 key). The requests are signed with openssl alone and share no code with the project, so a mistake
# made the same way on both sides (signing helper and verifier) cannot hide here.
#
# Usage: scripts/check-emulator-signing.sh PATH_TO_cloudkit-emulator_BINARY
# Needs: bash >= 4.4, openssl, curl, python3 (JSON checks only), GNU or BSD coreutils.
set -euo pipefail
shopt -s inherit_errexit # a broken openssl step inside $(...) must abort, not send an unsigned request

bin=${1:?usage: $0 PATH_TO_cloudkit-emulator_BINARY}
key_id=check-key-1
db=/database/1/iCloud.com.example.check/development/public/records
# Overrides the tampering checks set per call; clear any that leak in from the caller's environment.
unset SIG_KEY SIG_KEYID SIG_DATE SEND_DATE SIGN_BODY SIGN_PATH

work=$(mktemp -d)
pid=
fails=0
cleanup() {
    local status=$?
    if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    if ((status != 0 || fails != 0)) && [[ -s $work/stderr ]]; then
        echo "--- emulator stderr ---"; cat "$work/stderr"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # make sure the EXIT trap (and so the emulator's shutdown) runs on ^C too

ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

# ISO 8601 UTC without fractional seconds, as Apple requires, for a Unix time (GNU date, else BSD date).
iso_date() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$1" +%Y-%m-%dT%H:%M:%SZ; }

# Apple's steps, literally: message = DATE:BODYHASH:SUBPATH (no trailing newline), signature = base64 of the
# DER-encoded ECDSA-SHA256 signature, on one line. Usage: sign KEYFILE DATE BODYFILE SUBPATH
sign() {
    local body_hash
    body_hash=$(openssl dgst -sha256 -binary "$3" | openssl base64 -A)
    printf '%s:%s:%s' "$2" "$body_hash" "$4" >"$work/message"
    openssl dgst -sha256 -sign "$1" -out "$work/signature.der" "$work/message"
    openssl base64 -A -in "$work/signature.der"
}

# POST BODYFILE to SUBPATH, correctly signed unless a tampering check overrides part of it: SIG_KEY / SIG_KEYID
# (signing key, announced key ID), SIG_DATE (date signed), SEND_DATE (date header sent), SIGN_BODY / SIGN_PATH
# (what was signed, instead of what is sent). Prints the HTTP status; the response body lands in $work/response.
send() {
    local body=$1 path=$2 date signature
    date=${SIG_DATE:-$(iso_date "$(date -u +%s)")}
    signature=$(sign "${SIG_KEY:-$work/key.pem}" "$date" "${SIGN_BODY:-$body}" "${SIGN_PATH:-$path}")
    curl -sS -o "$work/response" -w '%{http_code}' -X POST "http://127.0.0.1:$port$path" \
        -H 'Content-Type: application/json' \
        -H "X-Apple-CloudKit-Request-KeyID: ${SIG_KEYID:-$key_id}" \
        -H "X-Apple-CloudKit-Request-ISO8601Date: ${SEND_DATE:-$date}" \
        -H "X-Apple-CloudKit-Request-SignatureV1: $signature" \
        --data-binary "@$body" || true # curl prints 000 when it cannot connect; that is reported as a failure
}

# True if the Python expression over the parsed response `r` holds (a missing key or bad JSON is false).
response_has() {
    python3 - "$work/response" "$1" 2>/dev/null <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2], {}, {"r": r}) else 1)
EOF
}

# Usage: expect STATUS DESCRIPTION BODYFILE SUBPATH PYTHON_EXPRESSION
expect() {
    local status
    status=$(send "$3" "$4")
    if [[ $status == "$1" ]] && response_has "$5"; then ok "$2"; else
        fail "$2 (HTTP $status, wanted $1): $(head -c 500 "$work/response" 2>/dev/null)"
    fi
}
expect_rejected() { expect 401 "$1 -> 401" "$2" "$3" 'r["serverErrorCode"] == "AUTHENTICATION_FAILED"'; }

# --- keys and bodies -------------------------------------------------------------------------------------------
openssl ecparam -name prime256v1 -genkey -noout -out "$work/key.pem"
openssl ec -in "$work/key.pem" -pubout -out "$work/public.pem" 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out "$work/other-key.pem" # never registered
printf '%s' '{"operations":[{"operationType":"create","record":{"recordName":"check-1","recordType":"Note","fields":{"title":{"value":"signed by openssl","type":"STRING"}}}}]}' >"$work/create.json"
printf '%s' '{"records":[{"recordName":"check-1"}]}' >"$work/lookup.json"
printf '%s' '{"records":[{"recordName":"check-2"}]}' >"$work/lookup-other.json"
printf '%s' '{"query":{"recordType":"Note"}}' >"$work/query.json"

# Sanity-check our own pipeline first, so a rejection below can only be the emulator's fault.
sign "$work/key.pem" "$(iso_date "$(date -u +%s)")" "$work/create.json" "$db/modify" >/dev/null
if openssl dgst -sha256 -verify "$work/public.pem" -signature "$work/signature.der" "$work/message" >/dev/null; then
    ok "openssl verifies our own signature"
else
    fail "openssl cannot verify our own signature"; exit 1
fi

# --- start the emulator on a free port; it prints its URL once ready -------------------------------------------
"$bin" --port 0 --in-memory --server-key "$key_id=$work/public.pem" --environment development \
    >"$work/stdout" 2>"$work/stderr" &
pid=$!
port=
for _ in $(seq 120); do # 120 x 0.5 s = 60 s
    port=$(sed -n 's|^CloudKit emulator listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$work/stdout")
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || { fail "emulator exited before it was ready"; exit 1; }
    sleep 0.5
done
[[ -n $port ]] || { fail "emulator not ready within 60 s"; exit 1; }
ok "emulator listening on port $port"

# --- correctly signed requests are accepted ----------------------------------------------------------------------
expect 200 "signed records/modify creates check-1" "$work/create.json" "$db/modify" \
    'r["records"][0]["recordName"] == "check-1" and bool(r["records"][0]["recordChangeTag"])'
expect 200 "signed records/lookup returns its title" "$work/lookup.json" "$db/lookup" \
    'r["records"][0]["fields"]["title"]["value"] == "signed by openssl"'
expect 200 "signed records/query finds check-1" "$work/query.json" "$db/query" \
    'any(x.get("recordName") == "check-1" for x in r["records"])'

# --- every part of the signed message matters; each request is otherwise valid for where it is sent --------------
SIGN_BODY=$work/lookup-other.json expect_rejected "body changed after signing" "$work/lookup.json" "$db/lookup"
now=$(date -u +%s)
SIG_DATE=$(iso_date "$now") SEND_DATE=$(iso_date $((now + 1))) \
    expect_rejected "date header changed after signing (+1 s)" "$work/query.json" "$db/query"
SIGN_PATH=$db/lookup expect_rejected "path changed after signing (lookup -> query)" "$work/query.json" "$db/query"
SIG_KEY=$work/other-key.pem expect_rejected "signed with another key under the registered key ID" \
    "$work/query.json" "$db/query"
SIG_KEYID=unknown-key-id expect_rejected "unknown key ID" "$work/query.json" "$db/query"
# Correctly signed, but stale: Apple rejects dates outside a short window to stop replays.
SIG_DATE=$(iso_date $((now - 30 * 60))) expect_rejected "date 30 minutes old, correctly signed" \
    "$work/query.json" "$db/query"

if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all signing checks passed"
