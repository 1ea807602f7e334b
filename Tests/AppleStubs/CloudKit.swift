// A stand-in for CloudKit on Linux: the documented Swift signatures of the symbols the Apple bridge uses, with
// simple behaviour, so the bridge type-checks against them and its conversions and database calls run here.
// Test-only; never shipped.
//
// What a caller outside this module can do is what Apple's SDK lets it do: a record's ID, type and system fields
// are read-only, a database comes from a container, an asset's file URL is read-only. The behaviour follows
// Apple's documentation where the bridge depends on it:
// - a database is a small server in memory: it keeps zones and records, gives each save a new change tag, and
//   fails as CloudKit does (a stale change tag is `serverRecordChanged`, whose server record has assets with a
//   `nil` file URL; a missing zone is `zoneNotFound`; more than 400 items is `limitExceeded`; a cancelled task's
//   request is `operationCancelled`; an `OR` compound predicate is `invalidArguments`, as `CKQuery` accepts only
//   `AND`; an encrypted reference or asset, or an encrypted field in the public database, is `invalidArguments`);
// - it reads an asset's file when it saves the record, and hands fetched assets out as files of its own;
// - `desiredKeys: []` fetches the system fields only;
// - it keeps a change log per custom zone and one of zones for the database: zone changes and database changes
//   answer what changed since a token (each record or zone once, in the order of its latest change), in pages;
//   the default zone keeps no history; tokens are `CKServerChangeToken`s that archive securely; every record saved
//   by one request gets the same modification date, as one server timestamp;
// - subscriptions are kept by ID; the account status and user record come from the container;
// - the controls under "Test controls" aren't CloudKit's API: only the checks call them, to make the server do what
//   CloudKit does on its own (expire tokens, delete a zone for a reason, fail one change, change the account).
// - a query returns every record of the type in the zone: Linux's Foundation can't build or evaluate the
//   predicate's comparisons, so the bridge's comparisons are checked before they become an `NSPredicate`.
import CoreLocation
import Foundation

public let CKCurrentUserDefaultName = "__defaultOwner__"
public let CKErrorRetryAfterKey = "CKRetryAfter"
public let CKPartialErrorsByItemIDKey = "CKPartialErrors"
public let CKRecordChangedErrorServerRecordKey = "ServerRecord"
public let CKRecordChangedErrorClientRecordKey = "ClientRecord"
public let CKRecordChangedErrorAncestorRecordKey = "AncestorRecord"
public let CKErrorUserDidResetEncryptedDataKey = "CKErrorUserDidResetEncryptedDataKey"

/// `CKRecordValue`, as Swift imports it.
public protocol __CKRecordObjCValue: AnyObject {}
public typealias CKRecordValue = __CKRecordObjCValue

extension NSString: __CKRecordObjCValue {}
extension NSNumber: __CKRecordObjCValue {}
extension NSDate: __CKRecordObjCValue {}
extension NSData: __CKRecordObjCValue {}
extension NSArray: __CKRecordObjCValue {}
extension CLLocation: __CKRecordObjCValue {}

open class CKRecordZone: NSObject, @unchecked Sendable {
    open class ID: NSObject, NSSecureCoding, @unchecked Sendable {
        public static let `default` = ID(zoneName: "_defaultZone", ownerName: CKCurrentUserDefaultName)
        public static var supportsSecureCoding: Bool { true }
        public private(set) var zoneName: String
        public private(set) var ownerName: String
        public init(zoneName: String = "_defaultZone", ownerName: String = CKCurrentUserDefaultName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }
        public required init?(coder: NSCoder) {
            guard let zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?,
                let ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String?
            else { return nil }
            self.zoneName = zoneName
            self.ownerName = ownerName
        }
        open func encode(with coder: NSCoder) {
            coder.encode(zoneName as NSString, forKey: "zoneName")
            coder.encode(ownerName as NSString, forKey: "ownerName")
        }
        // Record zone IDs are equal by value, as Apple's are.
        open override func isEqual(_ object: Any?) -> Bool {
            guard let other = object as? ID else { return false }
            return zoneName == other.zoneName && ownerName == other.ownerName
        }
        open override var hash: Int { zoneName.hashValue ^ ownerName.hashValue }
    }
    public let zoneID: ID
    public init(zoneID: ID) { self.zoneID = zoneID }
    public init(zoneName: String) { zoneID = ID(zoneName: zoneName) }
}

/// `CKRecordKeyValueSetting`: reading and writing a record's fields, plain (`CKRecord`) or encrypted
/// (`CKRecord.encryptedValues`).
public protocol CKRecordKeyValueSetting: NSObjectProtocol {
    func object(forKey key: CKRecord.FieldKey) -> (any __CKRecordObjCValue)?
    func setObject(_ object: (any __CKRecordObjCValue)?, forKey key: CKRecord.FieldKey)
    func allKeys() -> [CKRecord.FieldKey]
    func changedKeys() -> [CKRecord.FieldKey]
}

/// The fields of a record, with the keys changed since it was fetched or saved.
final class FieldStore: NSObject, CKRecordKeyValueSetting, @unchecked Sendable {
    var values: [String: any __CKRecordObjCValue] = [:]
    var changed: [String] = []
    func object(forKey key: String) -> (any __CKRecordObjCValue)? { values[key] }
    func setObject(_ object: (any __CKRecordObjCValue)?, forKey key: String) {
        values[key] = object
        if !changed.contains(key) { changed.append(key) }
    }
    func allKeys() -> [String] { values.keys.sorted() }
    func changedKeys() -> [String] { changed }
}

open class CKRecord: NSObject, CKRecordKeyValueSetting, @unchecked Sendable {
    public typealias RecordType = String
    public typealias FieldKey = String

    open class ID: NSObject, @unchecked Sendable {
        public private(set) var recordName: String
        public private(set) var zoneID: CKRecordZone.ID
        public init(recordName: String, zoneID: CKRecordZone.ID = .default) {
            self.recordName = recordName
            self.zoneID = zoneID
        }
        // Record IDs are equal by value, as Apple's are.
        open override func isEqual(_ object: Any?) -> Bool {
            guard let other = object as? ID else { return false }
            return recordName == other.recordName && zoneID.isEqual(other.zoneID)
        }
        open override var hash: Int { recordName.hashValue ^ zoneID.hash }
    }

    open class Reference: NSObject, __CKRecordObjCValue, @unchecked Sendable {
        public enum Action: UInt, Sendable {
            case none = 0
            case deleteSelf = 1
        }
        public let recordID: CKRecord.ID
        public let action: Action
        public init(recordID: CKRecord.ID, action: Action) {
            self.recordID = recordID
            self.action = action
        }
        public convenience init(record: CKRecord, action: Action) {
            self.init(recordID: record.recordID, action: action)
        }
    }

    public internal(set) var recordType: RecordType
    public internal(set) var recordID: ID
    public internal(set) var recordChangeTag: String?
    public internal(set) var creationDate: Date?
    public internal(set) var modificationDate: Date?
    public internal(set) var creatorUserRecordID: ID?
    public internal(set) var lastModifiedUserRecordID: ID?
    /// The record this one belongs to for sharing.
    public var parent: Reference?
    /// The share of a shared root, set by the server.
    public internal(set) var share: Reference?
    let plain = FieldStore()
    let encrypted = FieldStore()

    /// The record's encrypted fields.
    public var encryptedValues: any CKRecordKeyValueSetting & Sendable { encrypted }

    public init(recordType: RecordType, recordID: ID = ID(recordName: UUID().uuidString)) {
        self.recordType = recordType
        self.recordID = recordID
    }

    /// A record of the same class, ID and type, with the class's own state (a share's participants) and no fields.
    func blankCopy() -> CKRecord {
        let copy = CKRecord(recordType: recordType, recordID: recordID)
        copy.parent = parent
        copy.share = share
        return copy
    }

    public init?(coder: NSCoder) {
        guard let type = coder.decodeObject(of: NSString.self, forKey: "recordType") as String?,
            let name = coder.decodeObject(of: NSString.self, forKey: "recordName") as String?,
            let zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?,
            let ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String?
        else { return nil }
        recordType = type
        recordID = ID(recordName: name, zoneID: CKRecordZone.ID(zoneName: zoneName, ownerName: ownerName))
        // Linux's unarchiver reports a missing key as an error (Apple's returns nil): look before reading.
        if coder.containsValue(forKey: "recordChangeTag") {
            recordChangeTag = coder.decodeObject(of: NSString.self, forKey: "recordChangeTag") as String?
        }
        if coder.containsValue(forKey: "creationDate") {
            creationDate = coder.decodeObject(of: NSDate.self, forKey: "creationDate") as Date?
        }
        if coder.containsValue(forKey: "modificationDate") {
            modificationDate = coder.decodeObject(of: NSDate.self, forKey: "modificationDate") as Date?
        }
    }

    open func encodeSystemFields(with coder: NSCoder) {
        coder.encode(recordType as NSString, forKey: "recordType")
        coder.encode(recordID.recordName as NSString, forKey: "recordName")
        // Linux's NSKeyedArchiver can't archive nested classes: the zone goes in as its two names.
        coder.encode(recordID.zoneID.zoneName as NSString, forKey: "zoneName")
        coder.encode(recordID.zoneID.ownerName as NSString, forKey: "ownerName")
        if let recordChangeTag { coder.encode(recordChangeTag as NSString, forKey: "recordChangeTag") }
        if let creationDate { coder.encode(creationDate as NSDate, forKey: "creationDate") }
        if let modificationDate { coder.encode(modificationDate as NSDate, forKey: "modificationDate") }
    }

    open func object(forKey key: FieldKey) -> (any __CKRecordObjCValue)? { plain.object(forKey: key) }
    open func setObject(_ object: (any __CKRecordObjCValue)?, forKey key: FieldKey) {
        plain.setObject(object, forKey: key)
    }

    public subscript(key: FieldKey) -> (any __CKRecordObjCValue)? {
        get { object(forKey: key) }
        set { setObject(newValue, forKey: key) }
    }

    open func allKeys() -> [FieldKey] { plain.allKeys() }
    open func changedKeys() -> [FieldKey] { plain.changedKeys() + encrypted.changedKeys() }

    /// A copy with the same system fields and values and nothing changed, as the server hands records out.
    func serverCopy(desiredKeys: [FieldKey]? = nil, assets: (CKAsset) -> CKAsset) -> CKRecord {
        let copy = blankCopy()
        copy.recordChangeTag = recordChangeTag
        copy.creationDate = creationDate
        copy.modificationDate = modificationDate
        copy.creatorUserRecordID = creatorUserRecordID
        copy.lastModifiedUserRecordID = lastModifiedUserRecordID
        for (source, target) in [(plain, copy.plain), (encrypted, copy.encrypted)] {
            for (key, value) in source.values where desiredKeys?.contains(key) ?? true {
                target.values[key] = Self.mapAssets(value, assets)
            }
        }
        return copy
    }

    static func mapAssets(_ value: any __CKRecordObjCValue, _ transform: (CKAsset) -> CKAsset)
        -> any __CKRecordObjCValue
    {
        if let asset = value as? CKAsset { return transform(asset) }
        if let list = value as? NSArray, list.firstObject is CKAsset {
            return NSArray(array: list.map { ($0 as? CKAsset).map(transform) ?? $0 })
        }
        return value
    }
}

open class CKAsset: NSObject, __CKRecordObjCValue, @unchecked Sendable {
    public internal(set) var fileURL: URL?
    public init(fileURL: URL) { self.fileURL = fileURL }
    /// An asset the server didn't download, such as those of a conflict's server record.
    init(notDownloaded: ()) { fileURL = nil }
}

open class CKQuery: NSObject, @unchecked Sendable {
    public let recordType: CKRecord.RecordType
    public let predicate: NSPredicate
    open var sortDescriptors: [NSSortDescriptor]?
    public init(recordType: CKRecord.RecordType, predicate: NSPredicate) {
        self.recordType = recordType
        self.predicate = predicate
    }
}

open class CKOperation: NSObject, @unchecked Sendable {}
open class CKDatabaseOperation: CKOperation, @unchecked Sendable {}

open class CKQueryOperation: CKDatabaseOperation, @unchecked Sendable {
    public static let maximumResults: Int = 0
    open class Cursor: NSObject, NSSecureCoding, @unchecked Sendable {
        public static var supportsSecureCoding: Bool { true }
        override init() {}
        public required init?(coder: NSCoder) {}
        open func encode(with coder: NSCoder) {}
    }
}

/// Fetches the metadata of shares by URL; the way to have the root record with it (`shouldFetchRootRecord`).
open class CKFetchShareMetadataOperation: CKOperation, @unchecked Sendable {
    open var shareURLs: [URL]?
    open var shouldFetchRootRecord = false
    open var rootRecordDesiredKeys: [CKRecord.FieldKey]?
    open var perShareMetadataResultBlock: ((URL, Result<CKShare.Metadata, any Error>) -> Void)?
    open var fetchShareMetadataResultBlock: ((Result<Void, any Error>) -> Void)?
    public override init() {}
    public convenience init(shareURLs: [URL]) {
        self.init()
        self.shareURLs = shareURLs
    }
}

open class CKModifyRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    public enum RecordSavePolicy: Int, Sendable {
        case ifServerRecordUnchanged = 0
        case changedKeys = 1
        case allKeys = 2
    }
}

public struct CKError: Error, @unchecked Sendable {
    public enum Code: Int, Sendable {
        case internalError = 1, partialFailure = 2, networkUnavailable = 3, networkFailure = 4, badContainer = 5,
            serviceUnavailable = 6, requestRateLimited = 7, missingEntitlement = 8, notAuthenticated = 9,
            permissionFailure = 10, unknownItem = 11, invalidArguments = 12, resultsTruncated = 13,
            serverRecordChanged = 14, serverRejectedRequest = 15, assetFileNotFound = 16,
            assetFileModified = 17, incompatibleVersion = 18, constraintViolation = 19, operationCancelled = 20,
            changeTokenExpired = 21, batchRequestFailed = 22, zoneBusy = 23, badDatabase = 24,
            quotaExceeded = 25, zoneNotFound = 26, limitExceeded = 27, userDeletedZone = 28,
            tooManyParticipants = 29, alreadyShared = 30, referenceViolation = 31, managedAccountRestricted = 32,
            participantMayNeedVerification = 33, serverResponseLost = 34, assetNotAvailable = 35,
            accountTemporarilyUnavailable = 36
    }
    public let code: Code
    public let userInfo: [String: Any]
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }
    public var serverRecord: CKRecord? { userInfo[CKRecordChangedErrorServerRecordKey] as? CKRecord }
    public var clientRecord: CKRecord? { userInfo[CKRecordChangedErrorClientRecordKey] as? CKRecord }
    public var ancestorRecord: CKRecord? { userInfo[CKRecordChangedErrorAncestorRecordKey] as? CKRecord }
    public var retryAfterSeconds: Double? { userInfo[CKErrorRetryAfterKey] as? Double }
    public var partialErrorsByItemID: [AnyHashable: any Error]? {
        userInfo[CKPartialErrorsByItemIDKey] as? [AnyHashable: any Error]
    }
}

open class CKContainer: NSObject, @unchecked Sendable {
    public let containerIdentifier: String?
    public let privateCloudDatabase: CKDatabase
    public let publicCloudDatabase: CKDatabase
    public let sharedCloudDatabase: CKDatabase
    let account = StandInAccount()
    let sharing = StandInSharing()
    public init(identifier containerIdentifier: String) {
        self.containerIdentifier = containerIdentifier
        privateCloudDatabase = CKDatabase(scope: .private)
        publicCloudDatabase = CKDatabase(scope: .public)
        sharedCloudDatabase = CKDatabase(scope: .shared)
    }
    private static let standard = CKContainer(identifier: "iCloud.default")
    open class func `default`() -> CKContainer { standard }
}

open class CKDatabase: NSObject, @unchecked Sendable {
    public enum Scope: Int, Sendable { case `public` = 1, `private` = 2, shared = 3 }
    public let databaseScope: Scope

    // The server's state, behind a lock: every call takes it once, so calls in flight together don't interleave.
    private let lock = NSLock()
    private var zones: [CKRecordZone.ID] = [.default]
    private var stored: [CKRecord.ID: CKRecord] = [:]
    private var assetBytes: [URL: Data] = [:]
    private var nextTag = 0
    private var nextRequest = 0
    // The change logs: one per custom zone (a record saved, or deleted with its type), one of zones for the
    // database (a zone created or changed, or deleted with a reason). Positions count across all logs.
    private var sequence = 0
    private var zoneLogs: [CKRecordZone.ID: [(sequence: Int, recordID: CKRecord.ID, deletedType: String?)]] = [:]
    private var databaseLog: [(sequence: Int, zoneID: CKRecordZone.ID, deletion: DatabaseChange.Deletion.Reason?)] = []
    private var generation = 0
    private var userDeletedZones: [CKRecordZone.ID] = []
    private var failingChanges: Set<CKRecord.ID> = []
    private var subscriptions: [CKSubscription.ID: CKSubscription] = [:]
    private let staging = FileManager.default.temporaryDirectory.appendingPathComponent(
        "CloudKitStandIn-\(UUID().uuidString)")

    /// The most items one request takes, as the framework's documentation says ("about 400").
    static let itemLimit = 400

    init(scope: Scope) {
        databaseScope = scope
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func checkCancellation() throws {
        if Task.isCancelled { throw CKError(.operationCancelled) }
    }

    /// The record as the server hands it out: its assets are files of the server's own.
    private func handedOut(_ record: CKRecord, desiredKeys: [String]?) -> CKRecord {
        record.serverCopy(desiredKeys: desiredKeys) { asset in
            guard let source = asset.fileURL, let bytes = assetBytes[source] else { return CKAsset(notDownloaded: ()) }
            let file = staging.appendingPathComponent(UUID().uuidString)
            try? FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            guard (try? bytes.write(to: file)) != nil else { return CKAsset(notDownloaded: ()) }
            return CKAsset(fileURL: file)
        }
    }

    open func records(
        for ids: [CKRecord.ID], desiredKeys: [CKRecord.FieldKey]? = nil
    ) async throws -> [CKRecord.ID: Result<CKRecord, any Error>] {
        try checkCancellation()
        if ids.count > Self.itemLimit { throw CKError(.limitExceeded) }
        return locked {
            var results: [CKRecord.ID: Result<CKRecord, any Error>] = [:]
            for id in ids {
                if !zones.contains(id.zoneID) {
                    results[id] = .failure(CKError(.zoneNotFound))
                } else if let record = stored[id] {
                    results[id] = .success(handedOut(record, desiredKeys: desiredKeys))
                } else {
                    results[id] = .failure(CKError(.unknownItem))
                }
            }
            return results
        }
    }

    open func modifyRecords(
        saving recordsToSave: [CKRecord], deleting recordIDsToDelete: [CKRecord.ID],
        savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true
    ) async throws -> (
        saveResults: [CKRecord.ID: Result<CKRecord, any Error>], deleteResults: [CKRecord.ID: Result<Void, any Error>]
    ) {
        try checkCancellation()
        if recordsToSave.count + recordIDsToDelete.count > Self.itemLimit { throw CKError(.limitExceeded) }
        return locked {
            var saveResults: [CKRecord.ID: Result<CKRecord, any Error>] = [:]
            var deleteResults: [CKRecord.ID: Result<Void, any Error>] = [:]
            var writes: [CKRecord] = []
            var uploads: [URL: Data] = [:]
            for client in recordsToSave {
                switch save(client, savePolicy: savePolicy, uploads: &uploads) {
                case .success(let record): writes.append(record)
                case .failure(let error): saveResults[client.recordID] = .failure(error)
                }
            }
            var removals: [CKRecord.ID] = []
            for id in recordIDsToDelete {
                if !zones.contains(id.zoneID) {
                    deleteResults[id] = .failure(CKError(.zoneNotFound))
                } else if stored[id] == nil {
                    deleteResults[id] = .failure(CKError(.unknownItem))
                } else {
                    removals.append(id)
                }
            }
            if atomically, !saveResults.isEmpty || !deleteResults.isEmpty {
                // An atomic request applies nothing once an item fails (custom zones only, as CloudKit's default
                // zone has no atomic changes).
                let failedZones = Set(saveResults.keys.map(\.zoneID) + deleteResults.keys.map(\.zoneID)).filter {
                    !$0.isEqual(CKRecordZone.ID.default)
                }
                for record in writes where failedZones.contains(record.recordID.zoneID) {
                    saveResults[record.recordID] = .failure(CKError(.batchRequestFailed))
                }
                for id in removals where failedZones.contains(id.zoneID) {
                    deleteResults[id] = .failure(CKError(.batchRequestFailed))
                }
                writes.removeAll { failedZones.contains($0.recordID.zoneID) }
                removals.removeAll { failedZones.contains($0.zoneID) }
            }
            nextRequest += 1
            let requestDate = Date(timeIntervalSince1970: TimeInterval(100_000 + nextRequest))
            for record in writes {
                nextTag += 1
                record.recordChangeTag = "tag-\(nextTag)"
                record.modificationDate = requestDate
                if stored[record.recordID] == nil { record.creationDate = requestDate }
                stored[record.recordID] = record
                log(record.recordID, deletedType: nil)
                saveResults[record.recordID] = .success(handedOut(record, desiredKeys: nil))
            }
            assetBytes.merge(uploads) { _, new in new }
            for id in removals {
                log(id, deletedType: stored[id]?.recordType ?? "")
                stored[id] = nil
                deleteResults[id] = .success(())
            }
            return (saveResults, deleteResults)
        }
    }

    /// The record the server stores for a save, or the error CloudKit would report.
    private func save(
        _ client: CKRecord, savePolicy: CKModifyRecordsOperation.RecordSavePolicy, uploads: inout [URL: Data]
    ) -> Result<CKRecord, CKError> {
        guard zones.contains(client.recordID.zoneID) else { return .failure(CKError(.zoneNotFound)) }
        for value in client.encrypted.values.values {
            if value is CKAsset || value is CKRecord.Reference || (value as? NSArray)?.firstObject is CKAsset
                || (value as? NSArray)?.firstObject is CKRecord.Reference
            {
                return .failure(CKError(.invalidArguments))
            }
        }
        if databaseScope == .public, !client.encrypted.values.isEmpty { return .failure(CKError(.invalidArguments)) }
        // CloudKit reads an asset's file when it saves the record; a missing file fails the record.
        for value in client.plain.values.values {
            let assets = (value as? CKAsset).map { [$0] } ?? ((value as? NSArray)?.compactMap { $0 as? CKAsset } ?? [])
            for asset in assets {
                guard let url = asset.fileURL, let bytes = try? Data(contentsOf: url) else {
                    return .failure(CKError(.assetFileNotFound))
                }
                uploads[url] = bytes
            }
        }
        let server = stored[client.recordID]
        if let server, server.recordType != client.recordType { return .failure(CKError(.invalidArguments)) }
        if savePolicy == .ifServerRecordUnchanged {
            if server == nil, client.recordChangeTag != nil { return .failure(CKError(.unknownItem)) }
            if let server, server.recordChangeTag != client.recordChangeTag {
                return .failure(
                    CKError(
                        .serverRecordChanged,
                        userInfo: [
                            CKRecordChangedErrorServerRecordKey: server.serverCopy { _ in CKAsset(notDownloaded: ()) },
                            CKRecordChangedErrorClientRecordKey: client,
                        ]))
            }
        }
        // Every policy writes onto the server's record: under allKeys too, "a server record can contain keys that
        // aren't present locally", and they stay.
        let record = server?.serverCopy { $0 } ?? client.blankCopy()
        record.parent = client.parent
        record.share = client.share
        record.creationDate = server?.creationDate
        if let share = record as? CKShare, let sent = client as? CKShare {
            // The share's state is the client's; the server gives a new share its URL.
            share.publicPermission = sent.publicPermission
            share.participants = sent.participants
            share.url =
                share.url ?? sent.url ?? URL(string: "https://www.icloud.com/share/\(UUID().uuidString.lowercased())")
        }
        // allKeys sends every key the record holds, and the keys set to nil (changed).
        let keys: (FieldStore) -> [String] = { store in
            savePolicy == .allKeys
                ? Array(Set(store.allKeys()).union(store.changedKeys())).sorted() : store.changedKeys()
        }
        for key in keys(client.plain) { record.plain.values[key] = client.plain.values[key] }
        for key in keys(client.encrypted) { record.encrypted.values[key] = client.encrypted.values[key] }
        return .success(record)
    }

    open func records(
        matching query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (
        matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?
    ) {
        try checkCancellation()
        if let compound = query.predicate as? NSCompoundPredicate, compound.compoundPredicateType != .and {
            throw CKError(.invalidArguments)
        }
        return try locked {
            let zone = zoneID ?? .default
            guard zones.contains(zone) else { throw CKError(.zoneNotFound) }
            let matches = stored.values.filter { $0.recordID.zoneID.isEqual(zone) && $0.recordType == query.recordType }
                .sorted { $0.recordID.recordName < $1.recordID.recordName }
            return (matches.map { ($0.recordID, .success(handedOut($0, desiredKeys: desiredKeys))) }, nil)
        }
    }

    open func records(
        continuingMatchFrom queryCursor: CKQueryOperation.Cursor, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (
        matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?
    ) {
        try checkCancellation()
        return ([], nil)
    }

    open func modifyRecordZones(
        saving recordZonesToSave: [CKRecordZone], deleting recordZoneIDsToDelete: [CKRecordZone.ID]
    ) async throws -> (
        saveResults: [CKRecordZone.ID: Result<CKRecordZone, any Error>],
        deleteResults: [CKRecordZone.ID: Result<Void, any Error>]
    ) {
        try checkCancellation()
        return locked {
            var saveResults: [CKRecordZone.ID: Result<CKRecordZone, any Error>] = [:]
            var deleteResults: [CKRecordZone.ID: Result<Void, any Error>] = [:]
            for zone in recordZonesToSave {
                if databaseScope == .public {
                    saveResults[zone.zoneID] = .failure(CKError(.permissionFailure))
                    continue
                }
                if !zones.contains(zone.zoneID) {
                    zones.append(zone.zoneID)
                    userDeletedZones.removeAll { $0.isEqual(zone.zoneID) }
                    zoneLogs[zone.zoneID] = []
                    logZone(zone.zoneID, deletion: nil)
                }
                saveResults[zone.zoneID] = .success(zone)
            }
            for id in recordZoneIDsToDelete {
                guard zones.contains(id) else {
                    deleteResults[id] = .failure(CKError(.zoneNotFound))
                    continue
                }
                removeZone(id, reason: .deleted)
                deleteResults[id] = .success(())
            }
            return (saveResults, deleteResults)
        }
    }

    open func allRecordZones() async throws -> [CKRecordZone] {
        try checkCancellation()
        return locked { zones.map { CKRecordZone(zoneID: $0) } }
    }
}

// MARK: Changes since a token

/// An opaque position in a database's or a zone's change history; it archives with secure coding, as Apple's does.
open class CKServerChangeToken: NSObject, NSSecureCoding, @unchecked Sendable {
    public static var supportsSecureCoding: Bool { true }
    /// The zone whose log this is a position in (its name and owner), or `nil` for the database's log of zones.
    let zoneName: String?
    let ownerName: String?
    let generation: Int
    let sequence: Int

    init(zoneID: CKRecordZone.ID?, generation: Int, sequence: Int) {
        zoneName = zoneID?.zoneName
        ownerName = zoneID?.ownerName
        self.generation = generation
        self.sequence = sequence
    }

    public required init?(coder: NSCoder) {
        // Linux's unarchiver reports a missing key as an error (Apple's returns nil): look before reading.
        if coder.containsValue(forKey: "zoneName"), coder.containsValue(forKey: "ownerName") {
            zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?
            ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String?
        } else {
            zoneName = nil
            ownerName = nil
        }
        guard coder.containsValue(forKey: "generation"), coder.containsValue(forKey: "sequence") else { return nil }
        generation = coder.decodeInteger(forKey: "generation")
        sequence = coder.decodeInteger(forKey: "sequence")
    }

    open func encode(with coder: NSCoder) {
        if let zoneName, let ownerName {
            coder.encode(zoneName as NSString, forKey: "zoneName")
            coder.encode(ownerName as NSString, forKey: "ownerName")
        }
        coder.encode(generation, forKey: "generation")
        coder.encode(sequence, forKey: "sequence")
    }

    func isFor(_ zoneID: CKRecordZone.ID?) -> Bool {
        zoneName == zoneID?.zoneName && ownerName == zoneID?.ownerName
    }
}

extension CKDatabase {
    /// A change to a record of a zone.
    public enum RecordZoneChange {
        /// A record created or changed.
        public struct Modification: Sendable {
            public var record: CKRecord
        }

        /// A record deleted.
        public struct Deletion: Sendable, Hashable {
            public var recordID: CKRecord.ID
            public var recordType: CKRecord.RecordType
        }
    }

    /// A change to a database's zones.
    public enum DatabaseChange {
        /// A zone created or changed.
        public struct Modification: Sendable, Hashable {
            public var zoneID: CKRecordZone.ID
        }

        /// A zone deleted.
        public struct Deletion: Sendable, Hashable {
            public var zoneID: CKRecordZone.ID
            /// Deprecated in iOS 17 and macOS 14 for `reason`; not marked so here, as Linux ignores the versions the
            /// bridge's `#available` check names and would warn about the fallback that older systems run.
            public var purged: Bool
            @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
            public var reason: Reason { storedReason }
            let storedReason: Reason

            @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
            public enum Reason: Sendable, Hashable {
                case deleted
                case purged
                case encryptedDataReset
            }
        }
    }

    /// The largest page CloudKit hands out when the caller sets no limit.
    private static var changePageSize: Int { itemLimit }

    public func recordZoneChanges(
        inZoneWith zoneID: CKRecordZone.ID, since changeToken: CKServerChangeToken?,
        desiredKeys: [CKRecord.FieldKey]? = nil, resultsLimit: Int? = nil
    ) async throws -> (
        modificationResultsByID: [CKRecord.ID: Result<CKDatabase.RecordZoneChange.Modification, any Error>],
        deletions: [CKDatabase.RecordZoneChange.Deletion], changeToken: CKServerChangeToken, moreComing: Bool
    ) {
        try checkCancellation()
        return try locked {
            if userDeletedZones.contains(zoneID) { throw CKError(.userDeletedZone) }
            guard zones.contains(zoneID) else { throw CKError(.zoneNotFound) }
            // The default zone keeps no history.
            guard let log = zoneLogs[zoneID] else { throw CKError(.invalidArguments) }
            let start = try position(of: changeToken, for: zoneID)
            let (page, through, more) = Self.page(
                log.filter { $0.sequence > start }, key: \.recordID, sequence: \.sequence, limit: resultsLimit,
                upTo: sequence)
            var modifications: [CKRecord.ID: Result<CKDatabase.RecordZoneChange.Modification, any Error>] = [:]
            var deletions: [CKDatabase.RecordZoneChange.Deletion] = []
            for entry in page {
                if let type = entry.deletedType {
                    deletions.append(.init(recordID: entry.recordID, recordType: type))
                } else if failingChanges.contains(entry.recordID) {
                    modifications[entry.recordID] = .failure(CKError(.assetNotAvailable))
                } else if let record = stored[entry.recordID] {
                    modifications[entry.recordID] = .success(.init(record: handedOut(record, desiredKeys: desiredKeys)))
                }
            }
            let token = CKServerChangeToken(zoneID: zoneID, generation: generation, sequence: through)
            return (modifications, deletions, token, more)
        }
    }

    public func databaseChanges(
        since changeToken: CKServerChangeToken?, resultsLimit: Int? = nil
    ) async throws -> (
        modifications: [CKDatabase.DatabaseChange.Modification], deletions: [CKDatabase.DatabaseChange.Deletion],
        changeToken: CKServerChangeToken, moreComing: Bool
    ) {
        try checkCancellation()
        return try locked {
            let start = try position(of: changeToken, for: nil)
            let (page, through, more) = Self.page(
                databaseLog.filter { $0.sequence > start }, key: \.zoneID, sequence: \.sequence, limit: resultsLimit,
                upTo: sequence)
            var modifications: [CKDatabase.DatabaseChange.Modification] = []
            var deletions: [CKDatabase.DatabaseChange.Deletion] = []
            for entry in page {
                if let reason = entry.deletion {
                    deletions.append(.init(zoneID: entry.zoneID, purged: reason == .purged, storedReason: reason))
                } else {
                    modifications.append(.init(zoneID: entry.zoneID))
                }
            }
            let token = CKServerChangeToken(zoneID: nil, generation: generation, sequence: through)
            return (modifications, deletions, token, more)
        }
    }

    /// Where a token starts, or the error CloudKit gives for a token it won't honour.
    private func position(of token: CKServerChangeToken?, for zoneID: CKRecordZone.ID?) throws -> Int {
        guard let token else { return 0 }
        guard token.isFor(zoneID) else { throw CKError(.invalidArguments) }
        guard token.generation == generation else { throw CKError(.changeTokenExpired) }
        return token.sequence
    }

    /// A page of a log: each key once, at its latest change, in the order of those changes; the position the
    /// page covers through; whether more follow.
    private static func page<Entry, Key: Hashable>(
        _ entries: [Entry], key: (Entry) -> Key, sequence: (Entry) -> Int, limit: Int?, upTo end: Int
    ) -> (page: [Entry], through: Int, more: Bool) {
        var latest: [Key: Int] = [:]
        for (index, entry) in entries.enumerated() { latest[key(entry)] = index }
        let collapsed = entries.enumerated().filter { latest[key($0.element)] == $0.offset }.map(\.element)
        let size = limit.flatMap { $0 > 0 ? min($0, changePageSize) : nil } ?? changePageSize
        guard collapsed.count > size else { return (collapsed, end, false) }
        let page = Array(collapsed.prefix(size))
        // The page covers the log up to its last entry's latest change.
        return (page, page.last.map(sequence) ?? end, true)
    }

    private func log(_ recordID: CKRecord.ID, deletedType: String?) {
        guard zoneLogs[recordID.zoneID] != nil else { return }
        sequence += 1
        zoneLogs[recordID.zoneID]?.append((sequence, recordID, deletedType))
        logZone(recordID.zoneID, deletion: nil)
    }

    private func logZone(_ zoneID: CKRecordZone.ID, deletion: DatabaseChange.Deletion.Reason?) {
        sequence += 1
        databaseLog.append((sequence, zoneID, deletion))
    }

    private func removeZone(_ zoneID: CKRecordZone.ID, reason: DatabaseChange.Deletion.Reason) {
        zones.removeAll { $0.isEqual(zoneID) }
        stored = stored.filter { !$0.key.zoneID.isEqual(zoneID) }
        zoneLogs[zoneID] = nil
        if reason == .purged { userDeletedZones.append(zoneID) }
        logZone(zoneID, deletion: reason)
    }

    // MARK: Subscriptions

    public func modifySubscriptions(
        saving subscriptionsToSave: [CKSubscription], deleting subscriptionIDsToDelete: [CKSubscription.ID]
    ) async throws -> (
        saveResults: [CKSubscription.ID: Result<CKSubscription, any Error>],
        deleteResults: [CKSubscription.ID: Result<Void, any Error>]
    ) {
        try checkCancellation()
        return locked {
            var saveResults: [CKSubscription.ID: Result<CKSubscription, any Error>] = [:]
            var deleteResults: [CKSubscription.ID: Result<Void, any Error>] = [:]
            for subscription in subscriptionsToSave {
                if let zoneSubscription = subscription as? CKRecordZoneSubscription,
                    !zones.contains(zoneSubscription.zoneID)
                {
                    saveResults[subscription.subscriptionID] = .failure(CKError(.zoneNotFound))
                } else {
                    subscriptions[subscription.subscriptionID] = subscription
                    saveResults[subscription.subscriptionID] = .success(subscription)
                }
            }
            for id in subscriptionIDsToDelete {
                deleteResults[id] =
                    subscriptions.removeValue(forKey: id) == nil ? .failure(CKError(.unknownItem)) : .success(())
            }
            return (saveResults, deleteResults)
        }
    }

    /// The subscriptions, in no particular order, as CloudKit documents none.
    public func allSubscriptions() async throws -> [CKSubscription] {
        try checkCancellation()
        return locked { Array(subscriptions.values) }
    }

    // MARK: Test controls (not CloudKit's API)

    /// Makes every change token given so far expired, as CloudKit may at any time.
    public func standInExpireChangeTokens() {
        locked { generation += 1 }
    }

    /// Deletes a zone as the user or the system would: `purged` from Settings, `encryptedDataReset` when the user
    /// reset their encrypted data.
    public func standInDeleteZone(_ zoneID: CKRecordZone.ID, reason: DatabaseChange.Deletion.Reason) {
        locked { removeZone(zoneID, reason: reason) }
    }

    /// Makes zone changes report this record as a change that couldn't be fetched.
    public func standInFailChange(of recordID: CKRecord.ID) {
        locked { _ = failingChanges.insert(recordID) }
    }

    /// Stores a subscription made elsewhere (by other code, or the CloudKit console).
    public func standInStore(_ subscription: CKSubscription) {
        locked { subscriptions[subscription.subscriptionID] = subscription }
    }
}

// MARK: The user

public enum CKAccountStatus: Int, Sendable {
    case couldNotDetermine = 0
    case available = 1
    case restricted = 2
    case noAccount = 3
    case temporarilyUnavailable = 4
}

extension CKContainer {
    /// The user record ID of the signed-in user; `notAuthenticated` without an available account, as documented.
    public func userRecordID() async throws -> CKRecord.ID {
        let (status, name) = account.read()
        guard status == .available else { throw CKError(.notAuthenticated) }
        return CKRecord.ID(recordName: name)
    }

    public func accountStatus() async throws -> CKAccountStatus {
        account.read().status
    }

    // MARK: Test controls (not CloudKit's API)

    /// Signs a user in or out, or makes the account unavailable.
    public func standInSetAccount(_ status: CKAccountStatus, userRecordName: String = "_stand-in-user") {
        account.write(status, userRecordName)
    }
}

/// The container's account, behind a lock.
final class StandInAccount: @unchecked Sendable {
    private let lock = NSLock()
    private var status = CKAccountStatus.available
    private var userRecordName = "_stand-in-user"

    func read() -> (status: CKAccountStatus, name: String) {
        lock.lock()
        defer { lock.unlock() }
        return (status, userRecordName)
    }

    func write(_ status: CKAccountStatus, _ name: String) {
        lock.lock()
        defer { lock.unlock() }
        self.status = status
        userRecordName = name
    }
}

// MARK: Subscriptions

open class CKSubscription: NSObject, @unchecked Sendable {
    public typealias ID = String

    /// How a subscription's pushes are delivered.
    open class NotificationInfo: NSObject, @unchecked Sendable {
        open var shouldSendContentAvailable = false
        public override init() {}
    }

    public let subscriptionID: ID
    open var notificationInfo: NotificationInfo?

    init(subscriptionID: ID) {
        self.subscriptionID = subscriptionID
    }
}

open class CKDatabaseSubscription: CKSubscription, @unchecked Sendable {
    public override init(subscriptionID: CKSubscription.ID) {
        super.init(subscriptionID: subscriptionID)
    }
}

open class CKRecordZoneSubscription: CKSubscription, @unchecked Sendable {
    public let zoneID: CKRecordZone.ID
    public init(zoneID: CKRecordZone.ID, subscriptionID: CKSubscription.ID) {
        self.zoneID = zoneID
        super.init(subscriptionID: subscriptionID)
    }
}

open class CKQuerySubscription: CKSubscription, @unchecked Sendable {
    public struct Options: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let firesOnRecordCreation = Options(rawValue: 1)
        public static let firesOnRecordUpdate = Options(rawValue: 2)
        public static let firesOnRecordDeletion = Options(rawValue: 4)
    }
    public let recordType: CKRecord.RecordType?
    public init(
        recordType: CKRecord.RecordType, predicate: NSPredicate, subscriptionID: CKSubscription.ID,
        options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
    ) {
        self.recordType = recordType
        super.init(subscriptionID: subscriptionID)
    }
}

// MARK: Notifications

open class CKNotification: NSObject, @unchecked Sendable {
    public internal(set) var subscriptionID: CKSubscription.ID?
    public internal(set) var containerIdentifier: String?
    public internal(set) var subscriptionOwnerUserRecordID: CKRecord.ID?

    // Test control (not CloudKit's API): Apple's notifications come from a push's payload only.
    public init(standInSubscriptionID: String?, containerIdentifier: String?, owner: CKRecord.ID? = nil) {
        subscriptionID = standInSubscriptionID
        self.containerIdentifier = containerIdentifier
        subscriptionOwnerUserRecordID = owner
    }
}

open class CKDatabaseNotification: CKNotification, @unchecked Sendable {
    public internal(set) var databaseScope: CKDatabase.Scope = .private
}

open class CKRecordZoneNotification: CKNotification, @unchecked Sendable {
    public internal(set) var recordZoneID: CKRecordZone.ID?
    public internal(set) var databaseScope: CKDatabase.Scope = .private
}

open class CKQueryNotification: CKNotification, @unchecked Sendable {
    public enum Reason: Int, Sendable {
        case recordCreated = 1
        case recordUpdated = 2
        case recordDeleted = 3
    }
    public internal(set) var recordID: CKRecord.ID?
    public internal(set) var queryNotificationReason: Reason = .recordCreated
    public internal(set) var recordFields: [String: Any]?
    public internal(set) var databaseScope: CKDatabase.Scope = .public
}

// Test controls (not CloudKit's API): the subclasses' properties, which Apple's fill from a push's payload.
extension CKNotification {
    public static func standInDatabase(
        subscriptionID: String?, containerIdentifier: String?, scope: CKDatabase.Scope
    ) -> CKDatabaseNotification {
        let notification = CKDatabaseNotification(
            standInSubscriptionID: subscriptionID, containerIdentifier: containerIdentifier)
        notification.databaseScope = scope
        return notification
    }

    public static func standInZone(
        _ zoneID: CKRecordZone.ID?, subscriptionID: String?, scope: CKDatabase.Scope, owner: CKRecord.ID? = nil
    ) -> CKRecordZoneNotification {
        let notification = CKRecordZoneNotification(
            standInSubscriptionID: subscriptionID, containerIdentifier: nil, owner: owner)
        notification.recordZoneID = zoneID
        notification.databaseScope = scope
        return notification
    }

    public static func standInQuery(
        _ recordID: CKRecord.ID?, reason: CKQueryNotification.Reason, fields: [String: Any]?,
        subscriptionID: String?, scope: CKDatabase.Scope
    ) -> CKQueryNotification {
        let notification = CKQueryNotification(standInSubscriptionID: subscriptionID, containerIdentifier: nil)
        notification.recordID = recordID
        notification.queryNotificationReason = reason
        notification.recordFields = fields
        notification.databaseScope = scope
        return notification
    }
}

// MARK: Sharing

open class CKUserIdentity: NSObject, @unchecked Sendable {
    open class LookupInfo: NSObject, @unchecked Sendable {
        public let emailAddress: String?
        public let userRecordID: CKRecord.ID?
        public init(emailAddress: String) {
            self.emailAddress = emailAddress
            userRecordID = nil
        }
        public init(userRecordID: CKRecord.ID) {
            emailAddress = nil
            self.userRecordID = userRecordID
        }
    }

    public let userRecordID: CKRecord.ID?
    public let lookupInfo: LookupInfo?
    init(userRecordID: CKRecord.ID?, lookupInfo: LookupInfo?) {
        self.userRecordID = userRecordID
        self.lookupInfo = lookupInfo
    }
}

open class CKShare: CKRecord, @unchecked Sendable {
    public enum ParticipantRole: Int, Sendable { case unknown = 0, owner = 1, privateUser = 3, publicUser = 4 }
    public enum ParticipantPermission: Int, Sendable { case unknown = 0, none = 1, readOnly = 2, readWrite = 3 }
    public enum ParticipantAcceptanceStatus: Int, Sendable {
        case unknown = 0, pending = 1, accepted = 2, removed = 3
    }

    public enum SystemFieldKey {
        public static let title: CKRecord.FieldKey = "cloudkit.title"
        public static let thumbnailImageData: CKRecord.FieldKey = "cloudkit.thumbnailImageData"
        public static let shareType: CKRecord.FieldKey = "cloudkit.type"
    }

    /// A participant: made by the container only (`shareParticipant(forUserRecordID:)`), never from its parts.
    open class Participant: NSObject, @unchecked Sendable {
        public internal(set) var userIdentity: CKUserIdentity
        public var role: ParticipantRole
        public var permission: ParticipantPermission
        public internal(set) var acceptanceStatus: ParticipantAcceptanceStatus
        init(
            userIdentity: CKUserIdentity, role: ParticipantRole, permission: ParticipantPermission,
            acceptanceStatus: ParticipantAcceptanceStatus
        ) {
            self.userIdentity = userIdentity
            self.role = role
            self.permission = permission
            self.acceptanceStatus = acceptanceStatus
        }
    }

    open class Metadata: NSObject, @unchecked Sendable {
        public let containerIdentifier: String
        public let share: CKShare
        public let hierarchicalRootRecordID: CKRecord.ID?
        public let rootRecord: CKRecord?
        public let participantRole: ParticipantRole
        public let participantStatus: ParticipantAcceptanceStatus
        public let participantPermission: ParticipantPermission
        public let ownerIdentity: CKUserIdentity
        init(
            containerIdentifier: String, share: CKShare, hierarchicalRootRecordID: CKRecord.ID?,
            rootRecord: CKRecord?, participantRole: ParticipantRole, participantStatus: ParticipantAcceptanceStatus,
            participantPermission: ParticipantPermission, ownerIdentity: CKUserIdentity
        ) {
            self.containerIdentifier = containerIdentifier
            self.share = share
            self.hierarchicalRootRecordID = hierarchicalRootRecordID
            self.rootRecord = rootRecord
            self.participantRole = participantRole
            self.participantStatus = participantStatus
            self.participantPermission = participantPermission
            self.ownerIdentity = ownerIdentity
        }
    }

    public var publicPermission: ParticipantPermission = .none
    public internal(set) var participants: [Participant] = []
    public internal(set) var url: URL?
    public var owner: Participant {
        participants.first { $0.role == .owner }
            ?? Participant(
                userIdentity: CKUserIdentity(userRecordID: nil, lookupInfo: nil), role: .owner,
                permission: .readWrite, acceptanceStatus: .accepted)
    }
    public var currentUserParticipant: Participant? { owner }

    public init(rootRecord: CKRecord, shareID: CKRecord.ID) {
        super.init(recordType: "cloudkit.share", recordID: shareID)
        rootRecord.share = CKRecord.Reference(recordID: shareID, action: .none)
        participants = [Self.newOwner()]
    }

    public convenience init(rootRecord: CKRecord) {
        self.init(
            rootRecord: rootRecord,
            shareID: CKRecord.ID(recordName: UUID().uuidString, zoneID: rootRecord.recordID.zoneID))
    }

    public init(recordZoneID: CKRecordZone.ID) {
        super.init(
            recordType: "cloudkit.share", recordID: CKRecord.ID(recordName: "cloudkit.zoneshare", zoneID: recordZoneID))
        participants = [Self.newOwner()]
    }

    private static func newOwner() -> Participant {
        Participant(
            userIdentity: CKUserIdentity(
                userRecordID: CKRecord.ID(recordName: CKCurrentUserDefaultName), lookupInfo: nil),
            role: .owner, permission: .readWrite, acceptanceStatus: .accepted)
    }

    public override init?(coder: NSCoder) {
        super.init(coder: coder)
        if coder.containsValue(forKey: "publicPermission") {
            publicPermission = ParticipantPermission(rawValue: coder.decodeInteger(forKey: "publicPermission")) ?? .none
        }
        if coder.containsValue(forKey: "url"), let text = coder.decodeObject(of: NSString.self, forKey: "url") {
            url = URL(string: text as String)
        }
        let count = coder.containsValue(forKey: "participants") ? coder.decodeInteger(forKey: "participants") : 0
        for index in 0..<count {
            let name = coder.decodeObject(of: NSString.self, forKey: "participant\(index).name") as String?
            let email = coder.decodeObject(of: NSString.self, forKey: "participant\(index).email") as String?
            let lookup = email.flatMap { $0.isEmpty ? nil : CKUserIdentity.LookupInfo(emailAddress: $0) }
            participants.append(
                Participant(
                    userIdentity: CKUserIdentity(
                        userRecordID: name.flatMap { $0.isEmpty ? nil : CKRecord.ID(recordName: $0) },
                        lookupInfo: lookup),
                    role: ParticipantRole(rawValue: coder.decodeInteger(forKey: "participant\(index).role"))
                        ?? .unknown,
                    permission: ParticipantPermission(
                        rawValue: coder.decodeInteger(forKey: "participant\(index).permission")) ?? .unknown,
                    acceptanceStatus: ParticipantAcceptanceStatus(
                        rawValue: coder.decodeInteger(forKey: "participant\(index).status")) ?? .unknown))
        }
    }

    open override func encodeSystemFields(with coder: NSCoder) {
        super.encodeSystemFields(with: coder)
        coder.encode(publicPermission.rawValue, forKey: "publicPermission")
        if let url { coder.encode(url.absoluteString as NSString, forKey: "url") }
        coder.encode(participants.count, forKey: "participants")
        for (index, participant) in participants.enumerated() {
            coder.encode(
                (participant.userIdentity.userRecordID?.recordName ?? "") as NSString,
                forKey: "participant\(index).name")
            coder.encode(
                (participant.userIdentity.lookupInfo?.emailAddress ?? "") as NSString,
                forKey: "participant\(index).email")
            coder.encode(participant.role.rawValue, forKey: "participant\(index).role")
            coder.encode(participant.permission.rawValue, forKey: "participant\(index).permission")
            coder.encode(participant.acceptanceStatus.rawValue, forKey: "participant\(index).status")
        }
    }

    override func blankCopy() -> CKRecord {
        let copy = CKShare(recordZoneID: recordID.zoneID)
        copy.recordID = recordID
        copy.publicPermission = publicPermission
        copy.participants = participants
        copy.url = url
        return copy
    }

    /// As CloudKit: "To modify the list of participants, a share's publicPermission must be .none" (an
    /// Objective-C exception, which ends the app, otherwise).
    public func addParticipant(_ participant: Participant) {
        precondition(publicPermission == .none, "CKShare: participants changed while publicPermission isn't .none")
        if !participants.contains(where: { $0 === participant }) { participants.append(participant) }
    }

    public func removeParticipant(_ participant: Participant) {
        precondition(publicPermission == .none, "CKShare: participants changed while publicPermission isn't .none")
        participants.removeAll { $0 === participant }
    }
}

extension CKContainer {
    /// A participant for a user record ID, pending, read-only until the app sets its permission.
    public func shareParticipant(forUserRecordID userRecordID: CKRecord.ID) async throws -> CKShare.Participant {
        CKShare.Participant(
            userIdentity: CKUserIdentity(
                userRecordID: userRecordID, lookupInfo: CKUserIdentity.LookupInfo(userRecordID: userRecordID)),
            role: .privateUser, permission: .readOnly, acceptanceStatus: .pending)
    }

    /// A participant for one email address; the stand-in knows no users, so the identity has no user record.
    public func shareParticipant(forEmailAddress emailAddress: String) async throws -> CKShare.Participant {
        guard emailAddress.contains("@") else { throw CKError(.invalidArguments) }
        return CKShare.Participant(
            userIdentity: CKUserIdentity(
                userRecordID: nil, lookupInfo: CKUserIdentity.LookupInfo(emailAddress: emailAddress)),
            role: .privateUser, permission: .readOnly, acceptanceStatus: .pending)
    }

    /// The metadata of a share the stand-in was told of (``standInOffer(_:at:rootRecord:)``); `unknownItem` else.
    /// As Apple's async call, it doesn't fetch the root record (the operation's `shouldFetchRootRecord` does).
    public func shareMetadata(for url: URL) async throws -> CKShare.Metadata {
        guard let metadata = standInMetadata(for: url, rootRecord: false) else { throw CKError(.unknownItem) }
        return metadata
    }

    func standInMetadata(for url: URL, rootRecord: Bool) -> CKShare.Metadata? {
        guard let offer = sharing.offer(at: url) else { return nil }
        return CKShare.Metadata(
            containerIdentifier: containerIdentifier ?? "", share: offer.share,
            hierarchicalRootRecordID: offer.rootRecord?.recordID,
            rootRecord: rootRecord ? offer.rootRecord : nil, participantRole: .privateUser,
            participantStatus: .pending, participantPermission: .readWrite,
            ownerIdentity: CKUserIdentity(userRecordID: CKRecord.ID(recordName: "_owner"), lookupInfo: nil))
    }

    /// Runs an operation at once, on another thread, calling its closures one after another as CloudKit does.
    public func add(_ operation: CKOperation) {
        guard let fetch = operation as? CKFetchShareMetadataOperation else { return }
        Thread.detachNewThread { [self] in
            for url in fetch.shareURLs ?? [] {
                let metadata = standInMetadata(for: url, rootRecord: fetch.shouldFetchRootRecord)
                fetch.perShareMetadataResultBlock?(
                    url, metadata.map { .success($0) } ?? .failure(CKError(.unknownItem)))
            }
            fetch.fetchShareMetadataResultBlock?(.success(()))
        }
    }

    /// Accepts the share: the current user's participant becomes accepted.
    public func accept(_ metadata: CKShare.Metadata) async throws -> CKShare {
        let share = metadata.share
        for participant in share.participants where participant.role == .privateUser {
            participant.acceptanceStatus = .accepted
        }
        return share
    }

    // MARK: Test controls (not CloudKit's API)

    /// Makes a share known at a URL, as another user's device would have shared it.
    public func standInOffer(_ share: CKShare, at url: URL, rootRecord: CKRecord?) {
        share.url = url
        sharing.add(share, at: url, rootRecord: rootRecord)
    }
}

/// The shares a stand-in container was told of, by URL.
final class StandInSharing: @unchecked Sendable {
    private let lock = NSLock()
    private var offers: [URL: (share: CKShare, rootRecord: CKRecord?)] = [:]

    func add(_ share: CKShare, at url: URL, rootRecord: CKRecord?) {
        lock.lock()
        defer { lock.unlock() }
        offers[url] = (share, rootRecord)
    }

    func offer(at url: URL) -> (share: CKShare, rootRecord: CKRecord?)? {
        lock.lock()
        defer { lock.unlock() }
        return offers[url]
    }
}
