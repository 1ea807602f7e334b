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
/// positions in them (`CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`,
/// `CloudDatabase/databaseChanges(since:resultsLimit:)`). Each user has a private database of their own; sign in, switch and
/// sign out with ``signIn(as:)`` and ``signOut()``. Subscriptions are kept, and the pushes they would send are
/// collected for ``takeNotifications()``.
///
/// For tests and benchmarks its ``network`` (a ``SimulatedNetwork``) counts requests and records, can wait before
/// answering each request, and injects faults: fail a given request, throttle with a retry-after interval, drop the
/// connection, fail one record of a batch, apply a request and lose its response (the next one, or the next of a
/// kind, an upload say). The database itself can expire every change token (``expireChangeTokens()``) and delete a
/// zone as the user or CloudKit would (``deleteZone(_:reason:)``). Time comes from the injected `CloudClock`: no
/// test needs to sleep.
///
/// ```swift
/// let database = InMemoryCloudDatabase(latency: .milliseconds(10))
/// try await database.saveRecords(try CKRecordEncoder().encode(school))
/// let school = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: database)
/// #expect(database.network.statistics.fetchRequests == 2)
/// ```
public actor InMemoryCloudDatabase: CloudDatabase, CloudServerFront {
    /// The most items one request may hold; CloudKit's framework allows about 400.
    public nonisolated let maximumItemsPerRequest: Int

    /// The server every request goes to, over the in-memory storage.
    package nonisolated let cloudServer: CloudServer<InMemoryStorage>
    /// The server, as every front sees it.
    package nonisolated var requests: any CloudServerRequests { cloudServer }
    /// What a test sets between it and the server (latency, faults, lost responses) and what was asked: the
    /// requests' numbers, counts and faults, shared by every user's database.
    public nonisolated let network: SimulatedNetwork
    /// The signed-in user, or `nil` when signed out.
    var currentUser: String?
    /// The account status ``setAccountStatus(_:)`` set for every user, or `nil`.
    package var accountStatusOverride: CloudAccountStatus?
    /// Copies of the asset files saved, as CloudKit keeps a copy of what it uploads; removed with the database.
    private nonisolated let assetCopies: URL

    /// The user signed in when a database is made, unless it names another.
    public static let defaultUserRecordName = "_defaultUser"

    /// Creates an empty database holding only the default zone, with a user signed in.
    ///
    /// - Parameters:
    ///   - maximumItemsPerRequest: The per-request limit; 400 by default, as CloudKit's framework.
    ///   - latency: How long each request waits before it is answered.
    ///   - userRecordName: The user signed in at first.
    ///   - clock: The time stamped on saved records, and the clock the latency waits on.
    public init(
        maximumItemsPerRequest: Int = 400,
        latency: Duration = .zero,
        userRecordName: String = InMemoryCloudDatabase.defaultUserRecordName,
        clock: any CloudClock = SystemCloudClock()
    ) {
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.currentUser = userRecordName
        let assetCopies = FileManager.default.temporaryDirectory
            .appendingPathComponent("NestedCloudKitCodable-InMemory-\(UUID().uuidString)")
        self.assetCopies = assetCopies
        let network = SimulatedNetwork(latency: latency, clock: clock)
        self.network = network
        cloudServer = CloudServer(
            engine: InMemoryStorage(firstUser: userRecordName, clock: clock, assetCopies: assetCopies),
            maximumItemsPerRequest: maximumItemsPerRequest, options: [.sharedDatabases, .notifications], gate: network)
    }

    deinit {
        try? FileManager.default.removeItem(at: assetCopies)
    }

    /// The signed-in user's private database.
    package func serverDatabase() throws -> UserDatabaseID {
        .privateDatabase(of: try signedInUser())
    }

    // MARK: The user

    /// The signed-in user's record name; see `CloudDatabase/userRecordName()`.
    public func userRecordName() async throws -> String {
        try await cloudServer.request(.account, items: 0) { try await self.signedInUser() }
    }

    /// Whether a user is signed in, or the status ``setAccountStatus(_:)`` set; see
    /// `CloudDatabase/accountStatus()`.
    public func accountStatus() async throws -> CloudAccountStatus {
        let status = accountStatusOverride ?? (currentUser != nil ? .available : .noAccount)
        return try await cloudServer.request(.account, items: 0) { status }
    }

    // MARK: Requests

    /// The database a named user's request goes to (their private database, or the copy of what others share
    /// with them), once the account status a test set lets requests through. A user the server hasn't met yet gets
    /// an empty private database.
    package func database(ofUser user: String, scope: CloudNotification.DatabaseScope) throws -> UserDatabaseID {
        try checkAccountStatus()
        cloudServer.engine.makeDatabase(.privateDatabase(of: user))
        return UserDatabaseID(userRecordName: user, scope: scope)
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

extension Result {
    var failed: Bool {
        if case .failure = self { true } else { false }
    }
}
