// A stand-in for CloudKit on Linux: the documented Swift signatures of the symbols the Apple bridge uses, with
// simple behaviour (a record is a dictionary; system fields archive with NSKeyedArchiver), so the bridge
// type-checks against them and its conversions run here. The database calls only fail: nothing here talks to
// CloudKit. Test-only; never shipped.
import CoreLocation
import Foundation

public let CKCurrentUserDefaultName = "__defaultOwner__"

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
        open var zoneName: String
        open var ownerName: String
        public init(zoneName: String = "_defaultZone", ownerName: String = CKCurrentUserDefaultName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }
        public required init?(coder: NSCoder) {
            guard let zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?,
                  let ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String? else { return nil }
            self.zoneName = zoneName
            self.ownerName = ownerName
        }
        open func encode(with coder: NSCoder) {
            coder.encode(zoneName as NSString, forKey: "zoneName")
            coder.encode(ownerName as NSString, forKey: "ownerName")
        }
    }
    open var zoneID: ID
    public init(zoneID: ID) { self.zoneID = zoneID }
    public init(zoneName: String) { zoneID = ID(zoneName: zoneName) }
}

open class CKRecord: NSObject, @unchecked Sendable {
    public typealias RecordType = String
    public typealias FieldKey = String

    open class ID: NSObject, @unchecked Sendable {
        open var recordName: String
        open var zoneID: CKRecordZone.ID
        public init(recordName: String, zoneID: CKRecordZone.ID = .default) {
            self.recordName = recordName
            self.zoneID = zoneID
        }
    }

    open class Reference: NSObject, __CKRecordObjCValue, @unchecked Sendable {
        public enum Action: UInt, Sendable {
            case none = 0
            case deleteSelf = 1
        }
        open var recordID: CKRecord.ID
        open var action: Action
        public init(recordID: CKRecord.ID, action: Action) {
            self.recordID = recordID
            self.action = action
        }
        public convenience init(record: CKRecord, action: Action) { self.init(recordID: record.recordID, action: action) }
    }

    open var recordType: RecordType
    open var recordID: ID
    open var recordChangeTag: String?
    open var creationDate: Date?
    open var modificationDate: Date?
    open var creatorUserRecordID: ID?
    open var lastModifiedUserRecordID: ID?
    private var values: [FieldKey: any __CKRecordObjCValue] = [:]
    private var changed: [FieldKey] = []

    public init(recordType: RecordType, recordID: ID = ID(recordName: UUID().uuidString)) {
        self.recordType = recordType
        self.recordID = recordID
    }

    public init?(coder: NSCoder) {
        guard let type = coder.decodeObject(of: NSString.self, forKey: "recordType") as String?,
              let name = coder.decodeObject(of: NSString.self, forKey: "recordName") as String?,
              let zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?,
              let ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String? else { return nil }
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

    open func object(forKey key: FieldKey) -> (any __CKRecordObjCValue)? { values[key] }

    open func setObject(_ object: (any __CKRecordObjCValue)?, forKey key: FieldKey) {
        values[key] = object
        if !changed.contains(key) { changed.append(key) }
    }

    public subscript(key: FieldKey) -> (any __CKRecordObjCValue)? {
        get { object(forKey: key) }
        set { setObject(newValue, forKey: key) }
    }

    open func allKeys() -> [FieldKey] { values.keys.sorted() }
    open func changedKeys() -> [FieldKey] { changed }
}

open class CKAsset: NSObject, __CKRecordObjCValue, @unchecked Sendable {
    open var fileURL: URL?
    public init(fileURL: URL) { self.fileURL = fileURL }
}

open class CKQuery: NSObject, @unchecked Sendable {
    open var recordType: CKRecord.RecordType
    open var predicate: NSPredicate
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
        public override init() {}
        public required init?(coder: NSCoder) {}
        open func encode(with coder: NSCoder) {}
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
             tooManyParticipants = 29, alreadyShared = 30, referenceViolation = 31
    }
    public let code: Code
    public let userInfo: [String: Any]
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }
    public var serverRecord: CKRecord? { userInfo["ServerRecord"] as? CKRecord }
    public var clientRecord: CKRecord? { userInfo["ClientRecord"] as? CKRecord }
    public var ancestorRecord: CKRecord? { userInfo["AncestorRecord"] as? CKRecord }
    public var retryAfterSeconds: Double? { userInfo["CKRetryAfter"] as? Double }
    public var partialErrorsByItemID: [AnyHashable: any Error]? { userInfo["CKPartialErrors"] as? [AnyHashable: any Error] }
}

open class CKDatabase: NSObject, @unchecked Sendable {
    public enum Scope: Int, Sendable { case `public` = 1, `private` = 2, shared = 3 }
    open var databaseScope: Scope { .private }

    open func records(
        for ids: [CKRecord.ID], desiredKeys: [CKRecord.FieldKey]? = nil
    ) async throws -> [CKRecord.ID: Result<CKRecord, any Error>] {
        throw CKError(.networkUnavailable)
    }

    open func modifyRecords(
        saving recordsToSave: [CKRecord], deleting recordIDsToDelete: [CKRecord.ID],
        savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true
    ) async throws -> (saveResults: [CKRecord.ID: Result<CKRecord, any Error>], deleteResults: [CKRecord.ID: Result<Void, any Error>]) {
        throw CKError(.networkUnavailable)
    }

    open func records(
        matching query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?) {
        throw CKError(.networkUnavailable)
    }

    open func records(
        continuingMatchFrom queryCursor: CKQueryOperation.Cursor, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?) {
        throw CKError(.networkUnavailable)
    }

    open func modifyRecordZones(
        saving recordZonesToSave: [CKRecordZone], deleting recordZoneIDsToDelete: [CKRecordZone.ID]
    ) async throws -> (saveResults: [CKRecordZone.ID: Result<CKRecordZone, any Error>], deleteResults: [CKRecordZone.ID: Result<Void, any Error>]) {
        throw CKError(.networkUnavailable)
    }

    open func allRecordZones() async throws -> [CKRecordZone] {
        throw CKError(.networkUnavailable)
    }
}
