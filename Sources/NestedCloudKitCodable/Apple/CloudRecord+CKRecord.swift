#if canImport(CloudKit)
import CloudKit
import CoreLocation
import Foundation

// Conversions between the portable model and CloudKit's own types. Every decision about values lives in the
// portable code; this file only translates, one type to another.

extension CloudRecord.ZoneID {
    /// The zone ID of a CloudKit zone ID.
    public init(_ zoneID: CKRecordZone.ID) {
        self.init(zoneName: zoneID.zoneName, ownerName: zoneID.ownerName)
    }

    /// This zone ID as CloudKit's.
    public var ckZoneID: CKRecordZone.ID {
        CKRecordZone.ID(zoneName: zoneName, ownerName: ownerName)
    }
}

extension CloudRecord.ID {
    /// The record ID of a CloudKit record ID.
    public init(_ recordID: CKRecord.ID) {
        self.init(recordName: recordID.recordName, zoneID: CloudRecord.ZoneID(recordID.zoneID))
    }

    /// This record ID as CloudKit's.
    public var ckRecordID: CKRecord.ID {
        CKRecord.ID(recordName: recordName, zoneID: zoneID.ckZoneID)
    }
}

extension CloudReference.Action {
    /// The action as CloudKit's framework knows it: `.validate` becomes `.none`, because the framework has no
    /// such action (only CloudKit Web Services does); the framework doesn't check such references.
    public var ckAction: CKRecord.Reference.Action {
        switch self {
        case .none, .validate: .none
        case .deleteSelf: .deleteSelf
        }
    }

    /// The action of a CloudKit reference.
    public init(_ action: CKRecord.Reference.Action) {
        self = action == .deleteSelf ? .deleteSelf : .none
    }
}

extension CloudRecord {
    /// The portable form of a CloudKit record: its type, ID, fields and system fields, with CloudKit's archive
    /// of the system fields (so that a record made from this one keeps the change tag).
    ///
    /// - Throws: ``CKCodableError/Code/corruptedValue(_:)`` for a field value of a type CloudKit doesn't store.
    public init(_ record: CKRecord) throws {
        var fields = Fields()
        for key in record.allKeys() {
            guard let object = record.object(forKey: key) else { continue }
            fields[key] = try CloudValue(object, field: key, recordID: CloudRecord.ID(record.recordID))
        }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        record.encodeSystemFields(with: archiver)
        archiver.finishEncoding()
        self.init(
            recordType: record.recordType, id: ID(record.recordID), fields: fields,
            systemFields: record.recordChangeTag == nil ? nil : SystemFields(
                changeTag: record.recordChangeTag,
                creationDate: record.creationDate,
                creatorUserRecordName: record.creatorUserRecordID?.recordName,
                modificationDate: record.modificationDate,
                lastModifiedUserRecordName: record.lastModifiedUserRecordID?.recordName,
                archivedData: archiver.encodedData
            )
        )
    }
}

extension CloudRecord {
    /// This record as a CloudKit record. A record with CloudKit's archive of its system fields is rebuilt from it,
    /// so saving it updates the server's record; its cleared fields are set to `nil` so that the save clears them.
    ///
    /// - Throws: An error writing the contents of an in-memory asset to a temporary file (`CKAsset` needs a file).
    public func ckRecord() throws -> CKRecord {
        let record = self
        let ckRecord: CKRecord
        if let archive = record.systemFields?.archivedData, let restored = Self.restoredRecord(from: archive) {
            ckRecord = restored
        } else {
            ckRecord = CKRecord(recordType: record.recordType, recordID: record.id.ckRecordID)
        }
        for (name, value) in record.fields {
            ckRecord.setObject(try value.ckRecordValue(), forKey: name)
        }
        for name in record.clearedFieldNames where record.fields[name] == nil {
            ckRecord.setObject(nil, forKey: name)
        }
        return ckRecord
    }
}

extension CloudRecord {
    /// A CloudKit record from its archived system fields, or `nil` for an archive that can't be read. The
    /// unarchiver's default policy raises an exception on a damaged archive, which would end the app; this one
    /// reports the failure instead.
    static func restoredRecord(from archive: Data) -> CKRecord? {
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: archive) else { return nil }
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        guard let record = CKRecord(coder: unarchiver), unarchiver.error == nil else { return nil }
        return record
    }
}

extension CloudValue {
    /// The value as CloudKit stores it in a `CKRecord`.
    public func ckRecordValue() throws -> any CKRecordValue {
        switch self {
        case .string(let string): NSString(string: string)
        case .int64(let int): NSNumber(value: int)
        case .double(let double): NSNumber(value: double)
        case .date(let date): NSDate(timeIntervalSince1970: date.timeIntervalSince1970)
        case .bytes(let data): NSData(data: data)
        case .reference(let reference): Self.ckReference(reference)
        case .asset(let asset): try Self.ckAsset(asset)
        case .location(let location): CLLocation(location)
        case .stringList(let list): NSArray(array: list.map { NSString(string: $0) })
        case .int64List(let list): NSArray(array: list.map { NSNumber(value: $0) })
        case .doubleList(let list): NSArray(array: list.map { NSNumber(value: $0) })
        case .dateList(let list): NSArray(array: list.map { NSDate(timeIntervalSince1970: $0.timeIntervalSince1970) })
        case .bytesList(let list): NSArray(array: list.map { NSData(data: $0) })
        case .referenceList(let list): NSArray(array: list.map(Self.ckReference))
        case .assetList(let list): NSArray(array: try list.map(Self.ckAsset))
        case .locationList(let list): NSArray(array: list.map { CLLocation($0) })
        }
    }

    private static func ckReference(_ reference: CloudReference) -> CKRecord.Reference {
        CKRecord.Reference(recordID: reference.recordID.ckRecordID, action: reference.action.ckAction)
    }

    /// An asset's file; bytes held in memory are written to a temporary file first, as `CKAsset` needs one.
    private static func ckAsset(_ asset: CloudAsset) throws -> CKAsset {
        if let fileURL = asset.fileURL { return CKAsset(fileURL: fileURL) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("NestedCloudKitCodable-\(UUID().uuidString)")
        try (asset.data ?? Data()).write(to: file, options: .atomic)
        return CKAsset(fileURL: file)
    }

    /// The portable value of a value CloudKit stored.
    init(_ object: any CKRecordValue, field: String, recordID: CloudRecord.ID) throws {
        let location = DecodingLocation(path: .root, recordID: recordID, field: field)
        if let array = object as? NSArray {
            self = try Self.list(array, location: location)
        } else if let value = Self.scalar(object) {
            self = value
        } else {
            throw CKCodableError.corruptedValue("CloudKit holds a value of type \(type(of: object)), which this library doesn't map", at: location)
        }
    }

    private static func scalar(_ object: AnyObject) -> CloudValue? {
        switch object {
        case let string as NSString: .string(string as String)
        case let number as NSNumber: isFloatingPoint(number) ? .double(number.doubleValue) : .int64(number.int64Value)
        case let date as NSDate: .date(Date(timeIntervalSince1970: date.timeIntervalSince1970))
        case let data as NSData: .bytes(Data(referencing: data))
        case let reference as CKRecord.Reference:
            .reference(CloudReference(recordID: CloudRecord.ID(reference.recordID), action: CloudReference.Action(reference.action)))
        case let asset as CKAsset: asset.fileURL.map { .asset(CloudAsset(fileURL: $0)) }
        case let location as CLLocation: .location(CloudLocation(location))
        default: nil
        }
    }

    private static func isFloatingPoint(_ number: NSNumber) -> Bool {
        let type = String(cString: number.objCType)
        return type == "d" || type == "f"
    }

    private static func list(_ array: NSArray, location: DecodingLocation) throws -> CloudValue {
        let values = try array.map { element -> CloudValue in
            guard let value = scalar(element as AnyObject) else {
                throw CKCodableError.corruptedValue("CloudKit holds a list with an element of type \(type(of: element))", at: location)
            }
            return value
        }
        func all<T>(_ extract: (CloudValue) -> T?) -> [T]? {
            var result: [T] = []
            for value in values {
                guard let element = extract(value) else { return nil }
                result.append(element)
            }
            return result
        }
        guard let first = values.first else { return .stringList([]) }
        let list: CloudValue? = switch first {
        case .string: all { if case .string(let v) = $0 { v } else { nil } }.map(CloudValue.stringList)
        case .int64, .double:
            // A list of numbers is a Double list as soon as one is: CloudKit's list has one type.
            values.contains { $0.kind == .double }
                ? all { if case .double(let v) = $0 { v } else if case .int64(let v) = $0 { Double(v) } else { nil } }.map(CloudValue.doubleList)
                : all { if case .int64(let v) = $0 { v } else { nil } }.map(CloudValue.int64List)
        case .date: all { if case .date(let v) = $0 { v } else { nil } }.map(CloudValue.dateList)
        case .bytes: all { if case .bytes(let v) = $0 { v } else { nil } }.map(CloudValue.bytesList)
        case .reference: all { if case .reference(let v) = $0 { v } else { nil } }.map(CloudValue.referenceList)
        case .asset: all { if case .asset(let v) = $0 { v } else { nil } }.map(CloudValue.assetList)
        case .location: all { if case .location(let v) = $0 { v } else { nil } }.map(CloudValue.locationList)
        default: nil
        }
        guard let list else {
            throw CKCodableError.corruptedValue("CloudKit holds a list mixing value types", at: location)
        }
        return list
    }
}
#endif
