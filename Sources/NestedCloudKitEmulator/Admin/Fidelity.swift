/// How closely the emulator follows CloudKit Web Services: each endpoint and rule, done, partial or absent, and how
/// each ambiguity of Apple's documentation was resolved. `GET /emulator/v1/fidelity` serves this list, and a test
/// keeps FIDELITY.md equal to it.
package enum Fidelity {
    /// How much of an endpoint or rule the emulator has.
    package enum Status: String, Sendable, Codable {
        /// As CloudKit documents it.
        case done
        /// In part; the note says what is missing.
        case partial
        /// Not at all; the note says what happens instead.
        case absent
    }

    /// One endpoint or rule.
    package struct Entry: Sendable, Codable, Hashable {
        /// The group it belongs to: Records, Zones, Authentication, …
        package var area: String
        /// The endpoint or rule.
        package var item: String
        /// How much of it the emulator has.
        package var status: Status
        /// What the emulator does, and how an ambiguity of the documentation was resolved.
        package var note: String
    }

    private static func entry(_ area: String, _ item: String, _ status: Status, _ note: String) -> Entry {
        Entry(area: area, item: item, status: status, note: note)
    }

    /// Every endpoint and rule, in FIDELITY.md's order.
    package static let entries: [Entry] = [
        entry(
            "Records", "records/modify", .done,
            "All seven operation types; change tags checked under a per-database lock; `atomic` in custom zones (ignored in the default zone, as CloudKit does); `desiredKeys`; at most 200 operations. A `create` without a `recordName` gets a random UUID, which the answer's record carries (\"If you don't provide a record name, CloudKit assigns one for you\"); any other operation needs one."
        ),
        entry("Records", "records/lookup", .done, "Per-record `NOT_FOUND`; `desiredKeys` per request and per record."),
        entry(
            "Records", "records/query", .done,
            "Every documented comparator, `NEAR` with `distance` in metres, sort by fields, system fields and distance (`relativeLocation`), `resultsLimit` 1 to 200, `zoneWide`. Without `resultsLimit`, 200 records a page: the reference's default, the most a response holds (a 2015 radar saw CloudKit answer 100; a client follows `continuationMarker` either way). The filters become a `CloudQuery.Predicate`, which the database evaluates with the package's one evaluator, as the in-memory, SQLite and local store databases do (SQLite narrows the candidates with its indexes first); the matches are sorted by the backends' one order (`CloudQueryOrder`), merged across zones for `zoneWide`. A negated comparator matches a record without the field; an integer equals a double of the same value."
        ),
        entry(
            "Records", "continuation markers", .done,
            "A marker holds the query and the last record's sort position, so paging stays correct while records change and across restarts."
        ),
        entry("Records", "records/changes", .done, "Custom zones only; tombstones as `deleted: true`."),
        entry(
            "Records", "shares and parents in records/modify", .done,
            "A record's `parent` (`{recordName}`, in its zone) and a shared root's `share` are kept and answered. A `cloudkit.share` record saves with `publicPermission` and `participants` under the rules engine's share rules: the saving user becomes the `owner`, the share gets a `shortGUID` on its first save and keeps it, a participant's acceptance is the server's, public participants go with a `NONE` permission. A record share names its root by the root's `share` in the same request, as a share record on the wire doesn't name what it shares; deleting a share takes `share` off its root, deleting a root deletes its share. A share's answer adds `url`, where the emulator serves it (`/share/SHORT_GUID`): CloudKit's answers have none, and clients make an iCloud URL from `shortGUID`, which would lead away from the emulator."
        ),
        entry(
            "Records", "records/resolve, records/accept (sharing)", .partial,
            "Under any database's path (the reference's is `public`), for a signed-in user: `shortGUIDs` as `[{value, shouldFetchRootRecord, rootRecordDesiredKeys}]` (a plain string is read as `{value}`). Each result has `shortGUID`, `containerIdentifier`, `environment`, `databaseScope: SHARED`, `zoneID`, `rootRecordName`, `share`, `rootRecord` when asked, `ownerIdentity` and the user's `participantType`, `participantStatus` and `participantPermission`: the reference names the result dictionary without listing its keys, so the emulator uses CKToolJS's `CKDBResolvedRecord`'s. A short GUID no share has, the owner's own share and a private share the user isn't invited to fail alone, as an error dictionary beside the `shortGUID`. With a data directory too: each user's databases are files of the container's folder, and shares survive a restart."
        ),
        entry(
            "Sharing", "the shared database", .partial,
            "Each user's `shared` database shows the zones others share with them, named by the owner's user record name, holding what the shares they accepted cover (a zone-wide share its zone, a record share its root and the records whose `parent` leads to it). Writes go to the owner's database under the user's permission (read-only is `ACCESS_DENIED`; only the owner changes a share); deleting a share or a zone from the shared database leaves it. Changes report a record the user no longer sees as deleted, and a zone they no longer see any record of as a deleted zone. A change one user makes to another's databases (an owner's edit a participant sees, a participant's write, an acceptance) fires the other's database subscriptions too. With either storage: under a data directory a user's shared database is a file kept up to date from the owners' files, and caught up after a restart before the first request reads or writes a shared database."
        ),
        entry(
            "Sharing", "share URLs and the admin list of shares", .done,
            "`GET /share/SHORT_GUID` opens a page with the share's title and owner and how an app accepts it (no record, no cross-origin access; the short GUID, 122 random bits, is the URL's credential and stays out of the request log), and a 404 for a URL no share has. `GET /emulator/v1/shares?container=NAME&user=NAME` lists the shares a user owns and takes part in, with their URLs and participants."
        ),
        entry(
            "Changes", "changes/zone", .done,
            "Per-zone tokens, `resultsLimit`, `desiredKeys`, `desiredRecordTypes`; private and shared databases only."),
        entry(
            "Changes", "changes/database", .done,
            "Deleted zones carry `deleted`, `purged` or `encryptedDataReset: true`: the reference documents no form, so the emulator uses the one our client reads. A zone deleted and created again since a token is listed as deleted, then changed, and a purge stays listed after a later deletion: a client that missed them still learns of them."
        ),
        entry(
            "Changes", "expired sync token", .done,
            "The reference documents no code: `BAD_REQUEST` with the reason `sync token expired: fetch again without a syncToken`."
        ),
        entry(
            "Zones", "zones/list, zones/lookup, zones/modify", .done,
            "Custom zones in the private database; the public database has only the default zone. `zones/list` gives each zone `atomic` and each custom zone its `syncToken` (its latest change, from which `changes/zone` continues); the default zone keeps no change history, so it has no token."
        ),
        entry(
            "Zones", "zones/changes", .done,
            "`metaSyncToken` is the database's token; the answer carries it under both names."),
        entry(
            "Assets", "assets/upload and uploads", .done,
            "Upload URLs expire after 15 minutes of the emulator's clock; 50 MB per asset (the property metrics page; another page says 15 MB); the receipt is the field value."
        ),
        entry(
            "Assets", "downloads", .done,
            "`downloadURL` with CloudKit's `${f}` placeholder. Its token names the database (so the user), record and field, signed (HMAC-SHA256) with a key made at start and kept in memory: it can't be forged or changed, and a restart ends it. It works at least an hour of the emulator's clock, until the end of the next whole hour, so an asset keeps one URL within an hour (CloudKit documents no lifetime). Any other token answers 404, and a download opens no database that doesn't exist."
        ),
        entry(
            "Assets", "assets/rereference", .absent,
            "An asset is copied by sending it back with its checksum within the same record only."),
        entry(
            "Users", "users/caller, users/current", .done,
            "The reference shows one user dictionary, clients read a `users` list: the answer holds both."),
        entry(
            "Users", "users/discover, users/lookup/email, users/lookup/id", .done,
            "A test user signed in as discoverable (a name, an email address, a phone number: `discoverable` in the admin API's sign-in, \"Others can look me up\" on the sign-in page, `signIn(user:discoverableAs:)`) is found by email, phone or user record name; a user who isn't discoverable isn't found, and their lookup has no entry in `users`. Each answer is a UserIdentity (`userRecordName`, `nameComponents`, `lookupInfo`) and the reference's user dictionary (`firstName`, `lastName`, `emailAddress` for a lookup by it) at once. As live CloudKit answers (MistKit #28): the public database only (another is `BAD_REQUEST` \"endpoint not applicable in the database type 'privatedb'\"), a signed-in user only (a server-to-server key is `AUTHENTICATION_FAILED`), and an empty `lookupInfos` is `BAD_REQUEST`. No address book: `users/lookup/contacts` is absent."
        ),
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
            "ECDSA P-256 over `DATE:BODYHASH:SUBPATH`; the documented path is tried first, then path and query as CloudKit JS signs; dates within 10 minutes (Apple states no window); public database only. For a request without a body (a GET such as `zones/list`), BODYHASH is the SHA-256 of the empty body or an empty field (`DATE::SUBPATH`): the reference doesn't say, clients differ (MistKit signs an empty field, requests-cloudkit hashes the empty body), and both are taken."
        ),
        entry(
            "Authentication", "API token and web auth token", .done,
            "Every answer carries the next token in `X-Apple-CloudKit-Web-Auth-Token`, exposed through CORS. Production wins: a used token keeps working alongside the new one, as live CloudKit accepts a token reused eight times, shared by six concurrent requests and 25 hours old (MistKit #462), where the reference says \"the previous token is no longer valid\"; `--single-use-web-auth-tokens` (`EmulatorConfiguration.webAuthTokens = .singleUse`) keeps to the reference, for a client's authors. A session keeps its 16 tokens used or issued last; a token unused for 30 minutes expires; none survives a restart."
        ),
        entry(
            "Authentication", "sign-in", .done,
            "A missing user gets 421 `AUTHENTICATION_REQUIRED` with a `redirectURL` to the emulator's sign-in page, which posts `ckWebAuthToken` (and `ckSession`) to its opener's origin, or redirects to `returnURL` with it. Only to an allowed origin, as an API token's allowed origins: loopback (http or https on localhost, 127.0.0.1 or [::1], any port) or one given with `--allowed-origin`. The opener's origin comes from `returnURL`, an `origin` parameter or the popup's `Referer`; a `returnURL` elsewhere answers 400."
        ),
        entry(
            "Rules", "limits", .done,
            "200 operations and results a request. 1 MB of field data a record (field names and values as stored after the save, assets not counted): the reference documents no error, so the record fails with `BAD_REQUEST` `record too large: ...`. 750 `DELETE_SELF` references to a record, counted in request order: the records past the limit fail with `VALIDATING_REFERENCE_ERROR`. 50 MB per asset. A request body over 60 MB answers 413 with `BAD_REQUEST` `request too large: ...` (the reference's 413 is `QUOTA_EXCEEDED`, the storage quota); our client reads both as `limitExceeded`."
        ),
        entry("Rules", "references", .done, "`VALIDATE` targets must exist (412); `DELETE_SELF` cascades."),
        entry(
            "Rules", "schema", .partial,
            "The schema is CloudKit's schema language, read and exported as `cktool` does (`CloudSchema`); `--schema FILE` starts every container on one, in production. Development creates types and fields on first save and refuses a field's type changing; production keeps to the schema with CloudKit's reasons (a new type or field, a value of another type), and refuses a query on a field without the index it needs (QUERYABLE for equality, SORTABLE or QUERYABLE for an order, SORTABLE for a sort, SEARCHABLE for tokens; `___recordID` QUERYABLE for a query without a filter) with \"Field '...' is not marked ...\". Development answers every query as if indexed. Security roles (`GRANT`) are read and kept, not enforced; `cloudkit.share` records are outside the schema, as CloudKit's own."
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
            "Under `/emulator/v1/`, for the emulator's own pages and for programs: a request whose `Origin` or `Sec-Fetch-Site` says another web origin answers 403, and with `--admin-token` every call needs `Authorization: Bearer TOKEN` (401 without). The request log leaves the admin API's reads out unless `--log-admin-reads`. The dashboard at `/` reads records 100 at a time (`records?limit=&continuation=`), again only when the database's revision moved, and takes the admin token from `/#admin-token=TOKEN`."
        ),
        entry(
            "Emulator", "Host header and CORS", .done,
            "A request must name the emulator in `Host` (127.0.0.1, localhost or [::1], or the address it was bound to, with its port), else 403 `ACCESS_DENIED`: a DNS-rebinding guard. The URLs it hands out are built from the checked `Host`. CORS (`*`) on CloudKit's paths and on the upload, download and notification URLs, which CloudKit JS calls from the app's page; not on the admin API, the dashboard or the sign-in page, which also refuse to be framed."
        ),
        entry(
            "Emulator", "names and errors", .done,
            "A container identifier is 1 to 200 ASCII letters, digits, `.`, `-` and `_`; a test user's name 1 to 64 of those, `@` and `+`; both start with a letter or digit, and others answer 400 before anything is made. No error names a file path. Each endpoint of a database answers GET and POST (Apple documents one of the two for each; clients send either), and HEAD wherever GET is answered; a path or method no route answers is a 404 `NOT_FOUND` in CloudKit's error dictionary, whose reason names the path (repeated slashes count as one, as the router reads them)."
        ),
    ]
}
