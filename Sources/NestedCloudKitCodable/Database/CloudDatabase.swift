import Foundation

/// A database of CloudKit records, shaped like `CKDatabase`'s async API.
///
/// Four backends conform: `InMemoryCloudDatabase` (a faithful stand-in for tests), a SQLite file, CloudKit Web
/// Services, and `CKDatabase` itself. Each keeps CloudKit's rules: change tags and conflicts, reference actions,
/// atomic batches in custom zones, and a limit on the items of one request.
///
/// Errors about one record come back in that record's `Result`; errors about the whole request are thrown as
/// ``CloudDatabaseError``.
public protocol CloudDatabase: Sendable {
    /// The most records one request may fetch, save or delete; more is a
    /// ``CloudDatabaseError/limitExceeded(limit:requested:)`` error. ``fetchRecords(_:desiredKeys:)`` splits at it.
    var maximumItemsPerRequest: Int { get }

    /// Fetches records by ID, with a result for each ID.
    ///
    /// - Parameters:
    ///   - ids: The records to fetch; at most ``maximumItemsPerRequest``.
    ///   - desiredKeys: The fields to return, or `nil` for all of them.
    /// - Returns: For each ID, its record or why it couldn't be fetched (``CloudDatabaseError/unknownItem(_:)``
    ///   for a record that doesn't exist).
    func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults

    /// Saves and deletes records in one request, with a result for each.
    ///
    /// Saving sets each record's new change tag; the returned records carry the server's system fields. Deleting
    /// a record also deletes every record that points to it with ``CloudReference/Action/deleteSelf``.
    ///
    /// - Parameters:
    ///   - recordsToSave: The records to save.
    ///   - recordIDsToDelete: The records to delete.
    ///   - savePolicy: How to treat records that changed on the server since they were fetched.
    ///   - atomically: Whether, in each custom zone, all the request's changes apply or none do. CloudKit's
    ///     default zone doesn't support atomic changes: there each item succeeds or fails on its own.
    func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> CloudModifyResults

    /// Finds the records of a zone that match a query, a page at a time.
    ///
    /// A `resultsLimit` of ``CloudQuery/maximumResults`` asks for as many as the database allows per page.
    /// - Returns: The matches in the query's order, and a cursor when more follow.
    func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage

    /// Continues a query from a cursor an earlier page returned.
    func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage

    /// Creates and deletes record zones; deleting a zone deletes its records.
    func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults

    /// Every zone of the database, the default zone included.
    func allRecordZones() async throws -> [CloudRecord.ZoneID]

    // MARK: Changes since a token

    /// The changes to one custom zone's records since a token, a page at a time
    /// (`CKDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`).
    ///
    /// Only custom zones keep a history: the default zone (and so the public database) is refused with
    /// ``CloudDatabaseError/invalidArguments(_:)``; sync it by querying on ``CloudQuery/SystemField/modificationDate``
    /// instead.
    ///
    /// - Parameters:
    ///   - zoneID: A custom zone.
    ///   - token: The token an earlier page returned, or `nil` for every record of the zone.
    ///   - desiredKeys: The fields to return with each changed record, `nil` for all, `[]` for system fields only.
    ///   - resultsLimit: The most changes (modifications and deletions together) one page holds, or `nil` for the
    ///     database's own page size.
    /// - Throws: ``CloudDatabaseError/changeTokenExpired(_:)`` for a token the database no longer honours (start
    ///   again with `nil`); ``CloudDatabaseError/zoneNotFound(_:)``, ``CloudDatabaseError/userDeletedZone(_:)``.
    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges

    /// The zones created, changed and deleted since a token, a page at a time
    /// (`CKDatabase.databaseChanges(since:resultsLimit:)`).
    ///
    /// - Parameters:
    ///   - token: The token an earlier page returned, or `nil` for every zone.
    ///   - resultsLimit: The most zones one page holds, or `nil` for the database's own page size.
    /// - Throws: ``CloudDatabaseError/changeTokenExpired(_:)`` (with no zone) for a token the database no longer
    ///   honours.
    func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges

    // MARK: The user

    /// The record name of the current user's user record (`CKContainer.userRecordID()`): stable for an account
    /// in a container, different for every account, so a client can tell when the user changed.
    ///
    /// - Throws: ``CloudDatabaseError/notAuthenticated`` when no user is signed in.
    func userRecordName() async throws -> String

    /// Whether the user can use the private database now (`CKContainer.accountStatus()`).
    func accountStatus() async throws -> CloudAccountStatus

    // MARK: Subscriptions

    /// Saves and deletes subscriptions, with a result for each (`CKDatabase.modifySubscriptions(saving:deleting:)`).
    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults

    /// Every subscription of the database (`CKDatabase.allSubscriptions()`).
    func allSubscriptions() async throws -> [CloudSubscription]
}

extension CloudDatabase {
    /// Fetches records by ID, with a result for each ID.
    public func records(for ids: [CloudRecord.ID]) async throws -> CloudRecordResults {
        try await records(for: ids, desiredKeys: nil)
    }

    /// Saves and deletes records with CloudKit's defaults: `ifServerRecordUnchanged`, atomically.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID] = []
    ) async throws -> CloudModifyResults {
        try await modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: .ifServerRecordUnchanged, atomically: true
        )
    }

    /// Finds the records of a zone that match a query: the first page of up to 100.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID = .default
    ) async throws -> CloudQueryPage {
        try await records(matching: query, inZoneWith: zoneID, desiredKeys: nil, resultsLimit: 100)
    }

    /// The changes to one custom zone's records since a token: the first page, with every field, at the
    /// database's own page size.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?
    ) async throws -> CloudRecordZoneChanges {
        try await recordZoneChanges(inZoneWith: zoneID, since: token, desiredKeys: nil, resultsLimit: nil)
    }

    /// The zones created, changed and deleted since a token: the first page, at the database's own page size.
    public func databaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await databaseChanges(since: token, resultsLimit: nil)
    }

    /// Fetches one record; throws ``CloudDatabaseError/unknownItem(_:)`` if it doesn't exist.
    public func record(for id: CloudRecord.ID) async throws -> CloudRecord {
        guard let result = try await records(for: [id], desiredKeys: nil)[id] else {
            throw CloudDatabaseError.unknownItem(id)
        }
        return try result.get()
    }

    /// Saves one record and returns it with the server's system fields.
    public func save(_ record: CloudRecord, savePolicy: CloudRecordSavePolicy = .ifServerRecordUnchanged) async throws
        -> CloudRecord
    {
        let results = try await modifyRecords(saving: [record], deleting: [], savePolicy: savePolicy, atomically: true)
        guard let result = results.saveResults[record.id] else { throw CloudDatabaseError.unknownItem(record.id) }
        return try result.get()
    }

    /// Deletes one record (and whatever points to it with `.deleteSelf`).
    public func deleteRecord(withID id: CloudRecord.ID) async throws {
        let results = try await modifyRecords(
            saving: [], deleting: [id], savePolicy: .ifServerRecordUnchanged, atomically: true)
        try results.deleteResults[id]?.get()
    }

    /// Fetches any number of records, split into requests of at most ``maximumItemsPerRequest`` that are in flight
    /// together; each ID is fetched once.
    public func fetchRecords(
        _ ids: [CloudRecord.ID], desiredKeys: [String]? = nil
    ) async throws -> CloudRecordResults {
        var seen: Set<CloudRecord.ID> = []
        let unique = ids.filter { seen.insert($0).inserted }
        guard unique.count > max(1, maximumItemsPerRequest) else {
            return try await records(for: unique, desiredKeys: desiredKeys)
        }
        var results: CloudRecordResults = [:]
        results.reserveCapacity(unique.count)
        try await fetchDistinctRecords(unique, desiredKeys: desiredKeys) { chunk in
            results.merge(chunk) { first, _ in first }
        }
        return results
    }

    /// Fetches records whose IDs are known to be distinct, in requests of at most ``maximumItemsPerRequest`` in
    /// flight together, handing each request's results to `receive` as they arrive.
    func fetchDistinctRecords(
        _ ids: [CloudRecord.ID], desiredKeys: [String]? = nil,
        receive: (CloudRecordResults) throws -> Void
    ) async throws {
        let limit = max(1, maximumItemsPerRequest)
        guard ids.count > limit else { return try receive(try await records(for: ids, desiredKeys: desiredKeys)) }
        try await withThrowingTaskGroup(of: CloudRecordResults.self) { group in
            for start in stride(from: 0, to: ids.count, by: limit) {
                let chunk = Array(ids[start..<min(start + limit, ids.count)])
                group.addTask { try await self.records(for: chunk, desiredKeys: desiredKeys) }
            }
            for try await chunk in group { try receive(chunk) }
        }
    }

    /// Saves any number of records, split into requests of at most ``maximumItemsPerRequest`` sent one after
    /// another in order, so a graph from ``CKRecordEncoder`` reaches the database targets first. Each request is
    /// atomic on its own; the whole isn't.
    ///
    /// After trying every record, throws if any failed. When one record failed on its own (the others of its
    /// atomic request failing only with ``CloudDatabaseError/batchRequestFailed(_:)`` because of it), its own
    /// error is thrown, so the common case reads as it happened:
    ///
    /// ```swift
    /// do {
    ///     try await database.saveRecords(records)
    /// } catch CloudDatabaseError.serverRecordChanged(let server, let client, let ancestor) {
    ///     // merge, then save the records again: the others of the atomic request weren't saved either
    /// }
    /// ```
    ///
    /// When several records failed on their own, throws ``CloudDatabaseError/partialFailure(_:)`` with every
    /// failure keyed by record ID.
    @discardableResult
    public func saveRecords(
        _ records: [CloudRecord], savePolicy: CloudRecordSavePolicy = .ifServerRecordUnchanged
    ) async throws -> [CloudRecord] {
        let limit = max(1, maximumItemsPerRequest)
        var saved: [CloudRecord] = []
        var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
        for start in stride(from: 0, to: records.count, by: limit) {
            let chunk = Array(records[start..<min(start + limit, records.count)])
            let results = try await modifyRecords(saving: chunk, deleting: [], savePolicy: savePolicy, atomically: true)
            for record in chunk {
                switch results.saveResults[record.id] {
                case .success(let savedRecord)?: saved.append(savedRecord)
                case .failure(let error)?: failures[record.id] = error
                case nil: failures[record.id] = .internalError("no result for \(record.id)")
                }
            }
        }
        guard failures.isEmpty else { throw CloudDatabaseError(combining: failures) }
        return saved
    }
}
