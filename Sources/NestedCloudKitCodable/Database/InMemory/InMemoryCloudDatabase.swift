import Foundation

/// A ``CloudDatabase`` in memory that keeps CloudKit's rules: a faithful stand-in for CloudKit in tests.
///
/// It sets a new change tag on every save and reports conflicts with the server's, client's and ancestor
/// records; cascades `.deleteSelf` deletes; enforces `.validate` references; applies atomic requests all or
/// nothing in custom zones; and refuses requests over its per-request limit with CloudKit's limit error.
///
/// For tests and benchmarks it counts requests and records (``statistics``), can wait before answering each
/// request (``latency``), and can inject faults: fail a given request, throttle with a retry-after interval,
/// drop the connection, or fail one record of a batch.
///
/// ```swift
/// let database = InMemoryCloudDatabase(latency: .milliseconds(10))
/// try await database.saveRecords(try CKRecordEncoder().encode(school))
/// let school = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: database)
/// #expect(await database.statistics.fetchRequests == 2)
/// ```
public actor InMemoryCloudDatabase: CloudDatabase {
    /// The most items one request may hold; CloudKit's framework allows about 400.
    public nonisolated let maximumItemsPerRequest: Int

    /// How long each request waits before it is answered, as a network round trip would.
    public var latency: Duration

    /// What the database has been asked so far.
    public private(set) var statistics = Statistics()

    private var storage = InMemoryRecordStore()
    private var faults: [Int: CloudDatabaseError] = [:]
    private var recordFaults: [CloudRecord.ID: CloudDatabaseError] = [:]
    private let clock: @Sendable () -> Date
    private var changeTagCounter = 0
    /// Copies of the asset files saved, as CloudKit keeps a copy of what it uploads; removed with the database.
    private let assetCopies = FileManager.default.temporaryDirectory
        .appendingPathComponent("NestedCloudKitCodable-InMemory-\(UUID().uuidString)")

    /// Creates an empty database holding only the default zone.
    ///
    /// - Parameters:
    ///   - maximumItemsPerRequest: The per-request limit; 400 by default, as CloudKit's framework.
    ///   - latency: How long each request waits before it is answered.
    ///   - clock: The time stamped on saved records.
    public init(
        maximumItemsPerRequest: Int = 400,
        latency: Duration = .zero,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.latency = latency
        self.clock = clock
    }

    deinit {
        try? FileManager.default.removeItem(at: assetCopies)
    }

    // MARK: Test controls

    /// Sets the wait before each request is answered.
    public func setLatency(_ latency: Duration) {
        self.latency = latency
    }

    /// Makes the request with the given number fail with `error`; requests are numbered from 1, in the order they
    /// arrive (``Statistics/requests`` is the number of the latest).
    public func failRequest(number: Int, with error: CloudDatabaseError) {
        faults[number] = error
    }

    /// Makes the next request fail with `error`.
    public func failNextRequest(with error: CloudDatabaseError) {
        faults[statistics.requests + 1] = error
    }

    /// Makes the next request throttle the client, as CloudKit does under load.
    public func throttleNextRequest(retryAfter: TimeInterval) {
        failNextRequest(with: .requestRateLimited(retryAfter: retryAfter))
    }

    /// Makes the next request fail as if the connection dropped.
    public func dropNextConnection() {
        failNextRequest(with: .networkFailure("the connection was lost"))
    }

    /// Makes the record with this ID fail with `error` the next time a request fetches, saves or deletes it; the
    /// other items of that request go on as usual (unless the request is atomic).
    public func failRecord(_ id: CloudRecord.ID, with error: CloudDatabaseError) {
        recordFaults[id] = error
    }

    /// Resets the counters.
    public func resetStatistics() {
        statistics = Statistics()
    }

    /// Every stored record, for tests that look at the whole state.
    public var allRecords: [CloudRecord] {
        storage.records.values.sorted {
            ($0.id.zoneID.zoneName, $0.id.recordName) < ($1.id.zoneID.zoneName, $1.id.recordName)
        }
    }

    // MARK: CloudDatabase

    /// Fetches records by ID; see ``CloudDatabase/records(for:desiredKeys:)``.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        try await beginRequest(counting: \.fetchRequests, items: ids.count)
        var results: CloudRecordResults = [:]
        for id in ids {
            if let fault = recordFaults.removeValue(forKey: id) {
                results[id] = .failure(fault)
            } else if let record = storage.records[id] {
                statistics.recordsFetched += 1
                results[id] = .success(record.keepingFields(desiredKeys))
            } else {
                results[id] = .failure(storage.zones.contains(id.zoneID) ? .unknownItem(id) : .zoneNotFound(id.zoneID))
            }
        }
        return results
    }

    /// Saves and deletes records under CloudKit's rules; see
    /// ``CloudDatabase/modifyRecords(saving:deleting:savePolicy:atomically:)``.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> CloudModifyResults {
        try await beginRequest(counting: \.modifyRequests, items: recordsToSave.count + recordIDsToDelete.count)
        // An injected record fault acts like a server-side failure of that item, atomic rollbacks included.
        var injected: [CloudRecord.ID: CloudDatabaseError] = [:]
        for id in recordsToSave.map(\.id) + recordIDsToDelete {
            if let fault = recordFaults.removeValue(forKey: id) { injected[id] = fault }
        }
        // CloudKit keeps a copy of an asset's file from the moment of the save, and refuses a file it can't read.
        let files = AssetFileContents(readingFilesOf: recordsToSave)
        injected.merge(files.failures) { injectedFault, _ in injectedFault }
        let copies: [CloudRecord]
        do {
            copies = try recordsToSave.map { try files.storingCopies(of: $0, in: assetCopies) }
        } catch {
            throw CloudDatabaseError.internalError(
                "the in-memory database couldn't copy an asset's file into \(assetCopies.path): \(error)")
        }
        let plan = try CloudModificationPlan(
            saving: copies, deleting: recordIDsToDelete, savePolicy: savePolicy,
            atomically: atomically, store: storage, failures: injected, now: clock(), makeChangeTag: nextChangeTag
        )
        storage.apply(writing: plan.recordsToWrite, removing: plan.recordIDsToRemove)
        let saveResults = plan.saveResults
        let deleteResults = plan.deleteResults
        statistics.recordsSaved += saveResults.values.count { !$0.failed }
        statistics.recordsDeleted += deleteResults.values.count { !$0.failed }
        return (saveResults, deleteResults)
    }

    /// Finds matching records a page at a time; see ``CloudDatabase/records(matching:inZoneWith:desiredKeys:resultsLimit:)``.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await page(
            from: CloudQuery.Cursor(query: query, zoneID: zoneID, position: "0"), desiredKeys: desiredKeys,
            resultsLimit: resultsLimit)
    }

    /// Continues a query; see ``CloudDatabase/records(continuingMatchFrom:desiredKeys:resultsLimit:)``.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await page(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Creates and deletes zones; deleting a zone deletes its records.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await beginRequest(counting: \.zoneRequests, items: zonesToSave.count + zonesToDelete.count)
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for zone in zonesToSave {
            if let refusal = CloudModificationPlan.refusal(creating: zone) {
                saveResults[zone] = .failure(refusal)
                continue
            }
            storage.zones.insert(zone)
            saveResults[zone] = .success(())
        }
        for zone in zonesToDelete {
            if zone == .default {
                deleteResults[zone] = .failure(.invalidArguments("the default zone can't be deleted"))
            } else if storage.zones.contains(zone) {
                storage.removeZone(zone)
                deleteResults[zone] = .success(())
            } else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
            }
        }
        return (saveResults, deleteResults)
    }

    /// Every zone, the default zone first among equals, sorted by name.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await beginRequest(counting: \.zoneRequests, items: 0)
        return storage.zones.sorted { ($0.zoneName, $0.ownerName) < ($1.zoneName, $1.ownerName) }
    }

    // MARK: Requests

    /// Counts the request, waits out the latency, and fails it if a fault or the limit says so.
    private func beginRequest(counting counter: WritableKeyPath<Statistics, Int>, items: Int) async throws {
        statistics.requests += 1
        statistics[keyPath: counter] += 1
        let number = statistics.requests
        if latency > .zero { try await Task.sleep(for: latency) }
        if let fault = faults.removeValue(forKey: number) { throw fault }
        guard items <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: items)
        }
    }

    private func page(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await beginRequest(counting: \.queryRequests, items: 0)
        guard resultsLimit >= 0 else { throw CloudDatabaseError.invalidArguments("resultsLimit can't be negative") }
        guard storage.zones.contains(cursor.zoneID) else { throw CloudDatabaseError.zoneNotFound(cursor.zoneID) }
        guard let start = Int(cursor.position), start >= 0 else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by this database")
        }
        let query = cursor.query
        let matches = storage.records.values
            .filter {
                $0.id.zoneID == cursor.zoneID && $0.recordType == query.recordType && query.predicate.matches($0)
            }
            .sorted(by: query.sortsBefore)
        let limit =
            resultsLimit == CloudQuery.maximumResults
            ? maximumItemsPerRequest : min(resultsLimit, maximumItemsPerRequest)
        let page = matches.dropFirst(start).prefix(limit)
        statistics.recordsFetched += page.count
        let end = start + page.count
        let next =
            end < matches.count ? CloudQuery.Cursor(query: query, zoneID: cursor.zoneID, position: String(end)) : nil
        return (page.map { ($0.id, .success($0.keepingFields(desiredKeys))) }, next)
    }

    private func nextChangeTag() -> String {
        changeTagCounter += 1
        return String(changeTagCounter, radix: 36)
    }
}

extension InMemoryCloudDatabase {
    /// What an ``InMemoryCloudDatabase`` has been asked.
    public struct Statistics: Sendable, Hashable {
        /// Every request, of any kind.
        public var requests = 0
        /// Requests that fetched records by ID.
        public var fetchRequests = 0
        /// Requests that saved or deleted records.
        public var modifyRequests = 0
        /// Query requests, first pages and continuations.
        public var queryRequests = 0
        /// Requests that listed, created or deleted zones.
        public var zoneRequests = 0
        /// Records returned by fetches and queries.
        public var recordsFetched = 0
        /// Records saved.
        public var recordsSaved = 0
        /// Records deleted at the caller's request (cascades not counted).
        public var recordsDeleted = 0

        /// Statistics with every count at zero.
        public init() {}
    }
}

extension Result {
    var failed: Bool {
        if case .failure = self { true } else { false }
    }
}
