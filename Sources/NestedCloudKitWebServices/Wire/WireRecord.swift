import Foundation
import NestedCloudKitCodable

/// A record dictionary: `recordName`, `recordType`, `recordChangeTag`, `fields`, `created`, `modified`, `deleted`,
/// `zoneID`, and for sharing `parent`, `share`, and a share's `shortGUID`, `publicPermission`, `participants` and
/// `owner`. Keys the documentation doesn't name are ignored.
struct WireRecord: Codable, Hashable, Sendable {
    var recordName: String
    var recordType: String?
    var recordChangeTag: String?
    var fields: [String: WireField]?
    var created: WireUserTimestamp?
    var modified: WireUserTimestamp?
    var deleted: Bool?
    var zoneID: WireZoneID?
    /// The record's parent, in its zone.
    var parent: WireRecordPointer?
    /// The share of a shared root, set by the server; in a request, the new share a root is saved with.
    var share: WireRecordPointer?
    /// A share's identifier in its URL, set by the server.
    var shortGUID: String?
    /// What anyone with a share's URL may do (`NONE`, `READ_ONLY`, `READ_WRITE`).
    var publicPermission: String?
    /// A share's participants, its owner included.
    var participants: [WireShareParticipant]?
    /// A share's owner, in responses.
    var owner: WireShareParticipant?
    /// Where a server other than CloudKit serves a share (the emulator sends it); CloudKit's answers leave it out,
    /// and the URL is made from ``shortGUID`` as CloudKit makes share URLs.
    var url: String? = nil

    init(
        recordName: String, recordType: String? = nil, recordChangeTag: String? = nil,
        fields: [String: WireField]? = nil,
        created: WireUserTimestamp? = nil, modified: WireUserTimestamp? = nil, deleted: Bool? = nil,
        zoneID: WireZoneID? = nil
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.created = created
        self.modified = modified
        self.deleted = deleted
        self.zoneID = zoneID
    }
}

/// A record named by its name, and its zone where it may be another than the record's: a record's `parent` and
/// `share`.
struct WireRecordPointer: Codable, Hashable, Sendable {
    var recordName: String
    var zoneID: WireZoneID?
}

/// One item of a response's `records` (or `zones`) array: the item itself, or an error dictionary in its place.
struct WireItemResult<Item: Decodable & Sendable>: Decodable, Sendable {
    var item: Item?
    var error: WireServerError?

    private enum CodingKeys: String, CodingKey {
        case serverErrorCode
    }

    init(item: Item? = nil, error: WireServerError? = nil) {
        self.item = item
        self.error = error
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.serverErrorCode) {
            error = try WireServerError(from: decoder)
        } else {
            item = try Item(from: decoder)
        }
    }
}

extension WireItemResult: Encodable where Item: Encodable {
    func encode(to encoder: any Encoder) throws {
        if let error { try error.encode(to: encoder) } else { try item?.encode(to: encoder) }
    }
}
