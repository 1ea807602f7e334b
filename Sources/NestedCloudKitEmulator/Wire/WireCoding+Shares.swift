import Foundation
import NestedCloudKitCodable

/// A share's state on the wire: `shortGUID`, `publicPermission`, `participants` and `owner`, read from a save and
/// written in every answer that holds a share record.
extension WireCoding {
    /// The state a share's save sends: its public permission and the participants the owner invited. What it
    /// shares comes from the server's copy (a record share's root never changes) or, for a new share, from the
    /// root saved in the same request (``RecordsEndpoint``); a zone-wide share shares its zone.
    func shareContents(_ object: JSONValue, name: String, current: CloudRecord?) throws(ServerError)
        -> CloudShare.Contents
    {
        var contents = CloudShare.Contents(rootRecordID: current?.shareContents?.rootRecordID)
        if let permission = object["publicPermission"], !permission.isNull {
            guard let text = permission.string, let value = CloudShare.Permission(rawValue: text) else {
                throw .badRequest("share \(name): publicPermission is NONE, READ_ONLY or READ_WRITE")
            }
            contents.publicPermission = value
        }
        for item in object["participants"]?.array ?? [] {
            contents.participants.append(try participant(item, share: name))
        }
        return contents
    }

    private func participant(_ item: JSONValue, share: String) throws(ServerError) -> CloudShare.Participant {
        let identity = item["userIdentity"]
        let userRecordName = identity?["userRecordName"]?.string ?? identity?["lookupInfo"]?["userRecordName"]?.string
        let email = identity?["lookupInfo"]?["emailAddress"]?.string
        guard userRecordName != nil || email != nil else {
            throw .badRequest("share \(share): a participant needs a userIdentity with a userRecordName or an email")
        }
        func value<Value: RawRepresentable<String>>(_ key: String, default fallback: Value) throws(ServerError)
            -> Value
        {
            guard let wire = item[key], !wire.isNull else { return fallback }
            guard let text = wire.string, let value = Value(rawValue: text) else {
                throw .badRequest("share \(share): a participant's \(key) can't be \(wire)")
            }
            return value
        }
        return CloudShare.Participant(
            userRecordName: userRecordName, emailAddress: email,
            role: try value("type", default: CloudShare.Role.privateUser),
            permission: try value("permission", default: CloudShare.Permission.readOnly),
            acceptanceStatus: try value("acceptanceStatus", default: CloudShare.AcceptanceStatus.pending),
            participantID: item["participantId"]?.string)
    }

    /// The share's state as an answer gives it, added to the record's dictionary.
    func addShareState(of record: CloudRecord, to object: inout [String: JSONValue]) {
        guard let contents = record.shareContents else { return }
        object["publicPermission"] = .string(contents.publicPermission.rawValue)
        object["participants"] = .array(contents.participants.map(json))
        if let owner = contents.participants.first(where: { $0.role == .owner }) { object["owner"] = json(owner) }
        if let shortGUID = contents.shortGUID {
            object["shortGUID"] = .string(shortGUID)
            // Where the emulator serves the share (SharePage): CloudKit's answers have no URL, and clients make an
            // iCloud one from the short GUID, which would lead away from the emulator.
            if let shareURL { object["url"] = .string(shareURL(shortGUID)) }
        }
    }

    private func json(_ participant: CloudShare.Participant) -> JSONValue {
        var identity: [String: JSONValue] = [:]
        if let name = participant.userRecordName {
            let isOwner = name == CloudRecord.ZoneID.currentUserOwnerName || name == databaseUserRecordName
            identity["userRecordName"] = .string(isOwner ? ownerRecordName : name)
        }
        if let email = participant.emailAddress { identity["lookupInfo"] = ["emailAddress": .string(email)] }
        var object: [String: JSONValue] = [
            "userIdentity": .object(identity), "type": .string(participant.role.rawValue),
            "acceptanceStatus": .string(participant.acceptanceStatus.rawValue),
            "permission": .string(participant.permission.rawValue),
        ]
        if let id = participant.participantID { object["participantId"] = .string(id) }
        return .object(object)
    }
}
