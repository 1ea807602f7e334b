import Foundation

/// A file that belongs to a record: stored beside it, not counted in its 1 MB of field data.
///
/// An asset made on this device holds its contents, either as a local file (``fileURL``) or as bytes in memory
/// (``data``, what the encoder makes of a large `Data` value), and a database uploads them when it saves the
/// record. An asset that comes back from a server carries the server's metadata instead: its size, checksums,
/// receipt and download URL.
public struct CloudAsset: Sendable, Hashable, Codable {
    /// The local file that holds the asset's contents, if they are in a file.
    public var fileURL: URL?

    /// The asset's contents, if they are held in memory.
    public var data: Data?

    /// The size of the contents in bytes, as the server reports it.
    public var size: Int64?

    /// The server's checksum of the file.
    public var fileChecksum: String?

    /// The server's checksum of the asset's reference.
    public var referenceChecksum: String?

    /// The key the server wrapped the asset with.
    public var wrappingKey: String?

    /// The receipt an upload returns, which a save puts in the field.
    public var receipt: String?

    /// Where the server lets the asset be downloaded from.
    public var downloadURL: String?

    /// Creates an asset whose contents are in a local file.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// Creates an asset whose contents are the given bytes.
    public init(data: Data) {
        self.data = data
    }

    /// Creates an asset from the metadata a server returns.
    public init(
        size: Int64?,
        fileChecksum: String?,
        referenceChecksum: String? = nil,
        wrappingKey: String? = nil,
        receipt: String? = nil,
        downloadURL: String? = nil
    ) {
        self.size = size
        self.fileChecksum = fileChecksum
        self.referenceChecksum = referenceChecksum
        self.wrappingKey = wrappingKey
        self.receipt = receipt
        self.downloadURL = downloadURL
    }
}
