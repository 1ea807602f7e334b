/// How closely the emulator follows CloudKit Web Services: each endpoint and rule, done, partial or absent, and how
/// each ambiguity of Apple's documentation was resolved. `GET /emulator/v1/fidelity` serves this list, and a test
/// keeps FIDELITY.md equal to it.
public enum Fidelity {
    /// How much of an endpoint or rule the emulator has.
    public enum Status: String, Sendable, Codable {
        /// As CloudKit documents it.
        case done
        /// In part; the note says what is missing.
        case partial
        /// Not at all; the note says what happens instead.
        case absent
    }

    /// One endpoint or rule.
    public struct Entry: Sendable, Codable, Hashable {
        /// The group it belongs to: Records, Zones, Authentication, …
        public var area: String
        /// The endpoint or rule.
        public var item: String
        /// How much of it the emulator has.
        public var status: Status
        /// What the emulator does, and how an ambiguity of the documentation was resolved.
        public var note: String
    }

    private static func entry(_ area: String, _ item: String, _ status: Status, _ note: String) -> Entry {
        Entry(area: area, item: item, status: status, note: note)
    }

    /// Every endpoint and rule, in FIDELITY.md's order.
    public static let entries: [Entry] = [
        entry(
            "Records", "records/modify", .done,
            "All seven operation types; change tags checked under a per-database lock; `atomic` in custom zones (ignored in the default zone, as CloudKit does); `desiredKeys`; at most 200 operations."
        ),
        entry("Records", "records/lookup", .done, "Per-record `NOT_FOUND`; `desiredKeys` per request and per record."),
        entry(
            "Records", "records/query", .done,
            "Every documented comparator, `NEAR` with `distance` in metres, sort by fields, system fields and distance (`relativeLocation`), `resultsLimit` 1 to 200, `zoneWide`. Evaluated over the type's records: no index, so a query costs the type's size."
        ),
        entry(
            "Records", "continuation markers", .done,
            "A marker holds the query and the last record's sort position, so paging stays correct while records change and across restarts."
        ),
        entry("Records", "records/changes", .done, "Custom zones only; tombstones as `deleted: true`."),
        entry(
            "Records", "records/resolve, records/accept (sharing)", .absent,
            "The shared database holds no zones: sharing isn't emulated."),
        entry(
            "Changes", "changes/zone", .done,
            "Per-zone tokens, `resultsLimit`, `desiredKeys`, `desiredRecordTypes`; private and shared databases only."),
        entry(
            "Changes", "changes/database", .done,
            "Deleted zones carry `deleted`, `purged` or `encryptedDataReset: true`: the reference documents no form, so the emulator uses the one our client reads."
        ),
        entry(
            "Changes", "expired sync token", .done,
            "The reference documents no code: `BAD_REQUEST` with the reason `sync token expired: fetch again without a syncToken`."
        ),
        entry(
            "Zones", "zones/list, zones/lookup, zones/modify", .done,
            "Custom zones in the private database; the public database has only the default zone."),
        entry(
            "Zones", "zones/changes", .done,
            "`metaSyncToken` is the database's token; the answer carries it under both names."),
        entry(
            "Assets", "assets/upload and uploads", .done,
            "Upload URLs expire after 15 minutes of the emulator's clock; 50 MB per asset (the property metrics page; another page says 15 MB); the receipt is the field value."
        ),
        entry(
            "Assets", "downloads", .done,
            "`downloadURL` with CloudKit's `${f}` placeholder; it names the record's field, so it lives as long as the asset."
        ),
        entry(
            "Assets", "assets/rereference", .absent,
            "An asset is copied by sending it back with its checksum within the same record only."),
        entry(
            "Users", "users/caller, users/current", .done,
            "The reference shows one user dictionary, clients read a `users` list: the answer holds both."),
        entry("Users", "users/discover, users/lookup/*", .absent, "Test users aren't discoverable."),
        entry(
            "Subscriptions", "subscriptions/list, lookup, modify", .done,
            "`zone`, `query` (`firesOn`, `firesOnce`, filters) and `database` subscriptions; `database` is our client's spelling, undocumented."
        ),
        entry(
            "Notifications", "tokens/create, tokens/register, long poll", .done,
            "`webcourierURL` on the emulator; each poll answers one payload (`aps`, `ck` with `fet`, `qry` or `met`) or, after the poll timeout, an empty body; `ck.ckuserid` names the user. The courier URL needs no credential (it is one), and a URL the emulator no longer knows (after a reset or restart) answers 404. Paths under `/device/1/` and `/database/1/` both work."
        ),
        entry(
            "Authentication", "server-to-server keys", .done,
            "ECDSA P-256 over `DATE:BODYHASH:SUBPATH`; the documented path is tried first, then path and query as CloudKit JS signs; dates within 10 minutes (Apple states no window); public database only."
        ),
        entry(
            "Authentication", "API token and web auth token", .done,
            "Every answer carries the next token in `X-Apple-CloudKit-Web-Auth-Token`, exposed through CORS; a used token stops working; tokens expire after 30 minutes and don't survive a restart."
        ),
        entry(
            "Authentication", "sign-in", .done,
            "A missing user gets 421 `AUTHENTICATION_REQUIRED` with a `redirectURL` to the emulator's sign-in page, which posts `ckWebAuthToken` (and `ckSession`) to its opener or redirects with it."
        ),
        entry(
            "Rules", "limits", .done,
            "200 operations and results a request, 1 MB per record, 750 `DELETE_SELF` references to a record, 50 MB per asset."
        ),
        entry("Rules", "references", .done, "`VALIDATE` targets must exist (412); `DELETE_SELF` cascades."),
        entry(
            "Rules", "schema", .partial,
            "Development creates types and fields on first save and refuses a field's type changing; production keeps to the imported schema with CloudKit's reasons. Development answers every query as if indexed. Security roles (`GRANT`) are read, not enforced."
        ),
        entry(
            "Rules", "record attribution", .partial,
            "`created.userRecordName` and `modified.userRecordName` name the database's owner, not each writer of the public database."
        ),
        entry(
            "Emulator", "storage", .done,
            "A SQLite file per database under `--data`, or memory; an acknowledged write survives `kill -9`."),
        entry(
            "Emulator", "admin API, faults, clock, request log, dashboard", .done,
            "Under `/emulator/v1/`; the dashboard at `/`."),
    ]
}
