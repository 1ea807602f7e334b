import Crypto
import Foundation
import NIOCore
import NIOFileSystem
import NestedCloudKitCodable

/// A record on its way to a client, with the fields it will show and the files of their assets read. The wire gives
/// each asset's size and checksum, which for an asset in a file (as the databases hand them out) means reading the
/// file whole: `WireCoding.outgoing(_:desiredKeys:)` does that through NIO's file system, whose reads run on its own
/// threads, never on the cooperative pool that every request shares, and only for the fields the answer shows.
/// ``WireCoding`` turns only these into JSON, so no answer can read a file as it is written out.
struct OutgoingRecord: Sendable {
    /// The record, each shown asset in a file given the file's size and checksum (and, for an export, its
    /// contents); an asset whose file can't be read has no contents, so the wire offers no download of it.
    let record: CloudRecord
    /// The fields the answer shows; `nil` for all of them.
    let desiredKeys: [String]?

    fileprivate init(_ record: CloudRecord, desiredKeys: [String]?) {
        self.record = record
        self.desiredKeys = desiredKeys
    }
}

extension WireCoding {
    /// The records, each ready for the wire with the same fields.
    func outgoing(_ records: [CloudRecord], desiredKeys: [String]? = nil) async -> [OutgoingRecord] {
        var ready: [OutgoingRecord] = []
        ready.reserveCapacity(records.count)
        for record in records { ready.append(await outgoing(record, desiredKeys: desiredKeys)) }
        return ready
    }

    /// The record, ready for the wire with only `desiredKeys` (all its fields for `nil`).
    func outgoing(_ record: CloudRecord, desiredKeys: [String]? = nil) async -> OutgoingRecord {
        let described = await AssetFile.replacingAssets(
            of: record, inFields: desiredKeys, where: { $0.data == nil && $0.fileURL != nil }, with: described)
        return OutgoingRecord(described, desiredKeys: desiredKeys)
    }

    /// An asset in a file, with the file's size and checksum, and its contents when the wire embeds them.
    private func described(_ asset: CloudAsset) async -> CloudAsset {
        guard let url = asset.fileURL else { return asset }
        var described = asset
        guard let digest = await AssetFile.digest(of: url, keepingContents: embedsAssetData) else {
            described.fileURL = nil
            return described
        }
        described.size = digest.size
        described.fileChecksum = digest.checksum
        described.data = digest.contents
        return described
    }
}

/// Reading an asset's file without blocking a thread of the cooperative pool: NIO's file system reads it on its
/// own threads.
enum AssetFile {
    /// What the wire says of a file: its size and checksum, with its bytes when they were asked for.
    struct Digest {
        var size: Int64
        /// SHA-256, base64, as ``WireCoding/checksum(_:)`` gives.
        var checksum: String
        var contents: Data?
    }

    /// The file's size and checksum, and its contents if asked; `nil` if it can't be read.
    static func digest(of url: URL, keepingContents: Bool) async -> Digest? {
        try? await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
            var hasher = SHA256()
            var size: Int64 = 0
            var contents: Data? = keepingContents ? Data() : nil
            for try await chunk in handle.readChunks(in: 0..., chunkLength: .mebibytes(1)) {
                chunk.withUnsafeReadableBytes { bytes in
                    hasher.update(bufferPointer: bytes)
                    contents?.append(contentsOf: bytes)
                }
                size += Int64(chunk.readableBytes)
            }
            return Digest(size: size, checksum: Data(hasher.finalize()).base64EncodedString(), contents: contents)
        }
    }

    /// An asset's bytes, from memory or from its file; `nil` if it has none that can be read.
    static func contents(of asset: CloudAsset) async -> Data? {
        if let data = asset.data { return data }
        guard let url = asset.fileURL else { return nil }
        let buffer = try? await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
            try await handle.readToEnd(maximumSizeAllowed: .unlimited)
        }
        return buffer.map { Data($0.readableBytesView) }
    }

    /// The record with the bytes of each asset in a file read into the asset; one whose file can't be read stays as
    /// it is.
    static func withContents(_ record: CloudRecord) async -> CloudRecord {
        await replacingAssets(of: record, inFields: nil, where: { $0.data == nil && $0.fileURL != nil }) { asset in
            var read = asset
            read.data = await contents(of: asset)
            return read
        }
    }

    /// The record with `transform` applied to each asset that `needs` picks, in single assets and lists alike, in
    /// the fields named (every field for `nil`).
    static func replacingAssets(
        of record: CloudRecord, inFields names: [String]?, where needs: (CloudAsset) -> Bool,
        with transform: (CloudAsset) async -> CloudAsset
    ) async -> CloudRecord {
        var record = record
        for (name, value) in record.fields where names?.contains(name) ?? true {
            switch value {
            case .asset(let asset) where needs(asset):
                record.fields[name] = .asset(await transform(asset))
            case .assetList(let list) where list.contains(where: needs):
                var assets: [CloudAsset] = []
                for asset in list { assets.append(needs(asset) ? await transform(asset) : asset) }
                record.fields[name] = .assetList(assets)
            default:
                continue
            }
        }
        return record
    }
}
