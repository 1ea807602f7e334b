import Foundation
import NestedCloudKitCodable

/// A `CloudDatabase` in memory that keeps CloudKit's rules: a faithful stand-in for CloudKit in tests.
///
/// It sets a new change tag on every save and reports conflicts with the server's, client's and ancestor
/// records; cascades `.deleteSelf` deletes; enforces `.validate` references; applies atomic requests all or
/// nothing in custom zones; and refuses requests over its per-request limit with CloudKit's limit error.
///
/// It tracks changes as CloudKit does, so a sync client can be tested against it: each custom zone keeps a log of
/// the records saved and deleted, the database a log of the zones changed and deleted, and change tokens are
/// positions in them (``recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)``,
/// ``databaseChanges(since:resultsLimit:)``). Each user has a private database of their own; sign in, switch and
/// sign out with ``signIn(as:)`` and ``signOut()``. Subscriptions are kept, and the pushes they would send are
/// collected for ``takeNotifications()``.
///
/// For tests and benchmarks it counts requests and records (``statistics``), can wait before answering each
/// request (``latency``), and can inject faults: fail a given request, throttle with a retry-after interval,
/// drop the connection, fail one record of a batch, apply a request and lose its response
/// (``loseNextResponse()``; ``loseNextResponse(to:)`` and ``failNextRequest(to:with:)`` aim at the next request of a
/// kind, an upload say), expire every change token (``expireChangeTokens()``), and delete a zone as the user or
/// CloudKit would (``deleteZone(_:reason:)``). Time comes from the injected `CloudClock`: no test needs to sleep.
///
/// ```swift
/// let database = InMemoryCloudDatabase(latency: .milliseconds(10))
/// try await database.saveRecords(try CKRecordEncoder().encode(school))
/// let school = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: database)
/// #expect(await database.statistics.fetchRequests == 2)
/// ```
public actor InMemoryCloudDatabase: CloudDatabase, CloudRecordStoringDatabase {
    /// The most items one request may hold; CloudKit's framework allows about 400.
    public nonisolated let maximumItemsPerRequest: Int

    /// How long each request waits before it is answered, as a network round trip would.
    public var latency: Duration

    /// What the database has been asked so far.
    public var statistics: Statistics { gate.statistics }

    /// Each user's private database, by user record name.
    var users: [String: InMemoryUserDatabase] = [:]
    /// Each user's shared database: a copy of the records others share with them, in zones named by their owners,
    /// with change logs of its own (see ``refreshSharedDatabases(showingZones:ownedBy:)``).
    var sharedDatabases: [String: InMemoryUserDatabase] = [:]
    /// Which zones each shared database shows, and the refresh that keeps them up to date.
    var sharedCopies = SharedCopies()
    /// The databases another user's request changed since ``takeDatabasesChangedByOthers()`` was last asked: a
    /// server that sends pushes of its own (the emulator) tells their subscribers.
    var databasesChangedByOthers: Set<ChangedDatabase> = []
    /// The signed-in user, or `nil` when signed out.
    var currentUser: String?
    var accountStatusOverride: CloudAccountStatus?
    /// The generation the next new change log gets; one counter for every log of every user, so that a token is
    /// never valid in a log it wasn't made for.
    var nextGeneration = 1
    var notifications: [CloudNotification] = []
    /// The requests' numbers, counts and the faults tests asked for.
    var gate = RequestGate()
    let clock: any CloudClock
    private var changeTagCounter = 0
    /// Copies of the asset files saved, as CloudKit keeps a copy of what it uploads; removed with the database.
    private let assetCopies = FileManager.default.temporaryDirectory
        .appendingPathComponent("NestedCloudKitCodable-InMemory-\(UUID().uuidString)")

    /// The user signed in when a database is made, unless it names another.
    public static let defaultUserRecordName = "_defaultUser"

    /// Creates an empty database holding only the default zone, with a user signed in.
    ///
    /// - Parameters:
    ///   - maximumItemsPerRequest: The per-request limit; 400 by default, as CloudKit's framework.
    ///   - latency: How long each request waits before it is answered.
    ///   - userRecordName: The user signed in at first.
    ///   - clock: The time stamped on saved records, and the clock ``latency`` waits on.
    public init(
        maximumItemsPerRequest: Int = 400,
        latency: Duration = .zero,
        userRecordName: String = InMemoryCloudDatabase.defaultUserRecordName,
        clock: any CloudClock = SystemCloudClock()
    ) {
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.latency = latency
        self.clock = clock
        self.currentUser = userRecordName
        self.users[userRecordName] = InMemoryUserDatabase(generation: 0)
    }

    deinit {
        try? FileManager.default.removeItem(at: assetCopies)
    }

    // MARK: CloudDatabase

    /// Fetches records by ID; see `CloudDatabase/records(for:desiredKeys:)`.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        try await records(for: ids, desiredKeys: desiredKeys, as: .signedIn)
    }

    func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?, as caller: Caller
    ) async throws -> CloudRecordResults {
        let request = try await beginRequest(.fetch, items: ids.count)
        let database = try database(of: caller)
        var results: CloudRecordResults = [:]
        for id in ids {
            if let fault = gate.faults.takeFailure(of: id) {
                results[id] = .failure(fault)
            } else if let record = database.storage.records[id] {
                gate.statistics.recordsFetched += 1
                results[id] = .success(record.keepingFields(desiredKeys))
            } else {
                results[id] = .failure(Self.missingZoneError(id.zoneID, in: database) ?? .unknownItem(id))
            }
        }
        return try respond(to: request, with: results)
    }

    /// Applies the items of a modify request under CloudKit's rules, as Web Services names them.
    package func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> CloudModifyResults {
        try await modifyRecords(operations, atomically: atomically, failing: failures, as: .signedIn)
    }

    func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        as caller: Caller
    ) async throws -> CloudModifyResults {
        let request = try await beginRequest(.modify, items: operations.count)
        let user = try user(of: caller)
        // An injected record fault acts like a server-side failure of that item, atomic rollbacks included.
        var injected = failures
        for id in operations.map(\.id) where injected[id] == nil {
            if let fault = gate.faults.takeFailure(of: id) { injected[id] = fault }
        }
        // CloudKit keeps a copy of an asset's file from the moment of the save, and refuses a file it can't read.
        let files = AssetFileContents(readingFilesOf: operations.compactMap(\.recordToSave))
        injected.merge(files.failures) { injectedFault, _ in injectedFault }
        let copies: [CloudRecordOperation]
        do {
            copies = try operations.map { try $0.mappingRecord { try files.storingCopies(of: $0, in: assetCopies) } }
        } catch {
            throw CloudDatabaseError.internalError(
                "the in-memory database couldn't copy an asset's file into \(assetCopies.path): \(error)")
        }
        let results =
            caller.scope == .shared
            ? try modifySharedRecords(copies, atomically: atomically, failing: injected, as: user)
            : try applyModification(copies, atomically: atomically, failing: injected, toZonesOf: user, madeBy: user)
        return try respond(to: request, with: results)
    }

    /// Applies a modify request to the zones of one user, made by them or by a user they share the zones with,
    /// and brings up to date the shared databases that show the zones.
    func applyModification(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        toZonesOf owner: String, madeBy user: String
    ) throws -> CloudModifyResults {
        let plan: CloudModificationPlan
        let removed: [(id: CloudRecord.ID, recordType: String)]
        var zoneChanges: [CloudRecord.ZoneID: SharedZoneChange] = [:]
        do {
            // In a scope of its own: a copy of the store still alive when it is changed below would copy it whole.
            let storage = users[owner]?.storage ?? InMemoryRecordStore()
            plan = try CloudModificationPlan(
                operations, atomically: atomically, store: storage, failures: failures, now: clock.now(),
                userRecordName: user, makeChangeTag: nextChangeTag)
            removed = plan.recordIDsToRemove.compactMap { id in
                storage.records[id].map { (id: id, recordType: $0.recordType) }
            }
            // What the write touched in each zone, read before it: shared copies are refreshed by that alone.
            try SharedZoneChange.track(
                writing: plan.recordsToWrite, removing: plan.recordIDsToRemove, in: storage, into: &zoneChanges)
        }
        let changedZones = plan.recordsToWrite.map(\.id.zoneID) + removed.map(\.id.zoneID)
        users[owner]?.storage.apply(writing: plan.recordsToWrite, removing: plan.recordIDsToRemove)
        users[owner]?.logRecordChanges(written: plan.recordsToWrite, removed: removed)
        notifySubscribers(of: owner, scope: .private, ofChangesIn: changedZones)
        refreshSharedDatabases(after: zoneChanges, ownedBy: owner)
        if user != owner, !plan.recordsToWrite.isEmpty || !removed.isEmpty {
            databasesChangedByOthers.insert(ChangedDatabase(userRecordName: owner, scope: .private))
        }
        gate.statistics.recordsSaved += plan.saveResults.values.count { !$0.failed }
        gate.statistics.recordsDeleted += plan.deleteResults.values.count { !$0.failed }
        return (plan.saveResults, plan.deleteResults)
    }

    /// Creates and deletes zones; deleting a zone deletes its records.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete, as: .signedIn)
    }

    func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID], as caller: Caller
    ) async throws -> CloudZoneModifyResults {
        let request = try await beginRequest(.zones, items: zonesToSave.count + zonesToDelete.count)
        let user = try user(of: caller)
        if caller.scope == .shared {
            return try respond(
                to: request, with: modifySharedZones(saving: zonesToSave, deleting: zonesToDelete, as: user))
        }
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var changed: [CloudRecord.ZoneID] = []
        for zone in zonesToSave {
            if let refusal = CloudRequestRules.refusal(creating: zone) {
                saveResults[zone] = .failure(refusal)
                continue
            }
            if users[user]?.storage.zones.contains(zone) == false { changed.append(zone) }
            let generation = takeGeneration()
            users[user]?.createZone(zone, generation: generation)
            saveResults[zone] = .success(())
        }
        for zone in zonesToDelete {
            if zone == .default {
                deleteResults[zone] = .failure(.invalidArguments("the default zone can't be deleted"))
            } else if users[user]?.storage.zones.contains(zone) == true {
                users[user]?.deleteZone(zone, reason: .deleted)
                changed.append(zone)
                deleteResults[zone] = .success(())
            } else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
            }
        }
        notifySubscribers(of: user, scope: .private, ofChangesIn: changed)
        refreshSharedDatabases(showingZones: changed, ownedBy: user)
        return try respond(to: request, with: (saveResults, deleteResults))
    }

    /// Every zone, the default zone first among equals, sorted by name.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await allRecordZones(as: .signedIn)
    }

    func allRecordZones(as caller: Caller) async throws -> [CloudRecord.ZoneID] {
        let request = try await beginRequest(.zones, items: 0)
        let zones = try database(of: caller).storage.zones
        return try respond(
            to: request, with: zones.sorted { ($0.zoneName, $0.ownerName) < ($1.zoneName, $1.ownerName) })
    }

    // MARK: The user

    /// The signed-in user's record name; see `CloudDatabase/userRecordName()`.
    public func userRecordName() async throws -> String {
        try await userRecordName(as: .signedIn)
    }

    func userRecordName(as caller: Caller) async throws -> String {
        let request = try await beginRequest(.account, items: 0)
        return try respond(to: request, with: try user(of: caller))
    }

    /// Whether a user is signed in, or the status ``setAccountStatus(_:)`` set; see
    /// `CloudDatabase/accountStatus()`.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await accountStatus(as: .signedIn)
    }

    func accountStatus(as caller: Caller) async throws -> CloudAccountStatus {
        let request = try await beginRequest(.account, items: 0)
        let signedIn = caller.userRecordName != nil || currentUser != nil
        return try respond(to: request, with: accountStatusOverride ?? (signedIn ? .available : .noAccount))
    }

    // MARK: Requests

    /// Counts the request, waits out the latency, and fails it if a fault or the limit says so; returns its
    /// number.
    func beginRequest(_ kind: RequestKind, items: Int) async throws -> Int {
        let number = gate.arrive(kind)
        if latency > .zero { try await clock.sleep(for: latency) }
        try gate.admit(number, kind, items: items, maximum: maximumItemsPerRequest)
        return number
    }

    /// The response to a request, unless a test asked for it to be lost after the request took effect.
    func respond<Response>(to request: Int, with response: Response) throws -> Response {
        try gate.respond(to: request, with: response)
    }

    /// The user a request is made as: the one the caller names, or the signed-in user. A user the server hasn't
    /// met yet gets an empty private database.
    func user(of caller: Caller) throws -> String {
        guard let user = caller.userRecordName else { return try signedInUser() }
        try checkAccountStatus()
        if users[user] == nil { users[user] = InMemoryUserDatabase(generation: takeGeneration()) }
        return user
    }

    /// The database a request reads: the user's private database, or the copy of what others share with them.
    func database(of caller: Caller) throws -> InMemoryUserDatabase {
        let user = try user(of: caller)
        if caller.scope == .shared { return sharedDatabases[user] ?? InMemoryUserDatabase.shared(generation: 0) }
        return users[user] ?? InMemoryUserDatabase(generation: 0)
    }

    /// Fails when the account status set by a test can't make requests, with the error CloudKit gives.
    func checkAccountStatus() throws {
        switch accountStatusOverride {
        case .temporarilyUnavailable?, .couldNotDetermine?: throw CloudDatabaseError.accountTemporarilyUnavailable
        case .restricted?: throw CloudDatabaseError.permissionFailure("the account is restricted on this device")
        case .noAccount?: throw CloudDatabaseError.notAuthenticated
        case .available?, nil: break
        }
    }

    /// The signed-in user, or the error CloudKit gives when the account can't be used.
    func signedInUser() throws -> String {
        try checkAccountStatus()
        guard let currentUser else { throw CloudDatabaseError.notAuthenticated }
        return currentUser
    }

    func takeGeneration() -> Int {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    /// Why a zone can't be used, or `nil` when it exists.
    static func missingZoneError(
        _ zoneID: CloudRecord.ZoneID, in database: InMemoryUserDatabase
    ) -> CloudDatabaseError? {
        database.storage.missingZoneError(zoneID)
    }

    /// One page of a query, from its cursor; see `CloudRecordStoringDatabase`.
    package func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await queryPage(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit, as: .signedIn)
    }

    func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int, as caller: Caller
    ) async throws -> CloudQueryPage {
        let request = try await beginRequest(.query, items: 0)
        let database = try database(of: caller)
        let paging = try CloudQueryPaging(
            from: cursor, resultsLimit: resultsLimit, maximumItemsPerRequest: maximumItemsPerRequest)
        if let missing = Self.missingZoneError(cursor.zoneID, in: database) { throw missing }
        let query = cursor.query
        let matches = database.storage.records.values.lazy.filter {
            $0.id.zoneID == cursor.zoneID && $0.recordType == query.recordType && query.predicate.matches($0)
        }
        let (page, next) = paging.page(of: matches, record: { $0 }, continuing: cursor)
        gate.statistics.recordsFetched += page.count
        return try respond(to: request, with: (page.map { ($0.id, .success($0.keepingFields(desiredKeys))) }, next))
    }

    func nextChangeTag() -> String {
        changeTagCounter += 1
        return String(changeTagCounter, radix: 36)
    }
}

extension InMemoryCloudDatabase {
    /// The kinds of request, as ``Statistics`` counts them and ``loseNextResponse(to:)`` aims at them.
    public typealias RequestKind = CloudRequestKind

    /// What an ``InMemoryCloudDatabase`` has been asked.
    public typealias Statistics = CloudRequestStatistics
}

extension Result {
    var failed: Bool {
        if case .failure = self { true } else { false }
    }
}
