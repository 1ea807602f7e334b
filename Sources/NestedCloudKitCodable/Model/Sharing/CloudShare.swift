import Foundation

/// A share: the record that gives other users access to a record and the records below it, or to a whole zone.
/// The portable counterpart of `CKShare`.
///
/// A share is a record of type ``recordType`` in the owner's private database, in the zone of what it shares
/// (never the default zone: CloudKit shares only custom zones). Besides its fields (``title``), it keeps who may
/// use it (``participants``, ``publicPermission``) and, once saved, where to accept it (``url``):
///
/// ```swift
/// var share = try CloudShare(rootRecord: listRecord)
/// share.title = "Groceries"
/// try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
/// ```
///
/// A record share covers the root record and every record whose ``CloudRecord/parentID`` leads to it; a zone-wide
/// share (``init(zoneID:)``) covers every record of its zone. Participants see the shared records in their shared
/// database once they accept the share.
public struct CloudShare: Sendable, Hashable, Identifiable {
    /// The record type of every share, `CKRecord.SystemType.share`.
    public static let recordType = "cloudkit.share"

    /// The record name of a zone-wide share, `CKRecordNameZoneWideShare`: a zone has at most one.
    public static let zoneWideRecordName = "cloudkit.zoneshare"

    /// The names of the fields CloudKit gives a share, as `CKShare.SystemFieldKey` names them.
    public enum FieldKey {
        /// The share's title, a string, shown to the users it is offered to.
        public static let title = "cloudkit.title"
        /// A thumbnail image's data, shown with the title.
        public static let thumbnailImageData = "cloudkit.thumbnailImageData"
        /// A reverse-DNS string naming the kind of what is shared.
        public static let shareType = "cloudkit.type"

        /// Every one of them: a share's fields may have these names, which other records' fields can't.
        static let all: Set<String> = [title, thumbnailImageData, shareType]
    }

    /// The share as a record: its ID, its fields and, once saved, its system fields. Every ``CloudDatabase``
    /// saves, fetches and reports shares as records; ``init(record:)`` reads one back.
    public private(set) var record: CloudRecord

    /// The share's record ID.
    public var id: CloudRecord.ID { record.id }

    /// Shares a record and the records whose ``CloudRecord/parentID`` leads to it. Save the share together with
    /// the root record, as CloudKit asks.
    ///
    /// - Parameters:
    ///   - rootRecord: The record at the top of what is shared.
    ///   - shareID: The share's ID, in the root record's zone; a new unique name by default.
    /// - Throws: ``CloudShareError/defaultZoneCannotBeShared(_:)`` for a record in the default zone, and
    ///   ``CloudShareError/shareOutsideRootZone(shareID:rootRecordID:)`` for a share ID in another zone.
    public init(rootRecord: CloudRecord, shareID: CloudRecord.ID? = nil) throws {
        try self.init(rootRecordID: rootRecord.id, shareID: shareID)
    }

    /// Shares the record with this ID and the records whose ``CloudRecord/parentID`` leads to it.
    ///
    /// - Throws: as ``init(rootRecord:shareID:)``.
    public init(rootRecordID: CloudRecord.ID, shareID: CloudRecord.ID? = nil) throws {
        let zoneID = rootRecordID.zoneID
        guard zoneID.zoneName != CloudRecord.ZoneID.defaultZoneName else {
            throw CloudShareError.defaultZoneCannotBeShared(zoneID)
        }
        let id = shareID ?? CloudRecord.ID(recordName: UUID().uuidString, zoneID: zoneID)
        guard id.zoneID == zoneID else {
            throw CloudShareError.shareOutsideRootZone(shareID: id, rootRecordID: rootRecordID)
        }
        var record = CloudRecord(recordType: Self.recordType, id: id)
        record.shareContents = Contents(rootRecordID: rootRecordID)
        self.record = record
    }

    /// Shares every record of a zone, present and future. The share's record name is ``zoneWideRecordName``.
    ///
    /// - Throws: ``CloudShareError/defaultZoneCannotBeShared(_:)`` for the default zone.
    public init(zoneID: CloudRecord.ZoneID) throws {
        guard zoneID.zoneName != CloudRecord.ZoneID.defaultZoneName else {
            throw CloudShareError.defaultZoneCannotBeShared(zoneID)
        }
        var record = CloudRecord(
            recordType: Self.recordType, id: CloudRecord.ID(recordName: Self.zoneWideRecordName, zoneID: zoneID))
        record.shareContents = Contents(rootRecordID: nil)
        self.record = record
    }

    /// Reads a share from its record, as a database returns it.
    ///
    /// - Throws: ``CloudShareError/notAShare(_:recordType:)`` for a record of another type.
    public init(record: CloudRecord) throws {
        guard record.recordType == Self.recordType else {
            throw CloudShareError.notAShare(record.id, recordType: record.recordType)
        }
        var record = record
        if record.shareContents == nil {
            // A share record saved by a client that kept no share state: what its name says it shares, no one yet.
            record.shareContents = Contents(rootRecordID: nil)
        }
        self.record = record
    }

    // MARK: What is shared

    /// The ID of the record at the top of what is shared; `nil` for a zone-wide share, and for a record share read
    /// from CloudKit Web Services, whose answers don't say what a share shares (as `CKShare` doesn't): there, the
    /// root's ``CloudRecord/SystemFields/shareID`` names the share.
    public var rootRecordID: CloudRecord.ID? { contents.rootRecordID }

    /// Whether the share covers its whole zone: whether it has the name of a zone-wide share.
    public var isZoneWide: Bool { record.id.recordName == Self.zoneWideRecordName }

    // MARK: Fields

    /// The title shown to the users the share is offered to, the ``FieldKey/title`` field.
    public var title: String? {
        get { if case .string(let title)? = record[FieldKey.title] { title } else { nil } }
        set { record[FieldKey.title] = newValue.map(CloudValue.string) }
    }

    /// A reverse-DNS string naming the kind of what is shared, the ``FieldKey/shareType`` field.
    public var shareType: String? {
        get { if case .string(let type)? = record[FieldKey.shareType] { type } else { nil } }
        set { record[FieldKey.shareType] = newValue.map(CloudValue.string) }
    }

    /// The share's system fields, once saved; saving the share again needs them, as for any record.
    public var systemFields: CloudRecord.SystemFields? {
        get { record.systemFields }
        set { record.systemFields = newValue }
    }

    // MARK: Who may use it

    /// What anyone with the share's URL may do. With ``Permission/none`` (the default), only the invited
    /// participants may accept the share; saving a share with `none` removes its public participants.
    public var publicPermission: Permission {
        get { contents.publicPermission }
        set { record.shareContents?.publicPermission = newValue }
    }

    /// The share's participants, the owner included once the share is saved.
    public var participants: [Participant] { contents.participants }

    /// The owner, once the share is saved.
    public var owner: Participant? { contents.participants.first { $0.role == .owner } }

    /// Invites a user, or changes the permission of one already invited.
    ///
    /// - Throws: ``CloudShareError/participantWithoutIdentity`` for a participant with neither a user record name
    ///   nor an email address, ``CloudShareError/participantRoleNotInvitable(_:)`` for an owner or a public
    ///   user (the server makes those), and ``CloudShareError/publicShareWithInvitedParticipants(_:)`` while the
    ///   share has a public permission: CloudKit changes a share's participants only while its
    ///   ``publicPermission`` is ``Permission/none``, and never mixes public and invited users.
    public mutating func addParticipant(_ participant: Participant) throws {
        guard participant.userRecordName != nil || participant.emailAddress != nil else {
            throw CloudShareError.participantWithoutIdentity
        }
        guard participant.role == .privateUser else {
            throw CloudShareError.participantRoleNotInvitable(participant.role)
        }
        guard publicPermission == .none else { throw CloudShareError.publicShareWithInvitedParticipants(id) }
        var participants = contents.participants
        if let index = participants.firstIndex(where: { $0.isSameUser(as: participant) }) {
            guard participants[index].role != .owner else {
                throw CloudShareError.participantRoleNotInvitable(.owner)
            }
            participants[index].permission = participant.permission
        } else {
            participants.append(participant)
        }
        record.shareContents?.participants = participants
    }

    /// Removes a participant: once the share is saved, they no longer see the shared records. Returns whether the
    /// share had them; the owner can't be removed (delete the share to stop sharing).
    @discardableResult
    public mutating func removeParticipant(_ participant: Participant) -> Bool {
        guard participant.role != .owner,
            let index = contents.participants.firstIndex(where: { $0.isSameUser(as: participant) && $0.role != .owner })
        else { return false }
        record.shareContents?.participants.remove(at: index)
        return true
    }

    /// Removes the participant with this user record name, as ``addParticipant(_:)`` invites one by it. Returns
    /// whether the share had them; the owner can't be removed.
    @discardableResult
    public mutating func removeParticipant(userRecordName: String) -> Bool {
        removeParticipant(Participant(userRecordName: userRecordName))
    }

    /// Removes the participant invited by this email address (compared without case), as ``addParticipant(_:)``
    /// invites one by it. Returns whether the share had them; the owner can't be removed.
    @discardableResult
    public mutating func removeParticipant(emailAddress: String) -> Bool {
        removeParticipant(Participant(emailAddress: emailAddress))
    }

    // MARK: Where to accept it

    /// The URL that offers the share to other users; the server assigns it when the share is first saved.
    public var url: URL? { contents.url }

    /// The short identifier in ``url`` that `records/resolve` and `records/accept` take.
    public var shortGUID: String? { contents.shortGUID }

    /// The share's state, which every share record has (the initializers make sure of it).
    private var contents: Contents { record.shareContents ?? Contents(rootRecordID: nil) }
}
