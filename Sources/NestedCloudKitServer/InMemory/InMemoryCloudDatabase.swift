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

    /// The server every request goes to, over the in-memory storage.
    let server: CloudServer<InMemoryStorage>
    /// The signed-in user, or `nil` when signed out.
    var currentUser: String?
    var accountStatusOverride: CloudAccountStatus?
    /// The requests' numbers, counts and the faults tests asked for.
    var gate = RequestGate()
    let clock: any CloudClock
    /// Copies of the asset files saved, as CloudKit keeps a copy of what it uploads; removed with the database.
    private let assetCopies: URL

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
        let assetCopies = FileManager.default.temporaryDirectory
            .appendingPathComponent("NestedCloudKitCodable-InMemory-\(UUID().uuidString)")
        self.assetCopies = assetCopies
        server = CloudServer(
            engine: InMemoryStorage(firstUser: userRecordName, clock: clock, assetCopies: assetCopies),
            maximumItemsPerRequest: maximumItemsPerRequest, options: [.sharedDatabases, .notifications])
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
        var faults: CloudRecordResults = [:]
        for id in ids {
            if let fault = gate.faults.takeFailure(of: id) { faults[id] = .failure(fault) }
        }
        let fetched = try await server.records(
            for: ids.filter { faults[$0] == nil }, desiredKeys: desiredKeys, in: database)
        gate.statistics.recordsFetched += fetched.values.count { !$0.failed }
        return try respond(to: request, with: fetched.merging(faults) { fetched, _ in fetched })
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
        let database = try database(of: caller)
        // An injected record fault acts like a server-side failure of that item, atomic rollbacks included.
        var injected = failures
        for id in operations.map(\.id) where injected[id] == nil {
            if let fault = gate.faults.takeFailure(of: id) { injected[id] = fault }
        }
        let results = try await server.modifyRecords(
            operations, atomically: atomically, failing: injected, in: database)
        gate.statistics.recordsSaved += results.saveResults.values.count { !$0.failed }
        gate.statistics.recordsDeleted += results.deleteResults.values.count { !$0.failed }
        return try respond(to: request, with: results)
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
        let results = try await server.modifyRecordZones(
            saving: zonesToSave, deleting: zonesToDelete, in: try database(of: caller))
        return try respond(to: request, with: results)
    }

    /// Every zone, the default zone first among equals, sorted by name.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await allRecordZones(as: .signedIn)
    }

    func allRecordZones(as caller: Caller) async throws -> [CloudRecord.ZoneID] {
        let request = try await beginRequest(.zones, items: 0)
        return try respond(to: request, with: try await server.allRecordZones(in: try database(of: caller)))
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
        let page = try await server.queryPage(
            from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit, in: try database(of: caller))
        gate.statistics.recordsFetched += page.matchResults.count
        return try respond(to: request, with: page)
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
        server.engine.makeDatabase(.privateDatabase(of: user))
        return user
    }

    /// The database a request goes to: the user's private database, or the copy of what others share with them.
    func database(of caller: Caller) throws -> UserDatabaseID {
        UserDatabaseID(userRecordName: try user(of: caller), scope: caller.scope)
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
