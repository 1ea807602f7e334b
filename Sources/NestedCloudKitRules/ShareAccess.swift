import Foundation
import NestedCloudKitCodable

/// Who may use a share, and what a share lets a user do with a record, as CloudKit's server decides: the rules a
/// backend with several users applies when a user accepts a share and when they read or write what was shared
/// with them.
package enum ShareAccess {
    /// A share's state once `user` accepts it, or why they can't.
    ///
    /// An invited participant (by user record name) becomes accepted, keeping the permission the owner gave them. A
    /// user the owner didn't invite joins as a public user with the share's public permission, if it has one. A
    /// participant the owner removed, or one who left, is accepted again only if the share is public.
    ///
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for the owner accepting their own share, and
    ///   `CloudDatabaseError/permissionFailure(_:)` for a user the share doesn't let in.
    package static func accepting(_ contents: CloudShare.Contents, by user: String, shareID: CloudRecord.ID)
        throws(CloudDatabaseError) -> CloudShare.Contents
    {
        var contents = contents
        if let owner = contents.participants.first(where: { $0.role == .owner }), owner.userRecordName == user {
            throw .invalidArguments(
                "\(user) owns share \(shareID) and sees its records in their private database: only other users "
                    + "accept a share")
        }
        if let index = contents.participants.firstIndex(where: { $0.userRecordName == user && $0.role != .owner }),
            contents.participants[index].acceptanceStatus != .removed
        {
            contents.participants[index].acceptanceStatus = .accepted
            return contents
        }
        guard contents.publicPermission != .none else {
            throw .permissionFailure(
                "this share isn't public and \(user) isn't one of its participants: ask its owner to invite them")
        }
        contents.participants.removeAll { $0.userRecordName == user && $0.role != .owner }
        contents.participants.append(
            CloudShare.Participant(
                userRecordName: user, role: .publicUser, permission: contents.publicPermission,
                acceptanceStatus: .accepted, participantID: UUID().uuidString))
        return contents
    }

    /// Where `user` stands in a share before accepting it, as its metadata says: the role, status and permission
    /// of their invitation; for anyone else, a public user with the share's public permission.
    ///
    /// - Throws: `CloudDatabaseError/permissionFailure(_:)` for a user a private share doesn't list.
    package static func standing(of user: String, in contents: CloudShare.Contents, shareID: CloudRecord.ID)
        throws(CloudDatabaseError) -> (
            role: CloudShare.Role, status: CloudShare.AcceptanceStatus,
            permission: CloudShare.Permission
        )
    {
        // A participant who left, or was removed, stands as anyone else would.
        if let participant = contents.participants.first(where: { $0.userRecordName == user }),
            participant.acceptanceStatus != .removed,
            participant.role != .publicUser || participant.acceptanceStatus == .accepted
        {
            return (participant.role, participant.acceptanceStatus, participant.permission)
        }
        guard contents.publicPermission != .none else {
            throw .permissionFailure(
                "this share isn't public and \(user) isn't one of its participants: ask its owner to invite them")
        }
        return (.publicUser, .unknown, contents.publicPermission)
    }

    /// What a user who isn't the zone's owner may do with a record of the zone: the permission of the share that
    /// covers it and that the user accepted, or `nil` when no such share covers it.
    ///
    /// A zone-wide share (named `cloudkit.zoneshare`) covers every record of its zone; a record share covers its
    /// root and every record whose parent leads to the root. A share covers itself. With several shares, the most
    /// permissive wins. A share read back from CloudKit doesn't name its root: the root is then the record of the
    /// line whose `shareID` names the share.
    ///
    /// - Parameter shares: The share records of the record's zone.
    package static func permission(
        of user: String, on id: CloudRecord.ID, in store: some CloudRecordStore, shares: [CloudRecord]
    ) throws -> CloudShare.Permission? {
        let accepted = shares.compactMap { record -> (share: CloudRecord, permission: CloudShare.Permission)? in
            guard
                let participant = record.shareContents?.participants.first(where: {
                    $0.userRecordName == user && $0.acceptanceStatus == .accepted && $0.role != .owner
                }), participant.permission != .none
            else { return nil }
            return (record, participant.permission)
        }
        guard !accepted.isEmpty else { return nil }
        var best: CloudShare.Permission?
        func grant(_ permission: CloudShare.Permission) {
            if best != .readWrite { best = permission }
        }
        // The record's line of parents, up to the first record that isn't there, each once (a cycle ends it).
        var line: Set<CloudRecord.ID> = []
        var sharesInLine: Set<CloudRecord.ID> = []
        var next: CloudRecord.ID? = id
        while let current = next, line.insert(current).inserted {
            let record = try store.record(withID: current)
            if let shareID = record?.systemFields?.shareID { sharesInLine.insert(shareID) }
            next = record?.parentID
        }
        for (share, permission) in accepted {
            let covers =
                share.id == id  // a share covers itself: its participants read it
                || share.id.recordName == CloudShare.zoneWideRecordName
                || share.shareContents?.rootRecordID.map(line.contains) ?? sharesInLine.contains(share.id)
            if covers { grant(permission) }
        }
        return best
    }

    /// What a user who isn't the zone's owner may do when saving this version of a record: the lesser of their
    /// permission on the stored record, if there is one, and on the new version, whose parent may lead elsewhere.
    /// `nil` when no share the user accepted covers the new version (a new record whose parent isn't shared).
    ///
    /// - Parameter batch: The other records saved with it, as they will be: a new child's new parent, saved in the
    ///   same request, leads to the share as the stored one would.
    package static func permission(
        of user: String, forSaving record: CloudRecord, in store: some CloudRecordStore, shares: [CloudRecord],
        batch: [CloudRecord.ID: CloudRecord] = [:]
    ) throws -> CloudShare.Permission? {
        var saving = batch
        saving[record.id] = record
        let future = StoreWithRecords(base: store, records: saving)
        let saved = try permission(of: user, on: record.id, in: future, shares: shares)
        guard let stored = try store.record(withID: record.id) else { return saved }
        // Moving a record (a shared root, say) under another parent needs write permission there too: else a
        // participant could carry what is shared with them under a record shared with someone else.
        if let parent = record.parentID, parent != stored.parentID,
            try permission(of: user, on: parent, in: future, shares: shares) != .readWrite
        {
            return saved == nil ? nil : .readOnly
        }
        switch try permission(of: user, on: record.id, in: store, shares: shares) {
        case .readWrite?: return saved
        case nil: return nil
        case .readOnly?, CloudShare.Permission.none?: return saved == nil ? nil : .readOnly
        }
    }

    /// A share's state once `user` leaves it, as a participant does by deleting it from their shared database: an
    /// invited participant is marked removed (so that the owner sees who left), a public user is dropped.
    package static func leaving(_ contents: CloudShare.Contents, by user: String) -> CloudShare.Contents {
        var contents = contents
        contents.participants.removeAll { $0.userRecordName == user && $0.role == .publicUser }
        for index in contents.participants.indices
        where contents.participants[index].userRecordName == user && contents.participants[index].role != .owner {
            contents.participants[index].acceptanceStatus = .removed
        }
        return contents
    }

    /// A store with records replaced by the versions being saved, so that a permission follows the new parents.
    private struct StoreWithRecords<Base: CloudRecordStore>: CloudRecordStore {
        let base: Base
        let records: [CloudRecord.ID: CloudRecord]

        /// The version being saved, with the stored version's share: the server keeps a root's `shareID`, which a
        /// client's new version (a model encoded again) doesn't carry.
        func record(withID id: CloudRecord.ID) throws -> CloudRecord? {
            guard var saving = records[id] else { return try base.record(withID: id) }
            if saving.systemFields?.shareID == nil, let shareID = try base.record(withID: id)?.systemFields?.shareID {
                var fields = saving.systemFields ?? CloudRecord.SystemFields()
                fields.shareID = shareID
                saving.systemFields = fields
            }
            return saving
        }

        func ancestor(of id: CloudRecord.ID, changeTag: String) throws -> CloudRecord? {
            try base.ancestor(of: id, changeTag: changeTag)
        }

        func referenceHolders(of id: CloudRecord.ID) throws -> [(
            holder: CloudRecord.ID, action: CloudReference.Action
        )] {
            try base.referenceHolders(of: id)
        }

        func containsZone(_ zoneID: CloudRecord.ZoneID) throws -> Bool { try base.containsZone(zoneID) }
    }
}
