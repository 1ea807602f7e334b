import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// What a server keeps beyond a user's own databases.
package struct CloudServerOptions: OptionSet, Sendable {
    package let rawValue: Int

    package init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Users share records: each user's shared database is kept a copy of what they accepted.
    package static let sharedDatabases = CloudServerOptions(rawValue: 1)
    /// The pushes subscriptions would send are collected (``takeNotifications()``).
    package static let notifications = CloudServerOptions(rawValue: 2)
    /// The storage holds what an earlier run left: the shared databases are brought up to date with their owners'
    /// before the first is read or written (a process killed between an owner's write and the copies' refresh left
    /// them behind).
    package static let earlierRun = CloudServerOptions(rawValue: 4)
}

/// How a request finds the database it goes to, once the server has admitted it: a front's user may be signed out,
/// which fails the request after it is counted and delayed, as CloudKit's would.
package typealias DatabaseResolver = @Sendable () async throws -> UserDatabaseID

/// Every `CloudDatabase` request implemented once, over any ``CloudStorageEngine``: the in-memory server, a SQLite
/// file and the SQLite server are fronts of one of these.
///
/// It checks each request's limit, fetches, applies modify requests through the rules (``CloudModificationPlan``),
/// creates and deletes zones, keeps subscriptions, pages queries (``CloudQueryPaging``) and changes
/// (``ChangePages``), and, for a server of several users, answers the sharing requests and keeps each user's shared
/// database (``SharedCopies``), telling who else a request changed and the pushes subscriptions would send.
package final class CloudServer<Engine: CloudStorageEngine>: Sendable {
    /// Where the databases are.
    package let engine: Engine
    /// The most items one request may hold.
    package let maximumItemsPerRequest: Int
    /// What every request passes through on a test's server (numbers, latency, faults, statistics), or `nil`.
    package let gate: SimulatedNetwork?
    let options: CloudServerOptions
    /// The participants' copies, on a server whose users share records (``CloudServerOptions/sharedDatabases``).
    let copies: SharedCopies<Engine>?
    let events = ServerEvents()

    package init(
        engine: Engine, maximumItemsPerRequest: Int, options: CloudServerOptions, gate: SimulatedNetwork? = nil
    ) {
        self.engine = engine
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.options = options
        self.gate = gate
        copies =
            options.contains(.sharedDatabases)
            ? SharedCopies(engine: engine, recovering: options.contains(.earlierRun)) : nil
    }

    // MARK: Records

    /// Fetches records by ID; see `CloudDatabase.records(for:desiredKeys:)`.
    package func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?, in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudRecordResults {
        try await request(.fetch, items: ids.count) {
            let database = try await resolveDatabase()
            let faults =
                gate.map { gate in
                    ids.reduce(into: CloudRecordResults()) { faults, id in
                        if let fault = gate.takeFailure(of: id) { faults[id] = .failure(fault) }
                    }
                } ?? [:]
            let results = try await read(database) { stored in
                var results: CloudRecordResults = [:]
                for id in ids where faults[id] == nil {
                    if let record = try stored.record(withID: id) {
                        results[id] = .success(try stored.withAssetFiles(record).keepingFields(desiredKeys))
                    } else {
                        results[id] = .failure(try stored.missingZoneError(id.zoneID) ?? .unknownItem(id))
                    }
                }
                return results
            }
            gate?.count { $0.recordsFetched += results.values.count { !$0.failed } }
            // Most requests meet no fault: their results aren't copied into a new dictionary.
            return faults.isEmpty ? results : results.merging(faults) { fetched, _ in fetched }
        }
    }

    /// Applies the items of a modify request under CloudKit's rules, in one transaction of each database it writes;
    /// see ``CloudRecordStoringDatabase``. In a shared database each owner's part goes to the owner's database,
    /// once the shares the user accepted allow each item.
    package func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudModifyResults {
        try await request(.modify, items: operations.count) {
            let database = try await resolveDatabase()
            // An injected record fault acts like a server-side failure of that item, atomic rollbacks included.
            var failures = failures
            if let gate {
                for operation in operations where failures[operation.id] == nil {
                    if let fault = gate.takeFailure(of: operation.id) { failures[operation.id] = fault }
                }
            }
            let results = try await modify(operations, atomically: atomically, failing: failures, in: database)
            gate?.count { statistics in
                statistics.recordsSaved += results.saveResults.values.count { !$0.failed }
                statistics.recordsDeleted += results.deleteResults.values.count { !$0.failed }
            }
            return results
        }
    }

    /// The contents of the records' asset files, and the operations with the storage's copies of them. Reading (and
    /// the in-memory storage's copying) blocks on the files, so it runs on a queue of its own, off the cooperative
    /// pool; a save without asset files, most of them, doesn't leave the caller's thread.
    private func readingAssetFiles(of operations: [CloudRecordOperation]) async throws -> (
        AssetFileContents, [CloudRecordOperation]
    ) {
        let records = operations.compactMap(\.recordToSave)
        let holdsFiles = records.contains { record in
            record.fields.contains { $0.value.assets.contains { $0.data == nil && $0.fileURL != nil } }
        }
        guard holdsFiles else { return (AssetFileContents(readingFilesOf: []), operations) }
        return try await assetFileQueue.run { [engine] in
            let files = AssetFileContents(readingFilesOf: records)
            return (files, try engine.storingAssets(of: operations, contents: files.contents))
        }
    }

    private func modify(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        in database: UserDatabaseID
    ) async throws -> CloudModifyResults {
        // CloudKit keeps a copy of an asset's file from the moment of the save, and refuses a file it can't read;
        // files are read before any transaction, so the writer never waits on them.
        let (files, operations) = try await readingAssetFiles(of: operations)
        let failures = files.failures.merging(failures) { fileFailure, _ in fileFailure }
        let user = database.userRecordName
        if database.scope == .shared {
            return try await modifySharedRecords(
                operations, atomically: atomically, failing: failures, contents: files.contents, as: user)
        }
        let tracking = options.contains(.sharedDatabases)
        let (results, change) = try await engine.write(database) { stored in
            var change = OwnerChange()
            let results = try Self.apply(
                operations, atomically: atomically, failing: failures, contents: files.contents, madeBy: user,
                to: &stored, tracking: tracking, into: &change)
            return (results, change)
        }
        await didChange(ownedBy: user, change, madeBy: user)
        return results
    }

    /// How a transaction changed an owner's database: the zones of the records it wrote and removed, in order, and,
    /// when the server keeps shared databases, how it changed each zone for them.
    struct OwnerChange: Sendable {
        var zones: [CloudRecord.ZoneID] = []
        var shared: [CloudRecord.ZoneID: SharedZoneChange] = [:]
    }

    /// Plans a modify request made by `user` under the rules and writes it.
    static func apply(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        contents: [AssetKey: Data], madeBy user: String, to stored: inout Engine.Transaction, tracking: Bool,
        into change: inout OwnerChange
    ) throws -> CloudModifyResults {
        let tags = stored.changeTags
        let plan = try CloudModificationPlan(
            operations, atomically: atomically, store: stored, failures: failures, now: stored.now,
            userRecordName: user, makeChangeTag: tags.next)
        try write(
            plan.recordsToWrite, removing: plan.recordIDsToRemove, contents: contents, to: &stored,
            tracking: tracking, into: &change)
        return (plan.saveResults, plan.deleteResults)
    }

    /// Writes records of an owner's database, noting how the write changes each zone (read before it).
    static func write(
        _ records: [CloudRecord], removing removed: [CloudRecord.ID], contents: [AssetKey: Data],
        to stored: inout Engine.Transaction, tracking: Bool, into change: inout OwnerChange
    ) throws {
        guard !records.isEmpty || !removed.isEmpty else { return }
        if tracking {
            try SharedZoneChange.track(writing: records, removing: removed, in: stored, into: &change.shared)
        }
        try stored.write(records, removing: removed, contents: contents, asCopy: false)
        change.zones += records.map(\.id.zoneID) + removed.map(\.zoneID)
    }

    // MARK: Zones

    /// Creates and deletes zones; deleting a zone deletes its records. In a shared database no zone can be created,
    /// and deleting one leaves every share of it the user joined.
    package func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudZoneModifyResults {
        try await request(.zones, items: zonesToSave.count + zonesToDelete.count) {
            let database = try await resolveDatabase()
            return try await changeZones(saving: zonesToSave, deleting: zonesToDelete, in: database)
        }
    }

    private func changeZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID],
        in database: UserDatabaseID
    ) async throws -> CloudZoneModifyResults {
        if database.scope == .shared {
            return try await modifySharedZones(
                saving: zonesToSave, deleting: zonesToDelete, as: database.userRecordName)
        }
        let (results, changed) = try await engine.write(database) { stored in
            var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
            var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
            var changed: [CloudRecord.ZoneID] = []
            for zone in zonesToSave {
                if let refusal = CloudRequestRules.refusal(creating: zone) {
                    saveResults[zone] = .failure(refusal)
                    continue
                }
                if try stored.createZone(zone) { changed.append(zone) }
                saveResults[zone] = .success(())
            }
            for zone in zonesToDelete {
                if zone == .default {
                    deleteResults[zone] = .failure(.invalidArguments("the default zone can't be deleted"))
                } else if try stored.deleteZone(zone, reason: .deleted) {
                    changed.append(zone)
                    deleteResults[zone] = .success(())
                } else {
                    deleteResults[zone] = .failure(.zoneNotFound(zone))
                }
            }
            return ((saveResults, deleteResults), changed)
        }
        await didChange(zones: changed, ownedBy: database.userRecordName)
        return results
    }

    /// Every zone of a database, sorted by name.
    package func allRecordZones(in resolveDatabase: @escaping DatabaseResolver) async throws -> [CloudRecord.ZoneID] {
        try await request(.zones, items: 0) {
            let database = try await resolveDatabase()
            return try await read(database) { try $0.zones() }
        }
    }

    /// Deletes a zone of a user's private database as something other than the app would: the user deleting the
    /// app's data in Settings (`.purged`: requests for the zone then fail with `userDeletedZone` until the app
    /// creates it again), or an encrypted-data reset. The users it was shared with lose it. A zone that doesn't
    /// exist, the default zone, or a user the server has never met is left alone.
    package func deleteZone(
        _ zoneID: CloudRecord.ZoneID, ofUser user: String, reason: CloudZoneDeletion.Reason
    ) async throws {
        // A user the server has never met has no zone to delete, and gets no database for asking.
        guard zoneID != .default, try engine.users(.private).contains(user) else { return }
        let deleted = try await engine.write(.privateDatabase(of: user)) { try $0.deleteZone(zoneID, reason: reason) }
        if deleted { await didChange(zones: [zoneID], ownedBy: user) }
    }

    // MARK: Queries and changes

    /// One page of a query, from its cursor; see ``CloudRecordStoringDatabase``.
    package func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int,
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudQueryPage {
        try await request(.query, items: 0) {
            let database = try await resolveDatabase()
            let paging = try CloudQueryPaging(
                from: cursor, resultsLimit: resultsLimit, maximumItemsPerRequest: maximumItemsPerRequest)
            let page: CloudQueryPage = try await read(database) { stored in
                if let missing = try stored.missingZoneError(cursor.zoneID) { throw missing }
                let matches = try stored.records(matching: cursor.query, in: cursor.zoneID)
                let (page, next) = paging.page(of: matches, record: { $0 }, continuing: cursor)
                return (
                    try page.map { ($0.id, .success(try stored.withAssetFiles($0).keepingFields(desiredKeys))) }, next
                )
            }
            gate?.count { $0.recordsFetched += page.matchResults.count }
            return page
        }
    }

    /// The changes to a custom zone's records since a token; see
    /// `CloudDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`.
    package func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?, in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudRecordZoneChanges {
        let maximum = maximumItemsPerRequest
        return try await request(.zoneChanges, items: 0) {
            let database = try await resolveDatabase()
            let changes = try await read(database) { stored in
                try ChangePages.recordZoneChanges(
                    inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
                    maximum: maximum, in: stored)
            }
            gate?.count { $0.recordsFetched += changes.modifications.count }
            return changes
        }
    }

    /// The zones created, changed and deleted since a token; see `CloudDatabase.databaseChanges(since:resultsLimit:)`.
    package func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?, in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudDatabaseChanges {
        let maximum = maximumItemsPerRequest
        return try await request(.databaseChanges, items: 0) {
            let database = try await resolveDatabase()
            return try await read(database) { stored in
                try ChangePages.databaseChanges(
                    since: token, resultsLimit: resultsLimit, maximum: maximum, in: stored)
            }
        }
    }

    // MARK: Subscriptions

    /// Saves and deletes subscriptions; see `CloudDatabase.modifySubscriptions(saving:deleting:)`. A shared
    /// database takes database subscriptions only, as CloudKit's.
    package func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudSubscriptionModifyResults {
        try await request(.subscriptions, items: subscriptionsToSave.count + subscriptionIDsToDelete.count) {
            let database = try await resolveDatabase()
            return try await changeSubscriptions(
                saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, in: database)
        }
    }

    private func changeSubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID],
        in database: UserDatabaseID
    ) async throws -> CloudSubscriptionModifyResults {
        try await engine.write(database) { stored in
            var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
            var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
            for subscription in subscriptionsToSave {
                if let refusal = subscription.refusal {
                    saveResults[subscription.id] = .failure(refusal)
                } else if database.scope == .shared, case .zone = subscription.kind {
                    saveResults[subscription.id] = .failure(SharedDatabaseRules.zoneSubscriptionRefusal(subscription))
                } else if case .zone(let zoneID) = subscription.kind, let missing = try stored.missingZoneError(zoneID)
                {
                    saveResults[subscription.id] = .failure(missing)
                } else {
                    try stored.save(subscription)
                    saveResults[subscription.id] = .success(subscription)
                }
            }
            for id in subscriptionIDsToDelete {
                deleteResults[id] =
                    try stored.deleteSubscription(id) ? .success(()) : .failure(.unknownSubscription(id))
            }
            return (saveResults, deleteResults)
        }
    }

    /// Every subscription of a database, by ID.
    package func allSubscriptions(in resolveDatabase: @escaping DatabaseResolver) async throws -> [CloudSubscription] {
        try await request(.subscriptions, items: 0) {
            let database = try await resolveDatabase()
            return try await read(database) { try $0.subscriptions() }
        }
    }

    // MARK: What a request changed

    /// The databases other users' requests changed since the last call: an owner's private database a participant
    /// wrote to or accepted a share of, a user's shared database that an owner's change (or their own share being
    /// accepted or left) changed. For a server that sends pushes of its own.
    package func takeDatabasesChangedByOthers() -> Set<UserDatabaseID> {
        events.takeChangedByOthers()
    }

    /// The pushes the subscriptions would have sent since the last call, oldest first: one per subscription and
    /// request that changed what it watches (with ``CloudServerOptions/notifications``).
    package func takeNotifications() -> [CloudNotification] {
        events.takeNotifications()
    }

    /// After a write to `owner`'s private database: the pushes of its subscriptions, the shared copies brought up to
    /// date, and the owner told when someone else made it.
    ///
    /// The pushes and copies run in a task of its own, which the request's cancellation doesn't reach: the write is
    /// committed, and what follows from it mustn't be dropped because the caller stopped waiting.
    func didChange(ownedBy owner: String, _ change: OwnerChange, madeBy user: String) async {
        let database = UserDatabaseID.privateDatabase(of: owner)
        if followsWritesAsynchronously {
            await Task {
                await notifySubscribers(of: database, ofChangesIn: change.zones)
                await refreshSharedCopies(after: change.shared, ownedBy: owner)
            }.value
        }
        if user != owner, !change.zones.isEmpty { events.noteChangedByOthers(database) }
    }

    /// Whether a write is followed by pushes or shared copies to bring up to date, which read the storage: a server
    /// of one database with neither (a SQLite file) makes no task for each write.
    private var followsWritesAsynchronously: Bool { copies != nil || options.contains(.notifications) }

    /// After zones of `owner`'s private database were made, deleted, or shared differently: the pushes, and the
    /// shared copies of those zones brought up to date whole.
    func didChange(zones: [CloudRecord.ZoneID], ownedBy owner: String) async {
        // In a task of its own, as above: the request's cancellation doesn't reach what its write started.
        guard followsWritesAsynchronously else { return }
        await Task {
            await notifySubscribers(of: .privateDatabase(of: owner), ofChangesIn: zones)
            await refreshSharedCopies(
                after: Dictionary(zones.map { ($0, .everything) }, uniquingKeysWith: { $1 }), ownedBy: owner)
        }.value
    }

    private func refreshSharedCopies(after changes: [CloudRecord.ZoneID: SharedZoneChange], ownedBy owner: String)
        async
    {
        if let copies { await noteChanged(copies.refresh(changes, ownedBy: owner)) }
    }

    /// Tells the users whose shared database a refresh changed.
    private func noteChanged(_ changed: SharedCopies<Engine>.Changed) async {
        for (viewer, zone) in changed {
            let database = UserDatabaseID.sharedDatabase(of: viewer)
            events.noteChangedByOthers(database)
            await notifySubscribers(of: database, ofChangesIn: [zone])
        }
    }

    private func notifySubscribers(of database: UserDatabaseID, ofChangesIn zones: [CloudRecord.ZoneID]) async {
        guard options.contains(.notifications), !zones.isEmpty,
            let subscriptions = try? await engine.read(database, { try $0.subscriptions() }), !subscriptions.isEmpty
        else { return }
        events.notify(subscriptions, of: database, ofChangesIn: zones)
    }

    // MARK: Requests

    /// Runs a read of a database; a shared database a failed refresh left behind is brought up to date first.
    func read<T: Sendable>(
        _ database: UserDatabaseID, _ body: @escaping @Sendable (Engine.Transaction) throws -> T
    ) async throws -> T {
        if database.scope == .shared, let copies, await copies.isBehind { await noteChanged(copies.catchUp()) }
        return try await engine.read(database, body)
    }

    /// Runs a request through the gate, or checks its limit on a server without one.
    package func request<T>(_ kind: CloudRequestKind, items: Int, _ body: @Sendable () async throws -> T) async throws
        -> T
    {
        if let gate { return try await gate.request(kind, items: items, maximum: maximumItemsPerRequest, body) }
        guard items <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: items)
        }
        return try await body()
    }
}

/// Where a server reads asset files: concurrent, so that saves of different users' records don't wait on each other.
private let assetFileQueue = BlockingQueue(label: "NestedCloudKitServer.assetFiles", concurrent: true)
