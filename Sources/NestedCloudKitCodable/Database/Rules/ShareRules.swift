import Foundation

/// CloudKit's rules for shares and parents, as a server applies them when a record is saved or deleted: part of
/// `CloudModificationPlan`, so that every backend built on it shares the same way.
///
/// - A share is a record of type ``CloudShare/recordType`` in a custom zone, never the default zone. A record share
///   names its root record, in its own zone; a zone-wide share is named ``CloudShare/zoneWideRecordName``.
/// - A new record share is saved with its root record, in the same request; the server then sets the root's
///   ``CloudRecord/SystemFields/shareID``. A record has at most one share.
/// - The server makes the user who saves a share its owner (the first participant, reading and writing), gives
///   the share a short GUID and a URL on its first save and keeps them, keeps each participant's acceptance (new
///   ones are pending) and removes the public participants when the public permission is ``CloudShare/Permission/none``.
/// - A share is public (anyone with its URL may join, with its public permission) or private (invited
///   participants), never both: one with a public permission and invited participants is refused.
/// - A record's parent is in its own zone and isn't the record itself.
/// - Deleting a shared root deletes its share; deleting a share takes the share ID off its root.
package enum ShareRules {
    /// Why CloudKit refuses the record's parent or share state whatever the server holds, or `nil`.
    package static func refusal(saving record: CloudRecord) -> CloudDatabaseError? {
        if let parent = record.parentID {
            if parent.zoneID != record.id.zoneID {
                return .invalidArguments(
                    "\(record.id)'s parent \(parent) is in another zone; a parent must be in its child's zone")
            }
            if parent == record.id { return .invalidArguments("\(record.id) can't be its own parent") }
        }
        guard record.recordType == CloudShare.recordType else {
            if record.shareContents != nil {
                return .invalidArguments(
                    "\(record.id) is a \(record.recordType) with a share's state; only \(CloudShare.recordType) "
                        + "records are shares: make shares with CloudShare")
            }
            return nil
        }
        if record.id.zoneID.zoneName == CloudRecord.ZoneID.defaultZoneName {
            return .invalidArguments(
                "share \(record.id) is in the default zone, which CloudKit doesn't share; share records of a custom zone"
            )
        }
        let isZoneWideName = record.id.recordName == CloudShare.zoneWideRecordName
        guard let contents = record.shareContents else {
            return isZoneWideName
                ? nil
                : .invalidArguments("share \(record.id) has no share state; make shares with CloudShare")
        }
        // "You can't mix and match public and private users in the same share" (`CKShare.addParticipant(_:)`).
        if contents.publicPermission != .none,
            contents.participants.contains(where: { $0.role == .privateUser && $0.acceptanceStatus != .removed })
        {
            return .invalidArguments(CloudShareError.publicShareWithInvitedParticipants(record.id).description)
        }
        // A record share without its root may be one read back from CloudKit Web Services, which doesn't say what
        // a share shares: the server knows, and refuses a new one (`CloudModificationPlan`).
        switch (contents.rootRecordID, isZoneWideName) {
        case (.some, true):
            return .invalidArguments(
                "share \(record.id) has a root record but the name of a zone-wide share; give it another name")
        case (.some(let root), false) where root.zoneID != record.id.zoneID:
            return .invalidArguments("share \(record.id)'s root \(root) is in another zone; share it from its own zone")
        default:
            return nil
        }
    }

    /// A share's state as the server stores it: its owner first, participants kept as the server knows them, the
    /// short GUID and URL the server gave it (new ones on the first save).
    package static func storedContents(
        client: CloudShare.Contents?, server: CloudShare.Contents?, savedBy owner: String,
        makeShortGUID: () -> String, makeURL: (String) -> URL?
    ) -> CloudShare.Contents {
        var stored = client ?? server ?? CloudShare.Contents(rootRecordID: nil)
        // What a share shares never changes.
        if let server { stored.rootRecordID = server.rootRecordID }
        let shortGUID = server?.shortGUID ?? makeShortGUID()
        stored.shortGUID = shortGUID
        stored.url = server?.url ?? makeURL(shortGUID)
        let ownerParticipant =
            server?.participants.first { $0.role == .owner }
            ?? CloudShare.Participant(
                userRecordName: owner, role: .owner, permission: .readWrite, acceptanceStatus: .accepted)
        var participants = [ownerParticipant]
        for var participant in stored.participants where participant.role != .owner {
            if participant.role == .publicUser, stored.publicPermission == .none { continue }
            if participants.contains(where: { $0.isSameUser(as: participant) }) { continue }
            if let known = server?.participants.first(where: { $0.isSameUser(as: participant) }) {
                // Only the participant accepts or leaves; the owner's copy can't change that, nor who they are.
                participant.acceptanceStatus = known.acceptanceStatus
                participant.participantID = known.participantID
                participant.role = known.role
                participant.userRecordName = participant.userRecordName ?? known.userRecordName
            } else {
                guard participant.role == .privateUser else { continue }
                participant.acceptanceStatus = .pending
                // Unique for good: a participant removed and invited again is a new participant.
                participant.participantID = UUID().uuidString
            }
            participants.append(participant)
        }
        participants[0].participantID = participants[0].participantID ?? UUID().uuidString
        stored.participants = participants
        return stored
    }

    /// A short GUID for a share's URL: the 122 random bits of a version 4 UUID, in lowercase hexadecimal, so that
    /// one share's URL tells nothing about another's.
    package static func makeShortGUID() -> String {
        UUID().uuidString.lowercased().filter { $0 != "-" }
    }

    /// The URL of a share with this short GUID, as CloudKit makes them; `nil` for a short GUID no URL can hold
    /// (one a server sent with spaces, say), rather than a URL that leads elsewhere.
    package static func iCloudURL(shortGUID: String) -> URL? {
        URL(string: "https://www.icloud.com/share/\(shortGUID)")
    }
}
