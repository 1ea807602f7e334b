import Foundation
import NestedCloudKitCodable

/// The store's own copies of asset files.
///
/// A record's asset names a file the app (or a database's download cache) owns, which may be gone by the time the
/// engine uploads it, or by the time the app reads a fetched record. The store copies each such file into a folder
/// of its own when the record is written, and points the asset at the copy, as CloudKit's framework keeps its own
/// copies: a saved asset is as durable as the record.
struct AssetFiles: Sendable {
    /// Where the copies go: beside the store's file, or a temporary folder for a store in memory.
    let directory: URL

    /// The record, with every file asset that isn't already in ``directory`` copied there.
    func adopt(_ record: CloudRecord) throws -> CloudRecord {
        guard record.fields.contains(where: { Self.hasFile($0.value) }) else { return record }
        var copy = record
        for (name, value) in record.fields {
            switch value {
            case .asset(let asset):
                copy[name] = .asset(try adopt(asset, field: name, of: record.id))
            case .assetList(let assets):
                copy[name] = .assetList(try assets.map { try adopt($0, field: name, of: record.id) })
            default:
                continue
            }
        }
        copy.clearedFieldNames = record.clearedFieldNames
        return copy
    }

    private func adopt(_ asset: CloudAsset, field: String, of id: CloudRecord.ID) throws -> CloudAsset {
        guard let source = asset.fileURL, source.deletingLastPathComponent().standardizedFileURL != directory
        else { return asset }
        let target = directory.appendingPathComponent(UUID().uuidString + "-" + source.lastPathComponent)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: target)
        } catch {
            throw SyncError.store(
                "can't keep the asset file \(source.path) of \(id)'s field \(field): \(error.localizedDescription); "
                    + "check that the file exists and is readable when the record is saved")
        }
        var adopted = asset
        adopted.fileURL = target
        return adopted
    }

    private static func hasFile(_ value: CloudValue) -> Bool {
        switch value {
        case .asset(let asset): asset.fileURL != nil
        case .assetList(let assets): assets.contains { $0.fileURL != nil }
        default: false
        }
    }
}
