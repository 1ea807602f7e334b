import Foundation
import NestedCloudKitCodable

extension WireRecord {
    /// The record as a save operation sends it: type, fields and, when `sendingChangeTag`, the change tag the
    /// server checks. When `clearingFields`, the fields it clears go as `null` values.
    init(_ record: CloudRecord, sendingChangeTag: Bool, clearingFields: Bool = false) {
        var fields: [String: WireField] = [:]
        fields.reserveCapacity(record.fields.count)
        for (name, value) in record.fields { fields[name] = WireField(value) }
        if clearingFields, record.clearsFields {
            for name in record.clearedFieldNames where fields[name] == nil { fields[name] = WireField(nil) }
        }
        self.init(
            recordName: record.id.recordName, recordType: record.recordType,
            recordChangeTag: sendingChangeTag ? record.systemFields?.changeTag : nil, fields: fields
        )
        // A parent is in its child's zone, so its name is enough.
        parent = record.parentID.map { WireRecordPointer(recordName: $0.recordName) }
        if let contents = record.shareContents {
            publicPermission = contents.publicPermission.rawValue
            // The server makes the owner; the others go as the owner set them.
            participants = contents.participants.filter { $0.role != .owner }.map(WireShareParticipant.init)
        }
    }

    /// The portable record, in the zone the request named (`zone`) unless the response names another one.
    ///
    /// Fields come in name order: JSON objects have none, and a record's fields should be the same every run.
    func cloudRecord(in zone: CloudRecord.ZoneID, owners: ZoneOwners) -> CloudRecord {
        let id = CloudRecord.ID(recordName: recordName, zoneID: owners.zoneID(zoneID, default: zone))
        var record = CloudRecord(recordType: recordType ?? "", id: id)
        if let fields {
            record.fields.reserveCapacity(fields.count)
            for name in fields.keys.sorted() {
                guard let value = fields[name]?.value else { continue }
                record.fields[name] = owners.normalizing(value)
            }
        }
        record.systemFields = CloudRecord.SystemFields(
            changeTag: recordChangeTag,
            creationDate: created?.timestamp.map(WireTimestamp.date),
            creatorUserRecordName: created?.userRecordName,
            modificationDate: modified?.timestamp.map(WireTimestamp.date),
            lastModifiedUserRecordName: modified?.userRecordName,
            modifiedByDevice: modified?.deviceID,
            shareID: share.map {
                CloudRecord.ID(recordName: $0.recordName, zoneID: owners.zoneID($0.zoneID, default: id.zoneID))
            }
        )
        record.parentID = parent.map { CloudRecord.ID(recordName: $0.recordName, zoneID: id.zoneID) }
        if record.recordType == CloudShare.recordType { record.shareContents = shareContents }
        return record
    }

    /// A share's state as the response gives it: the owner first, its URL the one the server gives or, as from
    /// CloudKit, made from its short GUID as CloudKit makes share URLs. The response doesn't say which record a record share shares (its root's `share` does).
    private var shareContents: CloudShare.Contents {
        var participants = (participants ?? []).map(\.participant)
        if let owner = owner?.participant, !participants.contains(where: { $0.role == .owner }) {
            participants.insert(owner, at: 0)
        }
        return CloudShare.Contents(
            rootRecordID: nil,
            publicPermission: publicPermission.flatMap(CloudShare.Permission.init(rawValue:)) ?? .none,
            participants: participants,
            url: url.flatMap(URL.init(string:)) ?? shortGUID.flatMap(ShareRules.iCloudURL(shortGUID:)),
            shortGUID: shortGUID)
    }
}

/// Turns the zone owners a response names back into the ones the request used.
///
/// The client leaves the owner out for the current user's zones and calls it `__defaultOwner__`, as CloudKit's
/// frameworks do; the server answers with the user's real record name. Records and references in the zones the
/// request named get the request's zone ID back, so that results match the IDs asked for.
struct ZoneOwners: Sendable {
    /// The owner names that mean the current user.
    private var currentUserAliases: Set<String> = []

    /// Learns the current user's record name from the zone IDs the server answered a request in `requested` with.
    init(requested: CloudRecord.ZoneID, answers: some Sequence<WireZoneID?>) {
        guard requested.ownerName == CloudRecord.ZoneID.currentUserOwnerName else { return }
        for case let answer? in answers where answer.zoneName == requested.zoneName {
            if let owner = answer.ownerRecordName { currentUserAliases.insert(owner) }
        }
    }

    /// Owner names known to mean the current user: in the private database, every zone's owner (the database
    /// holds only the user's own zones).
    init(currentUserAliases: some Sequence<String>) {
        self.currentUserAliases = Set(currentUserAliases)
    }

    /// The portable zone ID of a response's zone dictionary; `zone` when the response leaves it out.
    func zoneID(_ wire: WireZoneID?, default zone: CloudRecord.ZoneID) -> CloudRecord.ZoneID {
        guard let wire else { return zone }
        guard let owner = wire.ownerRecordName, !currentUserAliases.contains(owner) else {
            return CloudRecord.ZoneID(zoneName: wire.zoneName)
        }
        return CloudRecord.ZoneID(zoneName: wire.zoneName, ownerName: owner)
    }

    /// The value with its references' owners normalized.
    func normalizing(_ value: CloudValue) -> CloudValue {
        guard !currentUserAliases.isEmpty else { return value }
        switch value {
        case .reference(let reference): return .reference(normalizing(reference))
        case .referenceList(let list): return .referenceList(list.map(normalizing))
        default: return value
        }
    }

    private func normalizing(_ reference: CloudReference) -> CloudReference {
        var reference = reference
        let zone = reference.recordID.zoneID
        if currentUserAliases.contains(zone.ownerName) {
            reference.recordID.zoneID = CloudRecord.ZoneID(zoneName: zone.zoneName)
        }
        return reference
    }
}
