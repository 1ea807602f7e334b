import Foundation

/// `assets/upload`, the first step of an upload: asks for a URL for each asset field to fill.
struct WireAssetUploadRequest: Codable, Hashable, Sendable {
    struct Token: Codable, Hashable, Sendable {
        var recordName: String
        var recordType: String
        var fieldName: String
    }

    var zoneID: WireZoneID
    var tokens: [Token]
}

/// The `assets/upload` response: where to send each asset's bytes.
struct WireAssetUploadResponse: Codable, Hashable, Sendable {
    struct Token: Codable, Hashable, Sendable {
        var recordName: String?
        var fieldName: String?
        var url: String
    }

    var tokens: [Token]
}

/// What the second step, the POST of the bytes, returns: the dictionary to put in the asset field.
struct WireAssetUploadReceipt: Codable, Hashable, Sendable {
    var singleFile: WireAsset
}
