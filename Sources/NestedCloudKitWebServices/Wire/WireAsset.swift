import Foundation
import NestedCloudKitCodable

/// An asset dictionary: `{fileChecksum, size, referenceChecksum, wrappingKey, receipt, downloadURL}`.
///
/// A save sends what the upload step returned (the receipt and checksums); a fetch returns the download URL.
struct WireAsset: Codable, Hashable, Sendable {
    var fileChecksum: String?
    var size: Int64?
    var referenceChecksum: String?
    var wrappingKey: String?
    var receipt: String?
    var downloadURL: String?

    init(_ asset: CloudAsset) {
        fileChecksum = asset.fileChecksum
        size = asset.size
        referenceChecksum = asset.referenceChecksum
        wrappingKey = asset.wrappingKey
        receipt = asset.receipt
        downloadURL = asset.downloadURL
    }

    var asset: CloudAsset {
        CloudAsset(
            size: size, fileChecksum: fileChecksum, referenceChecksum: referenceChecksum, wrappingKey: wrappingKey,
            receipt: receipt, downloadURL: downloadURL
        )
    }
}
