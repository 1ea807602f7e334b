import Foundation

/// The request of `records/resolve` and `records/accept`: short GUIDs, each a ShortGUID dictionary.
struct WireShortGUIDsRequest: Codable, Hashable, Sendable {
    struct ShortGUID: Codable, Hashable, Sendable {
        var value: String
        var shouldFetchRootRecord: Bool?
    }

    var shortGUIDs: [ShortGUID]
}

/// The answer of `records/resolve` and `records/accept`: a result for each short GUID, in order, or an error
/// dictionary in its place. The keys are CKToolJS's `CKDBResolvedRecord`'s, which the emulator answers with.
struct WireShareResolutionResponse: Decodable, Sendable {
    struct Resolution: Codable, Hashable, Sendable {
        var shortGUID: String?
        var zoneID: WireZoneID?
        var rootRecordName: String?
        var share: WireRecord?
        var rootRecord: WireRecord?
        var ownerIdentity: WireUserIdentity?
        var participantType: String?
        var participantStatus: String?
        var participantPermission: String?
    }

    var results: [WireItemResult<Resolution>]
}
