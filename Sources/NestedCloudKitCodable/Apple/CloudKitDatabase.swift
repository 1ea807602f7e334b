#if canImport(CloudKit)
import CloudKit
import Foundation

/// A `CKDatabase` as a ``CloudDatabase``: CloudKit itself behind the portable protocol, through its async API.
///
/// ```swift
/// let database = CloudKitDatabase(CKContainer.default().privateCloudDatabase, listFields: ["Person": ["clubs"]])
/// let school = try await CKRecordDecoder().decode(School.self, from: record, referenceDatabase: database)
/// ```
///
/// Records and errors are translated both ways; CloudKit applies its own rules. Where the framework differs from
/// the portable model, the adapter bridges it:
/// - `.validate` references become `.none`, as the framework has no such action.
/// - A record with a change tag but no CloudKit archive of its system fields (read from SQLite or CloudKit Web
///   Services, or whose ID or type changed) is saved under `ifServerRecordUnchanged` by fetching the server's
///   system fields first: the save applies when the change tags match, and is a
///   ``CloudDatabaseError/serverRecordChanged(server:client:ancestor:)`` conflict when they don't, as on every
///   backend; a record that no longer exists is ``CloudDatabaseError/unknownItem(_:)``.
/// - Asset bytes held in memory are written to temporary files for `CKAsset`, and deleted when the request ends,
///   whether it succeeded or not. Saved records keep their in-memory assets.
/// - Fields marked encrypted go to `CKRecord.encryptedValues`; references and assets can't be encrypted, and
///   the public database encrypts nothing: such records fail with ``CloudDatabaseError/invalidArguments(_:)``.
/// - Queries: CloudKit runs `==` on a single field and `CONTAINS` on a list, and accepts no `OR`, so it must be
///   told which fields are lists: see ``listFields``.
/// - Errors: every failure of a whole request is a ``CloudDatabaseError`` naming the request's zone; cancelling
///   the task ends the request with `CancellationError`, as Swift's own APIs do.
/// - Changes since a token: tokens are CloudKit's `CKServerChangeToken`s, archived; the changed records of a page
///   come in a fixed order (CloudKit hands them out by ID, in no order); see
///   ``recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)``.
/// - The user and the account status come from the database's container: see ``container``.
public struct CloudKitDatabase: CloudDatabase {
    /// The CloudKit database requests go to.
    public let database: CKDatabase

    /// The container that ``userRecordName()`` and ``accountStatus()`` ask, or `nil` for `CKContainer.default()`.
    ///
    /// CloudKit doesn't say which container a `CKDatabase` belongs to, so pass the one the database came from when
    /// it isn't the app's default container. `nil` asks `CKContainer.default()` only when one of those two is
    /// called: the default container exists only for an app entitled to it, and a database of another container
    /// works without it.
    public let container: CKContainer?

    /// The most items one request may hold: CloudKit's framework takes about 400.
    public let maximumItemsPerRequest: Int

    /// The fields that hold lists, by record type, for queries.
    ///
    /// CloudKit matches an element of a list field with `CONTAINS` and a single field with `==`, and a query can't
    /// say "either" (`CKQuery` accepts only `AND`). A portable predicate doesn't say which a field is, so
    /// ``CloudQuery/Predicate/references(_:in:)`` and ``CloudQuery/Predicate/equals(field:value:)`` use
    /// `CONTAINS` for the fields named here and `==` for every other. Name every list field you query, for
    /// example a model's array of nested `CKEncodable` values (a reference list): `["Person": ["clubs"]]`.
    public let listFields: [String: Set<String>]

    /// Wraps a CloudKit database.
    ///
    /// ```swift
    /// let container = CKContainer(identifier: "iCloud.com.example.app")
    /// let database = CloudKitDatabase(container.privateCloudDatabase, container: container)
    /// ```
    ///
    /// - Parameters:
    ///   - database: The CloudKit database.
    ///   - container: The container the database belongs to, for the user and the account status; `nil` (the
    ///     default) for `CKContainer.default()`, asked only when needed (see ``container``).
    ///   - maximumItemsPerRequest: The most items a request may hold; larger batches are split by the callers
    ///     that split (``CloudDatabase/fetchRecords(_:desiredKeys:)``, ``CloudDatabase/saveRecords(_:savePolicy:)``).
    ///   - listFields: The fields that hold lists, by record type, for queries (see ``listFields``).
    public init(
        _ database: CKDatabase, container: CKContainer? = nil, maximumItemsPerRequest: Int = 400,
        listFields: [String: Set<String>] = [:]
    ) {
        self.database = database
        self.container = container
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.listFields = listFields
    }

    /// Fetches records by ID through `CKDatabase.records(for:desiredKeys:)`.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        let results = try await request(zoneID: ids.first?.zoneID, items: ids.count) {
            try await database.records(for: ids.map(\.ckRecordID), desiredKeys: desiredKeys)
        }
        var converted: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        for (ckID, result) in results {
            let id = CloudRecord.ID(ckID)
            converted[id] = Self.convert(result, id: id)
        }
        converted.failLeftOut(ids, by: "CloudKit's answer to the fetch")
        return converted
    }

    /// Saves and deletes records through `CKDatabase.modifyRecords(saving:deleting:savePolicy:atomically:)`.
    ///
    /// Records CloudKit would refuse fail before the request, each in its own result; in an atomic request they
    /// fail the other items of their custom zone with ``CloudDatabaseError/batchRequestFailed(_:)``, as CloudKit
    /// would. Temporary asset files are deleted when the request ends.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> CloudModifyResults {
        if let refusal = CloudRequestRules.refusal(saving: recordsToSave, deleting: recordIDsToDelete) {
            throw refusal
        }
        let assetFiles = TemporaryAssetFiles()
        defer { assetFiles.removeAll() }
        let zone = recordsToSave.first?.id.zoneID ?? recordIDsToDelete.first?.zoneID
        let items = recordsToSave.count + recordIDsToDelete.count

        var (ckRecords, refusals) = try await prepareRecords(
            for: recordsToSave, savePolicy: savePolicy, zoneID: zone, assetFiles: assetFiles)
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        for (id, refusal) in refusals { saveResults[id] = .failure(refusal) }
        var deletions = recordIDsToDelete
        if atomically {
            // Nothing of an atomic request applies in a custom zone once an item of it fails.
            let failures = AtomicZoneFailures(failed: refusals.keys)
            failures.fail(&ckRecords, id: { CloudRecord.ID($0.recordID) }, results: &saveResults)
            failures.fail(&deletions, id: { $0 }, results: &deleteResults)
        }
        guard !ckRecords.isEmpty || !deletions.isEmpty else { return (saveResults, deleteResults) }

        let policy: CKModifyRecordsOperation.RecordSavePolicy =
            switch savePolicy {
            case .ifServerRecordUnchanged: .ifServerRecordUnchanged
            case .changedKeys: .changedKeys
            case .allKeys: .allKeys
            }
        let results = try await request(zoneID: zone, items: items) {
            try await database.modifyRecords(
                saving: ckRecords, deleting: deletions.map(\.ckRecordID),
                savePolicy: policy, atomically: atomically)
        }
        convert(results, clients: recordsToSave, saveResults: &saveResults, deleteResults: &deleteResults)
        saveResults.failLeftOut(recordsToSave.lazy.map(\.id), by: "CloudKit's answer to the save")
        deleteResults.failLeftOut(recordIDsToDelete, by: "CloudKit's answer to the delete")
        return (saveResults, deleteResults)
    }

    /// The records to send, as `CKRecord`s on the system fields their save policy needs, and the records refused
    /// before anything is sent: what CloudKit would refuse in this database, and what can't become a `CKRecord`.
    private func prepareRecords(
        for recordsToSave: [CloudRecord], savePolicy: CloudRecordSavePolicy, zoneID: CloudRecord.ZoneID?,
        assetFiles: TemporaryAssetFiles
    ) async throws -> (records: [CKRecord], refusals: [CloudRecord.ID: CloudDatabaseError]) {
        var refusals: [CloudRecord.ID: CloudDatabaseError] = [:]
        for record in recordsToSave {
            if let refusal = refusal(saving: record) { refusals[record.id] = refusal }
        }
        let bases = try await systemFieldBases(
            of: recordsToSave.filter { refusals[$0.id] == nil }, savePolicy: savePolicy,
            zoneID: zoneID, refusals: &refusals)
        var ckRecords: [CKRecord] = []
        var shares: [CloudRecord] = []
        for record in recordsToSave where refusals[record.id] == nil {
            // A share is a CKShare, made once the roots it may be made from are records.
            if record.recordType == CloudShare.recordType {
                shares.append(record)
                continue
            }
            do {
                ckRecords.append(try record.ckRecord(onto: bases[record.id] ?? nil, assetFiles: assetFiles))
            } catch {
                if error.code == .temporaryFileNotWritable {
                    throw CloudDatabaseError.internalError(error.description)
                }
                refusals[record.id] = .invalidArguments(error.description)
            }
        }
        if !shares.isEmpty {
            let roots = Dictionary(ckRecords.map { (CloudRecord.ID($0.recordID), $0) }) { first, _ in first }
            ckRecords += try await ckShares(
                shares, bases: bases, roots: roots, assetFiles: assetFiles, refusals: &refusals)
        }
        return (ckRecords, refusals)
    }

    /// CloudKit's answer in the portable model: saved records keep the local assets the caller gave, errors carry
    /// the caller's record.
    private func convert(
        _ results: (
            saveResults: [CKRecord.ID: Result<CKRecord, any Error>],
            deleteResults: [CKRecord.ID: Result<Void, any Error>]
        ),
        clients recordsToSave: [CloudRecord],
        saveResults: inout [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>],
        deleteResults: inout [CloudRecord.ID: Result<Void, CloudDatabaseError>]
    ) {
        var clients: [CloudRecord.ID: CloudRecord] = [:]
        for record in recordsToSave { clients[record.id] = record }
        for (ckID, result) in results.saveResults {
            let id = CloudRecord.ID(ckID)
            saveResults[id] =
                switch result {
                case .success(let saved):
                    Self.convert(.success(saved), id: id).map { $0.keepingLocalAssets(of: clients[id]) }
                case .failure(let error):
                    .failure(
                        CloudDatabaseError(
                            error, recordID: id, zoneID: id.zoneID, requestedItems: nil, client: clients[id]))
                }
        }
        for (ckID, result) in results.deleteResults {
            let id = CloudRecord.ID(ckID)
            deleteResults[id] = result.mapError { CloudDatabaseError($0, recordID: id) }
        }
    }

    /// Why CloudKit would refuse to save the record in this database, or `nil`: the public database encrypts
    /// nothing.
    private func refusal(saving record: CloudRecord) -> CloudDatabaseError? {
        // CloudKit's rules for parents and shares, in the words every backend uses (a share both public and with
        // invited participants, say, which CloudKit's framework would meet with an exception).
        if let refusal = ShareRules.refusal(saving: record) { return refusal }
        guard database.databaseScope == .public, let field = record.encryptedFieldNames.sorted().first else {
            return nil
        }
        return .invalidArguments(
            "\(record.id)'s field \(field) is marked encrypted, but CloudKit encrypts no fields in the public database: store it unencrypted"
        )
    }

    /// The CloudKit record each record's fields are written onto: CloudKit's archive of its system fields, the
    /// server's system fields for a change tag without that archive, or `nil` for a new `CKRecord`. Records that
    /// can't be saved get a refusal instead.
    ///
    /// Under `ifServerRecordUnchanged`, a change tag without an archive is checked against the server's record
    /// (fetched without its fields): a match saves onto the server's system fields; a mismatch saves a new
    /// `CKRecord`, for which CloudKit itself reports the conflict with the server's record; a record that no longer
    /// exists is `unknownItem`, and one of another type `invalidArguments`, as on every backend. The other
    /// policies don't compare change tags, so such a record is saved as a new `CKRecord`.
    private func systemFieldBases(
        of records: [CloudRecord], savePolicy: CloudRecordSavePolicy, zoneID: CloudRecord.ZoneID?,
        refusals: inout [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> [CloudRecord.ID: CKRecord?] {
        var bases: [CloudRecord.ID: CKRecord?] = [:]
        var unchecked: [CloudRecord] = []
        for record in records {
            if let restored = record.restoredFromArchive() {
                bases[record.id] = restored
            } else if record.systemFields?.changeTag != nil, savePolicy == .ifServerRecordUnchanged {
                unchecked.append(record)
            } else {
                bases[record.id] = .some(nil)
            }
        }
        guard !unchecked.isEmpty else { return bases }
        let servers = try await request(zoneID: zoneID, items: unchecked.count) {
            try await database.records(for: unchecked.map(\.id.ckRecordID), desiredKeys: [])
        }
        for record in unchecked {
            switch servers[record.id.ckRecordID] {
            case .success(let server)? where server.recordType != record.recordType:
                refusals[record.id] = .invalidArguments(
                    "\(record.id) is a \(server.recordType) on the server and can't become a \(record.recordType)"
                )
            case .success(let server)? where server.recordChangeTag == record.systemFields?.changeTag:
                bases[record.id] = server
            case .success?:
                bases[record.id] = .some(nil)
            case .failure(let error)?:
                refusals[record.id] = CloudDatabaseError(error, recordID: record.id)
            case nil:
                refusals[record.id] = .internalError(
                    "CloudKit's answer to the fetch of \(record.id)'s system fields left it out")
            }
        }
        return bases
    }

    /// Runs a query through `CKDatabase.records(matching:inZoneWith:desiredKeys:resultsLimit:)`.
    ///
    /// System fields are CloudKit's own keys (``CloudQuery/SystemField/fieldName``): `creationDate` and
    /// `modificationDate` compare with dates, `recordID` with the record ID of a name in the query's zone; they sort
    /// the same way (`NSSortDescriptor(key: "modificationDate", ascending: true)`). CloudKit runs these only where
    /// the schema marks the field queryable (or sortable), as for any field.
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a predicate CloudKit can't run: a comparison with
    ///   a list or an asset, an order (`<`, `>`, ...) on a reference, bytes or a location, a list field compared
    ///   other than by membership, a system field compared with a value of another type.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        let ckQuery = try ckQuery(query, zoneID: zoneID)
        let page = try await request(zoneID: zoneID, items: nil) {
            try await database.records(
                matching: ckQuery, inZoneWith: zoneID.ckZoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
        return (
            Self.convert(page.matchResults),
            try page.queryCursor.map { try Self.cursor($0, query: query, zoneID: zoneID) }
        )
    }

    /// The CloudKit query of a portable query run in a zone (a comparison with the record name compares record IDs,
    /// which name their zone).
    func ckQuery(_ query: CloudQuery, zoneID: CloudRecord.ZoneID) throws(CloudDatabaseError) -> CKQuery {
        let comparisons = try QueryComparison.comparisons(
            of: query.predicate, listFields: listFields[query.recordType] ?? [], zoneID: zoneID)
        let ckQuery = CKQuery(recordType: query.recordType, predicate: QueryFormat.predicate(comparisons))
        if !query.sortDescriptors.isEmpty {
            ckQuery.sortDescriptors = query.sortDescriptors.map {
                QueryFormat.sortDescriptor(field: $0.field, ascending: $0.ascending)
            }
        }
        return ckQuery
    }

    /// Continues a query through `CKDatabase.records(continuingMatchFrom:desiredKeys:resultsLimit:)`.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        let ckCursor = try Self.ckCursor(cursor)
        let page = try await request(zoneID: cursor.zoneID, items: nil) {
            try await database.records(
                continuingMatchFrom: ckCursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
        return (
            Self.convert(page.matchResults),
            try page.queryCursor.map { try Self.cursor($0, query: cursor.query, zoneID: cursor.zoneID) }
        )
    }

    /// Creates and deletes zones through `CKDatabase.modifyRecordZones(saving:deleting:)`.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        let results = try await request(
            zoneID: (zonesToSave + zonesToDelete).first, items: zonesToSave.count + zonesToDelete.count
        ) {
            try await database.modifyRecordZones(
                saving: zonesToSave.map { CKRecordZone(zoneID: $0.ckZoneID) },
                deleting: zonesToDelete.map(\.ckZoneID))
        }
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for (ckID, result) in results.saveResults {
            let zone = CloudRecord.ZoneID(ckID)
            saveResults[zone] = result.map { _ in () }.mapError { CloudDatabaseError($0, zoneID: zone) }
        }
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for (ckID, result) in results.deleteResults {
            let zone = CloudRecord.ZoneID(ckID)
            deleteResults[zone] = result.mapError { CloudDatabaseError($0, zoneID: zone) }
        }
        return (saveResults, deleteResults)
    }

    /// Every zone, through `CKDatabase.allRecordZones()`.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await request(zoneID: nil, items: nil) { try await database.allRecordZones() }.map {
            CloudRecord.ZoneID($0.zoneID)
        }
    }

    // MARK: Translation

    /// Runs a CloudKit call, turning whatever it throws into a ``CloudDatabaseError`` about the request's zone,
    /// except that a cancelled task's request ends with `CancellationError`.
    ///
    /// - Parameters:
    ///   - zoneID: The request's zone (its first, for a request across zones), which errors about a zone name.
    ///   - items: The request's item count, for `limitExceeded`.
    func request<T>(zoneID: CloudRecord.ZoneID?, items: Int?, _ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch {
            throw Self.requestError(error, zoneID: zoneID, items: items)
        }
    }

    /// The error a failed request throws: `CancellationError` when the task was cancelled (CloudKit reports the
    /// cancelled operation as `operationCancelled`), a ``CloudDatabaseError`` otherwise.
    static func requestError(_ error: any Error, zoneID: CloudRecord.ZoneID?, items: Int?) -> any Error {
        if error is CancellationError { return error }
        if Task.isCancelled, (error as? CKError).map({ $0.code == .operationCancelled }) ?? true {
            return CancellationError()
        }
        return CloudDatabaseError(error, recordID: nil, zoneID: zoneID, requestedItems: items, client: nil)
    }

    static func convert(_ result: Result<CKRecord, any Error>, id: CloudRecord.ID) -> Result<
        CloudRecord, CloudDatabaseError
    > {
        switch result {
        case .success(let record):
            do {
                return .success(try CloudRecord(record))
            } catch {
                return .failure(.internalError("CloudKit's record \(id) can't be read: \(error)"))
            }
        case .failure(let error):
            return .failure(CloudDatabaseError(error, recordID: id))
        }
    }

    private static func convert(
        _ results: [(CKRecord.ID, Result<CKRecord, any Error>)]
    ) -> [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)] {
        results.map { ckID, result in
            let id = CloudRecord.ID(ckID)
            return (id, convert(result, id: id))
        }
    }

    /// A CloudKit cursor, carried in the portable cursor as its secure archive.
    private static func cursor(_ cursor: CKQueryOperation.Cursor, query: CloudQuery, zoneID: CloudRecord.ZoneID)
        throws(CloudDatabaseError) -> CloudQuery.Cursor
    {
        do {
            let data = try NSKeyedArchiver.archivedData(withRootObject: cursor, requiringSecureCoding: true)
            return CloudQuery.Cursor(query: query, zoneID: zoneID, position: data.base64EncodedString())
        } catch {
            throw .internalError("CloudKit's query cursor can't be archived (\(error)): query again from the start")
        }
    }

    private static func ckCursor(_ cursor: CloudQuery.Cursor) throws(CloudDatabaseError) -> CKQueryOperation.Cursor {
        guard let data = Data(base64Encoded: cursor.position),
            let ckCursor = try? NSKeyedUnarchiver.unarchivedObject(ofClass: CKQueryOperation.Cursor.self, from: data)
        else {
            throw .invalidArguments("the cursor wasn't made by a CloudKitDatabase: query again from the start")
        }
        return ckCursor
    }
}

extension CloudRecord {
    /// The record CloudKit saved, with the in-memory bytes or local files of the client's assets: the temporary
    /// files the save read are deleted once it is over, and CloudKit's own copies may go at any time.
    func keepingLocalAssets(of client: CloudRecord?) -> CloudRecord {
        guard let client else { return self }
        var merged = self
        for (name, value) in fields {
            switch (value, client.fields[name]) {
            case (.asset, .asset(let local)?) where local.data != nil || local.fileURL != nil:
                merged.fields[name] = .asset(local)
            case (.assetList(let saved), .assetList(let local)?) where saved.count == local.count:
                merged.fields[name] = .assetList(
                    zip(saved, local).map { $1.data != nil || $1.fileURL != nil ? $1 : $0 })
            default:
                break
            }
        }
        return merged
    }
}
#endif
