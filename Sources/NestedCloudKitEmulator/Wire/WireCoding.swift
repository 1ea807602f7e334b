import Crypto
import Foundation
import NestedCloudKitCodable

/// Reads and writes CloudKit Web Services' JSON for one database: records, their fields, zone IDs.
///
/// It knows whose database it speaks for, because the wire names the current user's zones with the user's record
/// name where the portable model says "the current user"; and it knows how to name an asset's download URL.
struct WireCoding: Sendable {
    /// The record name the wire gives the database's owner.
    var ownerRecordName: String
    /// The user record name the database stamps its records with, which the wire shows as the owner's.
    var databaseUserRecordName: String?
    /// The download URL of an asset: the record, the field and the position in a list (`nil` for a single asset).
    var downloadURL: @Sendable (CloudRecord.ID, String, Int?) -> String
    /// The bytes an upload receipt stands for, when a save names one.
    var uploadedAsset: @Sendable (String) -> Data?
    /// Whether assets carry their bytes in base64 as `data`: for the admin API's export and import only.
    var embedsAssetData = false
    /// Whether zones of other users are named as they are: in a shared database, every zone is another user's.
    var keepsOtherOwners = false
    /// The URL the emulator serves a share at, from its short GUID; `nil` where no URL is given (an export).
    var shareURL: (@Sendable (String) -> String)?

    // MARK: Zones

    func json(_ zone: CloudRecord.ZoneID) -> JSONValue {
        let owner = zone.ownerName == CloudRecord.ZoneID.currentUserOwnerName ? ownerRecordName : zone.ownerName
        return ["zoneName": .string(zone.zoneName), "ownerRecordName": .string(owner)]
    }

    /// A zone ID from the wire; a missing one is the default zone, as the reference says.
    func zoneID(_ value: JSONValue?) throws(ServerError) -> CloudRecord.ZoneID {
        guard let value, !value.isNull else { return .default }
        guard let name = value["zoneName"]?.string, !name.isEmpty else {
            throw .badRequest("a zoneID needs a zoneName")
        }
        let owner = value["ownerRecordName"]?.string
        if let owner, keepsOtherOwners, owner != ownerRecordName, owner != CloudRecord.ZoneID.currentUserOwnerName {
            return CloudRecord.ZoneID(zoneName: name, ownerName: owner)
        }
        if let owner, owner != ownerRecordName, owner != CloudRecord.ZoneID.currentUserOwnerName {
            // Zones of other users are reached through the shared database, which holds none here.
            throw ServerError(.zoneNotFound, "zone \(name) of owner \(owner) is not in this database")
        }
        return CloudRecord.ZoneID(zoneName: name)
    }

    // MARK: Records

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return value.isFinite && abs(value) < 9.0e18 ? Int64(value) : 0
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// A record as the wire shows it, with only the fields it was made ready with.
    func json(_ outgoing: OutgoingRecord) -> JSONValue {
        let record = outgoing.record
        var fields: [String: JSONValue] = [:]
        for (name, value) in record.fields where outgoing.desiredKeys?.contains(name) ?? true {
            fields[name] = json(value, recordID: record.id, field: name)
        }
        var object: [String: JSONValue] = [
            "recordName": .string(record.id.recordName), "recordType": .string(record.recordType),
            "fields": .object(fields), "zoneID": json(record.id.zoneID), "pluginFields": [:], "deleted": false,
        ]
        if let system = record.systemFields {
            if let tag = system.changeTag { object["recordChangeTag"] = .string(tag) }
            object["created"] = stamp(system.creationDate, system.creatorUserRecordName, device: nil)
            object["modified"] = stamp(
                system.modificationDate, system.lastModifiedUserRecordName, device: system.modifiedByDevice)
            if let shareID = system.shareID {
                object["share"] = ["recordName": .string(shareID.recordName), "zoneID": json(shareID.zoneID)]
            }
        }
        // A parent is in its child's zone: the reference's record pointer has only its name.
        if let parent = record.parentID { object["parent"] = ["recordName": .string(parent.recordName)] }
        addShareState(of: record, to: &object)
        return .object(object)
    }

    private func stamp(_ date: Date?, _ user: String?, device: String?) -> JSONValue {
        var members: [String: JSONValue] = [:]
        if let date { members["timestamp"] = .int(Self.milliseconds(date)) }
        if let user {
            let isOwner = user == CloudRecord.ZoneID.currentUserOwnerName || user == databaseUserRecordName
            members["userRecordName"] = .string(isOwner ? ownerRecordName : user)
        }
        if let device { members["deviceID"] = .string(device) }
        return .object(members)
    }

    /// A field value with its type; an empty list is `UNKNOWN_LIST`, as CloudKit sends it.
    private func json(_ value: CloudValue, recordID: CloudRecord.ID, field: String) -> JSONValue {
        let wire: JSONValue =
            switch value {
            case .string(let string): .string(string)
            case .int64(let int): .int(int)
            case .double(let double): .double(double)
            case .date(let date): .int(Self.milliseconds(date))
            case .bytes(let data): .string(data.base64EncodedString())
            case .reference(let reference): json(reference)
            case .asset(let asset): json(asset, url: downloadURL(recordID, field, nil))
            case .location(let location): Self.json(location)
            case .stringList(let list): .array(list.map { .string($0) })
            case .int64List(let list): .array(list.map { .int($0) })
            case .doubleList(let list): .array(list.map { .double($0) })
            case .dateList(let list): .array(list.map { .int(Self.milliseconds($0)) })
            case .bytesList(let list): .array(list.map { .string($0.base64EncodedString()) })
            case .referenceList(let list): .array(list.map(json))
            case .assetList(let list):
                .array(list.enumerated().map { json($1, url: downloadURL(recordID, field, $0)) })
            case .locationList(let list): .array(list.map(Self.json))
            }
        if case .array(let list) = wire, list.isEmpty { return ["type": "UNKNOWN_LIST", "value": []] }
        return ["type": .string(value.kind.rawValue), "value": wire]
    }

    private func json(_ reference: CloudReference) -> JSONValue {
        [
            "recordName": .string(reference.recordID.recordName), "zoneID": json(reference.recordID.zoneID),
            "action": .string(reference.action.rawValue),
        ]
    }

    /// An asset as the wire shows it. One in a file was read by `outgoing(_:desiredKeys:)`, which gave it the
    /// file's size and checksum (and contents, to embed), so nothing here reads a file.
    private func json(_ asset: CloudAsset, url: String) -> JSONValue {
        var members: [String: JSONValue] = [:]
        let contents = asset.data
        if let size = asset.size ?? contents.map({ Int64($0.count) }) { members["size"] = .int(size) }
        if let checksum = contents.map(Self.checksum) ?? asset.fileChecksum {
            members["fileChecksum"] = .string(checksum)
        }
        if let contents, embedsAssetData { members["data"] = .string(contents.base64EncodedString()) }
        if contents != nil || asset.fileURL != nil {
            members["downloadURL"] = .string(url)
            members["wrappingKey"] = "emulator"
            members["referenceChecksum"] = members["fileChecksum"]
        }
        return .object(members)
    }

    static func json(_ location: CloudLocation) -> JSONValue {
        var members: [String: JSONValue] = [
            "latitude": .double(location.latitude), "longitude": .double(location.longitude),
            "altitude": .double(location.altitude), "horizontalAccuracy": .double(location.horizontalAccuracy),
            "verticalAccuracy": .double(location.verticalAccuracy), "course": .double(location.course),
            "speed": .double(location.speed),
        ]
        if let timestamp = location.timestamp { members["timestamp"] = .int(milliseconds(timestamp)) }
        return .object(members)
    }

    /// The checksum the emulator gives an asset: SHA-256, base64, as CloudKit's are base64 digests.
    static func checksum(_ data: Data) -> String {
        Data(SHA256.hash(data: data)).base64EncodedString()
    }

    /// A record from a save operation's `record`. Fields sent with a `null` value are cleared.
    ///
    /// - Parameter current: The server's record, for assets the client sends back as it received them (with a
    ///   checksum and no receipt): their bytes are the server's.
    func record(_ object: JSONValue, zone: CloudRecord.ZoneID, current: CloudRecord?) throws(ServerError)
        -> CloudRecord
    {
        guard let name = object["recordName"]?.string, !name.isEmpty else {
            throw .badRequest("a record needs a recordName")
        }
        guard let type = object["recordType"]?.string, !type.isEmpty else {
            throw .badRequest("record \(name) needs a recordType")
        }
        var record = CloudRecord(recordType: type, id: CloudRecord.ID(recordName: name, zoneID: zone))
        guard let fields = object["fields"]?.object ?? (object["fields"] == nil ? [:] : nil) else {
            throw .badRequest("record \(name): fields must be an object")
        }
        for (field, item) in fields.sorted(by: { $0.key < $1.key }) {
            if let value = try fieldValue(item, field: field, record: name, current: current?.fields[field]) {
                record.fields[field] = value
            } else {
                record.clearedFieldNames.append(field)
            }
        }
        if let tag = object["recordChangeTag"]?.string {
            record.systemFields = CloudRecord.SystemFields(changeTag: tag)
        }
        if let parent = object["parent"], !parent.isNull {
            guard let parentName = parent["recordName"]?.string, !parentName.isEmpty else {
                throw .badRequest("record \(name): a parent needs a recordName")
            }
            record.parentID = CloudRecord.ID(recordName: parentName, zoneID: zone)
        }
        if type == CloudShare.recordType {
            record.shareContents = try shareContents(object, name: name, current: current)
        }
        return record
    }

    /// A field's value, `nil` for a cleared one (`value` null or missing). `current` is the value the record
    /// holds, whose assets a save may send back as they were fetched.
    func fieldValue(_ item: JSONValue, field: String, record: String, current: CloudValue? = nil) throws(ServerError)
        -> CloudValue?
    {
        let value = item["value"] ?? .null
        if value.isNull { return nil }
        let reader = WireFieldReader(
            coding: self, type: item["type"]?.string ?? Self.inferredType(of: value), field: field, record: record,
            current: current)
        return try reader.read(value)
    }

    /// The type of an empty list whose element type the client didn't know, as CloudKit names it; not a
    /// ``CloudValue/Kind``: stored as an empty list of strings.
    static let unknownList = "UNKNOWN_LIST"

    /// The type CloudKit infers for an untyped value. A number is `INT64` or `DOUBLE`; an untyped timestamp is
    /// therefore taken for an `INT64`, which is why clients must always send the type.
    static func inferredType(of value: JSONValue) -> String {
        switch value {
        case .int: CloudValue.Kind.int64.rawValue
        case .double: CloudValue.Kind.double.rawValue
        case .string: CloudValue.Kind.string.rawValue
        case .array(let items): items.first.map { inferredType(of: $0) + "_LIST" } ?? unknownList
        case .object(let members) where members["latitude"] != nil: CloudValue.Kind.location.rawValue
        case .object(let members) where members["recordName"] != nil: CloudValue.Kind.reference.rawValue
        case .object: CloudValue.Kind.asset.rawValue
        case .null, .bool: "UNKNOWN"
        }
    }
}
