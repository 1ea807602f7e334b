#if canImport(CloudKit)
import CloudKit
import Foundation

/// A `CKDatabase` as a ``CloudDatabase``: CloudKit itself behind the portable protocol, through its async API.
///
/// ```swift
/// let database = CloudKitDatabase(CKContainer.default().privateCloudDatabase)
/// let school = try await CKRecordDecoder().decode(School.self, from: record, referenceDatabase: database)
/// ```
///
/// Records and errors are translated both ways; CloudKit applies its own rules. `.validate` references become
/// `.none`, as the framework has no such action.
public struct CloudKitDatabase: CloudDatabase {
    /// The CloudKit database requests go to.
    public let database: CKDatabase

    /// The most items one request may hold: CloudKit's framework takes about 400.
    public let maximumItemsPerRequest: Int

    /// Wraps a CloudKit database.
    public init(_ database: CKDatabase, maximumItemsPerRequest: Int = 400) {
        self.database = database
        self.maximumItemsPerRequest = maximumItemsPerRequest
    }

    /// Fetches records by ID through `CKDatabase.records(for:desiredKeys:)`.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] {
        let results = try await request { try await database.records(for: ids.map(\.ckRecordID), desiredKeys: desiredKeys) }
        var converted: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        for (ckID, result) in results {
            let id = CloudRecord.ID(ckID)
            converted[id] = Self.convert(result, id: id)
        }
        return converted
    }

    /// Saves and deletes records through `CKDatabase.modifyRecords(saving:deleting:savePolicy:atomically:)`.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> (
        saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>],
        deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>]
    ) {
        let ckRecords = try recordsToSave.map { try $0.ckRecord() }
        let policy: CKModifyRecordsOperation.RecordSavePolicy = switch savePolicy {
        case .ifServerRecordUnchanged: .ifServerRecordUnchanged
        case .changedKeys: .changedKeys
        case .allKeys: .allKeys
        }
        let results = try await request {
            try await database.modifyRecords(saving: ckRecords, deleting: recordIDsToDelete.map(\.ckRecordID),
                                             savePolicy: policy, atomically: atomically)
        }
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        for (ckID, result) in results.saveResults {
            let id = CloudRecord.ID(ckID)
            saveResults[id] = Self.convert(result, id: id)
        }
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        for (ckID, result) in results.deleteResults {
            let id = CloudRecord.ID(ckID)
            deleteResults[id] = result.mapError { CloudDatabaseError($0, recordID: id) }
        }
        return (saveResults, deleteResults)
    }

    /// Runs a query through `CKDatabase.records(matching:inZoneWith:desiredKeys:resultsLimit:)`.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> (matchResults: [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)], queryCursor: CloudQuery.Cursor?) {
        let ckQuery = CKQuery(recordType: query.recordType, predicate: try Self.predicate(query.predicate))
        if !query.sortDescriptors.isEmpty {
            ckQuery.sortDescriptors = query.sortDescriptors.map { QueryFormat.sortDescriptor(field: $0.field, ascending: $0.ascending) }
        }
        let page = try await request {
            try await database.records(matching: ckQuery, inZoneWith: zoneID.ckZoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
        return (Self.convert(page.matchResults), try page.queryCursor.map { try Self.cursor($0, query: query, zoneID: zoneID) })
    }

    /// Continues a query through `CKDatabase.records(continuingMatchFrom:desiredKeys:resultsLimit:)`.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> (matchResults: [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)], queryCursor: CloudQuery.Cursor?) {
        let ckCursor = try Self.ckCursor(cursor)
        let page = try await request {
            try await database.records(continuingMatchFrom: ckCursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
        return (Self.convert(page.matchResults), try page.queryCursor.map { try Self.cursor($0, query: cursor.query, zoneID: cursor.zoneID) })
    }

    /// Creates and deletes zones through `CKDatabase.modifyRecordZones(saving:deleting:)`.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> (
        saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>],
        deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>]
    ) {
        let results = try await request {
            try await database.modifyRecordZones(saving: zonesToSave.map { CKRecordZone(zoneID: $0.ckZoneID) },
                                                 deleting: zonesToDelete.map(\.ckZoneID))
        }
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for (ckID, result) in results.saveResults {
            let zone = CloudRecord.ZoneID(ckID)
            saveResults[zone] = result.map { _ in () }.mapError { CloudDatabaseError($0, recordID: CloudRecord.ID(recordName: "", zoneID: zone)) }
        }
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for (ckID, result) in results.deleteResults {
            let zone = CloudRecord.ZoneID(ckID)
            deleteResults[zone] = result.mapError { CloudDatabaseError($0, recordID: CloudRecord.ID(recordName: "", zoneID: zone)) }
        }
        return (saveResults, deleteResults)
    }

    /// Every zone, through `CKDatabase.allRecordZones()`.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await request { try await database.allRecordZones() }.map { CloudRecord.ZoneID($0.zoneID) }
    }

    // MARK: Translation

    /// Runs a CloudKit call, turning its errors into ``CloudDatabaseError``.
    private func request<T>(_ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as CKError {
            throw CloudDatabaseError(error)
        }
    }

    private static func convert(_ result: Result<CKRecord, any Error>, id: CloudRecord.ID) -> Result<CloudRecord, CloudDatabaseError> {
        switch result {
        case .success(let record):
            do {
                return .success(try CloudRecord(record))
            } catch {
                return .failure(.internalError("\(error)"))
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

    /// The `NSPredicate` of a query predicate: field equality (list fields by membership), references, and.
    private static func predicate(_ predicate: CloudQuery.Predicate) throws -> NSPredicate {
        switch predicate {
        case .all:
            return NSPredicate(value: true)
        case .equals(let field, let value):
            if value.kind.isList {
                throw CloudDatabaseError.invalidArguments("a query compares a field with one value, not a list")
            }
            return QueryFormat.predicate("%K == %@", [field, try value.ckRecordValue()])
        case .references(let target, let field):
            let reference = CKRecord.Reference(recordID: target.ckRecordID, action: .none)
            return QueryFormat.predicate("%K CONTAINS %@ OR %K == %@", [field, reference, field, reference])
        case .and(let predicates):
            return NSCompoundPredicate(andPredicateWithSubpredicates: try predicates.map(Self.predicate))
        }
    }

    /// A CloudKit cursor, carried in the portable cursor as its secure archive.
    private static func cursor(_ cursor: CKQueryOperation.Cursor, query: CloudQuery, zoneID: CloudRecord.ZoneID) throws -> CloudQuery.Cursor {
        let data = try NSKeyedArchiver.archivedData(withRootObject: cursor, requiringSecureCoding: true)
        return CloudQuery.Cursor(query: query, zoneID: zoneID, position: data.base64EncodedString())
    }

    private static func ckCursor(_ cursor: CloudQuery.Cursor) throws -> CKQueryOperation.Cursor {
        guard let data = Data(base64Encoded: cursor.position),
              let ckCursor = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKQueryOperation.Cursor.self, from: data) else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by a CloudKitDatabase")
        }
        return ckCursor
    }
}
#endif
