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
    /// The portable form of a CloudKit record: its type, ID, fields (those of `encryptedValues` marked encrypted,
    /// see ``encryptedFieldNames``) and system fields, with CloudKit's archive of the system fields, so that a
    /// record made from this one keeps the change tag.
    ///
    /// An asset CloudKit didn't download, or whose file is gone (CloudKit's cache is purged), becomes a
    /// ``CloudAsset`` without contents: the server's record of a conflict has no asset files, and CloudKit may
    /// delete a fetched asset's file at any time. Saving such a record leaves the server's asset in place.
    ///
    /// - Throws: ``CKCodableError/Code/corruptedValue`` for a field value of a type CloudKit doesn't store.
    public init(_ record: CKRecord) throws {
        let id = ID(record.recordID)
        var fields = Fields()
        let encrypted = record.encryptedValues
        let encryptedKeys = encrypted.allKeys()
        for key in record.allKeys() where !encryptedKeys.contains(key) {
            guard let object = record.object(forKey: key) else { continue }
            fields[key] = try CloudValue(object, field: key, recordID: id)
        }
        for key in encryptedKeys {
            guard let object = encrypted.object(forKey: key) else { continue }
            fields[key] = try CloudValue(object, field: key, recordID: id)
        }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        record.encodeSystemFields(with: archiver)
        archiver.finishEncoding()
        self.init(
            recordType: record.recordType, id: id, fields: fields,
            systemFields: record.recordChangeTag == nil
                ? nil
                : SystemFields(
                    changeTag: record.recordChangeTag,
                    creationDate: record.creationDate,
                    creatorUserRecordName: record.creatorUserRecordID?.recordName,
                    modificationDate: record.modificationDate,
                    lastModifiedUserRecordName: record.lastModifiedUserRecordID?.recordName,
                    archivedData: archiver.encodedData,
                    shareID: record.share.map { ID($0.recordID) }
                )
        )
        setEncrypted(true, fieldsNamed: encryptedKeys)
        parentID = record.parent.map { ID($0.recordID) }
        if let share = record as? CKShare { shareContents = CloudShare.Contents(share) }
    }
}

extension CloudRecord {
    /// This record as a CloudKit record.
    ///
    /// - A record with CloudKit's archive of its system fields (one fetched through CloudKit's framework) is
    ///   rebuilt from it, so saving it updates the server's record; its cleared fields are set to `nil` so that
    ///   the save clears them. The archive is used only if it is this record's, at this version: same ID, type and
    ///   change tag.
    /// - A record without a change tag is a new `CKRecord`.
    /// - A record with a change tag but no such archive (read from SQLite or CloudKit Web Services, or whose ID,
    ///   type or change tag changed) can't be rebuilt: it throws. ``CloudKitDatabase`` saves such records by
    ///   fetching the server's system fields first.
    /// - Fields in ``encryptedFieldNames`` go to `encryptedValues`.
    /// - Asset bytes held in memory are written to a file in ``CKRecordEncoder/temporaryAssetDirectory``, as
    ///   `CKAsset` needs one; delete them once the record is saved, with
    ///   ``CKRecordEncoder/removeTemporaryAssetFiles(of:)``.
    /// - An asset without contents (from the server's record of a conflict) is left out of an update, so that the
    ///   server keeps its asset.
    ///
    /// - Throws: ``CKRecordConversionError``.
    public func ckRecord() throws -> CKRecord {
        try ckRecord(onto: systemFieldsRecord(), assetFiles: nil)
    }

    /// The record rebuilt from CloudKit's archive of this record's system fields at this version, `nil` for a
    /// record that has no change tag.
    ///
    /// - Throws: ``CKRecordConversionError/Code/changeTagWithoutArchive``.
    func systemFieldsRecord() throws(CKRecordConversionError) -> CKRecord? {
        if let restored = restoredFromArchive() { return restored }
        guard let changeTag = systemFields?.changeTag else { return nil }
        throw CKRecordConversionError(.changeTagWithoutArchive(changeTag: changeTag), recordID: id)
    }

    /// The record rebuilt from the archive of its system fields, if that archive is this record's (same ID and
    /// type) at this version (same change tag). An archive that isn't would silently win over a changed ID or type
    /// (a `CKRecord`'s are fixed) or save over another version.
    func restoredFromArchive() -> CKRecord? {
        guard let archive = systemFields?.archivedData,
            let restored = Self.restoredRecord(from: archive, isShare: recordType == CloudShare.recordType),
            ID(restored.recordID) == id, restored.recordType == recordType,
            restored.recordChangeTag == systemFields?.changeTag
        else { return nil }
        return restored
    }

    /// This record's fields written onto a CloudKit record: `base` (with the server's system fields) for an
    /// update, a new record for `nil`.
    ///
    /// - Parameter assetFiles: Where to keep track of the temporary files written for in-memory assets, to delete
    ///   them after the request; `nil` leaves them to the caller.
    func ckRecord(onto base: CKRecord?, assetFiles: TemporaryAssetFiles?) throws(CKRecordConversionError) -> CKRecord {
        let ckRecord = base ?? CKRecord(recordType: recordType, recordID: id.ckRecordID)
        let files = assetFiles ?? TemporaryAssetFiles()
        for (name, value) in fields {
            let encrypted = encryptedFieldNames.contains(name)
            if encrypted, !value.isEncryptable {
                throw CKRecordConversionError(.unencryptableValue(value.kind), recordID: id, field: name)
            }
            guard let object = try value.ckRecordValue(recordID: id, field: name, files: files) else {
                // An asset without contents: an update leaves the server's asset in place; a new record has
                // nothing to upload.
                if base != nil { continue }
                throw CKRecordConversionError(.assetWithoutContents, recordID: id, field: name)
            }
            if encrypted {
                ckRecord.encryptedValues.setObject(object, forKey: name)
            } else {
                ckRecord.setObject(object, forKey: name)
            }
        }
        // CloudKit asks for no action on a parent reference.
        ckRecord.parent = parentID.map { CKRecord.Reference(recordID: $0.ckRecordID, action: .none) }
        let encryptedOnServer = Set(ckRecord.encryptedValues.allKeys())
        for name in clearedFieldNames where fields[name] == nil {
            if encryptedOnServer.contains(name) {
                ckRecord.encryptedValues.setObject(nil, forKey: name)
            } else {
                ckRecord.setObject(nil, forKey: name)
            }
        }
        return ckRecord
    }
}

extension CloudRecord {
    /// A CloudKit record from its archived system fields, or `nil` for an archive that can't be read. The
    /// unarchiver's default policy raises an exception on a damaged archive, which would end the app; this one
    /// reports the failure instead.
    ///
    /// - Parameter isShare: Whether the archive is a share's, which makes a `CKShare`.
    static func restoredRecord(from archive: Data, isShare: Bool = false) -> CKRecord? {
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: archive) else { return nil }
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        // A share's archive makes a CKShare, with its participants as CloudKit last gave them.
        let record = isShare ? CKShare(coder: unarchiver) : CKRecord(coder: unarchiver)
        guard let record, unarchiver.error == nil else { return nil }
        return record
    }
}

extension CloudValue {
    /// Whether `CKRecord.encryptedValues` can hold the value: anything but references and assets.
    var isEncryptable: Bool {
        switch kind {
        case .reference, .referenceList, .asset, .assetList: false
        default: true
        }
    }

    /// The value as CloudKit stores it in a `CKRecord`, or `nil` for an asset (or asset list) without local
    /// contents. Bytes held in memory are written to a temporary file, as `CKAsset` needs one.
    func ckRecordValue(
        recordID: CloudRecord.ID, field: String, files: TemporaryAssetFiles
    ) throws(CKRecordConversionError) -> (any CKRecordValue)? {
        switch self {
        case .asset(let asset):
            return try Self.ckAsset(asset, recordID: recordID, field: field, files: files)
        case .assetList(let list):
            var assets: [CKAsset] = []
            for asset in list {
                guard let ckAsset = try Self.ckAsset(asset, recordID: recordID, field: field, files: files) else {
                    return nil
                }
                assets.append(ckAsset)
            }
            return NSArray(array: assets)
        default:
            return scalarOrListValue
        }
    }

    /// The value as CloudKit stores it, for every kind but assets.
    var scalarOrListValue: (any CKRecordValue)? {
        switch self {
        case .string(let string): NSString(string: string)
        case .int64(let int): NSNumber(value: int)
        case .double(let double): NSNumber(value: double)
        case .date(let date): NSDate(timeIntervalSince1970: date.timeIntervalSince1970)
        case .bytes(let data): NSData(data: data)
        case .reference(let reference): Self.ckReference(reference)
        case .location(let location): CLLocation(location)
        case .stringList(let list): NSArray(array: list.map { NSString(string: $0) })
        case .int64List(let list): NSArray(array: list.map { NSNumber(value: $0) })
        case .doubleList(let list): NSArray(array: list.map { NSNumber(value: $0) })
        case .dateList(let list): NSArray(array: list.map { NSDate(timeIntervalSince1970: $0.timeIntervalSince1970) })
        case .bytesList(let list): NSArray(array: list.map { NSData(data: $0) })
        case .referenceList(let list): NSArray(array: list.map(Self.ckReference))
        case .locationList(let list): NSArray(array: list.map { CLLocation($0) })
        case .asset, .assetList: nil
        }
    }

    private static func ckReference(_ reference: CloudReference) -> CKRecord.Reference {
        CKRecord.Reference(recordID: reference.recordID.ckRecordID, action: reference.action.ckAction)
    }

    /// An asset's file, `nil` for an asset without local contents; bytes held in memory are written to a
    /// temporary file first.
    private static func ckAsset(
        _ asset: CloudAsset, recordID: CloudRecord.ID, field: String, files: TemporaryAssetFiles
    ) throws(CKRecordConversionError) -> CKAsset? {
        if let fileURL = asset.fileURL { return CKAsset(fileURL: fileURL) }
        guard let data = asset.data else { return nil }
        return CKAsset(fileURL: try files.write(data, recordID: recordID, field: field))
    }

    /// The portable value of a value CloudKit stored.
    init(_ object: any CKRecordValue, field: String, recordID: CloudRecord.ID) throws {
        let location = DecodingLocation(path: .root, recordID: recordID, field: field)
        if let array = object as? NSArray {
            self = try Self.list(array, location: location)
        } else if let value = Self.scalar(object) {
            self = value
        } else {
            throw CKCodableError.corruptedValue(
                "CloudKit holds a value of type \(type(of: object)), which this library doesn't map", at: location)
        }
    }

    private static func scalar(_ object: AnyObject) -> CloudValue? {
        switch object {
        case let string as NSString: .string(string as String)
        case let number as NSNumber: isFloatingPoint(number) ? .double(number.doubleValue) : .int64(number.int64Value)
        case let date as NSDate: .date(Date(timeIntervalSince1970: date.timeIntervalSince1970))
        case let data as NSData: .bytes(Data(referencing: data))
        case let reference as CKRecord.Reference:
            .reference(
                CloudReference(
                    recordID: CloudRecord.ID(reference.recordID), action: CloudReference.Action(reference.action)))
        case let asset as CKAsset: .asset(localAsset(asset))
        case let location as CLLocation: .location(CloudLocation(location))
        default: nil
        }
    }

    /// An asset with its local file, or without contents when it has none: CloudKit doesn't download the assets
    /// of a conflict's server record, and may delete a fetched asset's file from its cache at any time.
    private static func localAsset(_ asset: CKAsset) -> CloudAsset {
        guard let fileURL = asset.fileURL, FileManager.default.fileExists(atPath: fileURL.path) else {
            return CloudAsset(size: nil, fileChecksum: nil)
        }
        return CloudAsset(fileURL: fileURL)
    }

    private static func isFloatingPoint(_ number: NSNumber) -> Bool {
        let type = String(cString: number.objCType)
        return type == "d" || type == "f"
    }

    private static func list(_ array: NSArray, location: DecodingLocation) throws -> CloudValue {
        let values = try array.map { element -> CloudValue in
            guard let value = scalar(element as AnyObject) else {
                throw CKCodableError.corruptedValue(
                    "CloudKit holds a list with an element of type \(type(of: element))", at: location)
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
        let list: CloudValue? =
            switch first {
            case .string: all { if case .string(let v) = $0 { v } else { nil } }.map(CloudValue.stringList)
            case .int64, .double:
                // A list of numbers is a Double list as soon as one is: CloudKit's list has one type.
                values.contains { $0.kind == .double }
                    ? all {
                        if case .double(let v) = $0 { v } else if case .int64(let v) = $0 { Double(v) } else { nil }
                    }.map(CloudValue.doubleList)
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
