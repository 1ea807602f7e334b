import Crypto
import Foundation
import NIOCore
import NIOFileSystem
import NestedCloudKitCodable

/// A record on its way to a client, the files of its assets read. The wire gives each asset's size and checksum,
/// which for an asset in a file (as the SQLite database hands them out) means reading the file whole: that is done
/// by `WireCoding.outgoing(_:)` through NIO's file system, whose reads run on its own threads, never on the cooperative
/// pool that every request shares. ``WireCoding`` turns only these into JSON, so no response can read a
/// file as it is written out.
struct OutgoingRecord: Sendable {
    /// The record, each asset in a file given the file's size and checksum (and, for an export, its contents); an
    /// asset whose file can't be read has no contents, so the wire offers no download of it.
    let record: CloudRecord

    fileprivate init(_ record: CloudRecord) {
        self.record = record
    }
}

extension WireCoding {
    /// The records, each ready for the wire.
    func outgoing(_ records: [CloudRecord]) async -> [OutgoingRecord] {
        var ready: [OutgoingRecord] = []
        ready.reserveCapacity(records.count)
        for record in records { ready.append(await outgoing(record)) }
        return ready
    }

    /// The record, ready for the wire.
    func outgoing(_ record: CloudRecord) async -> OutgoingRecord {
        var record = record
        for (name, value) in record.fields {
            switch value {
            case .asset(let asset) where asset.fileURL != nil:
                record.fields[name] = .asset(await described(asset))
            case .assetList(let list) where list.contains(where: { $0.fileURL != nil }):
                var assets: [CloudAsset] = []
                for asset in list { assets.append(await described(asset)) }
                record.fields[name] = .assetList(assets)
            default:
                continue
            }
        }
        return OutgoingRecord(record)
    }

    /// An asset in a file, with the file's size and checksum, and its contents when the wire embeds them.
    private func described(_ asset: CloudAsset) async -> CloudAsset {
        guard let url = asset.fileURL else { return asset }
        var described = asset
        guard let read = await AssetFile.read(url, keepingContents: embedsAssetData) else {
            described.fileURL = nil
            return described
        }
        described.size = read.size
        described.fileChecksum = read.checksum
        if let contents = read.contents { described.data = contents }
        return described
    }
}

/// Reading an asset's file without blocking a thread of the cooperative pool.
enum AssetFile {
    struct Read {
        var size: Int64
        /// SHA-256, base64, as ``WireCoding/checksum(_:)`` gives.
        var checksum: String
        var contents: Data?
    }

    /// The file's size and checksum, and its contents if asked; `nil` if it can't be read.
    static func read(_ url: URL, keepingContents: Bool) async -> Read? {
        do {
            return try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
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
                return Read(
                    size: size, checksum: Data(hasher.finalize()).base64EncodedString(), contents: contents)
            }
        } catch {
            return nil
        }
    }

    /// An asset's bytes, from memory or from its file; `nil` if it has none that can be read.
    static func contents(of asset: CloudAsset) async -> Data? {
        if let data = asset.data { return data }
        guard let url = asset.fileURL else { return nil }
        return await read(url, keepingContents: true)?.contents
    }
}
