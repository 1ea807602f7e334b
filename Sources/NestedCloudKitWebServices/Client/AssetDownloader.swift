import AsyncHTTPClient
import Foundation
import NIOCore
import NestedCloudKitCodable

/// Downloads the assets of fetched records into a cache folder, as `CKDatabase` does, so that an asset's
/// contents are local (``CloudAsset/fileURL``) and the decoder can read `Data` and file properties from them.
///
/// Files are named by the server's checksum, so an asset fetched again is read from the cache instead of
/// downloaded again; each download streams to a temporary file that is moved into place when complete.
struct AssetDownloader: Sendable {
    let transport: WebServicesTransport

    /// The cache folder: the configuration's, or one per container in the temporary directory.
    var directory: URL {
        transport.configuration.assetCacheDirectory
    }

    /// The record with each of its assets' contents downloaded.
    func downloadingAssets(of record: CloudRecord) async throws -> CloudRecord {
        var downloaded = record
        for (name, value) in record.fields {
            switch value {
            case .asset(let asset) where asset.needsDownload:
                downloaded.fields[name] = .asset(try await download(asset, field: name, of: record.id))
            case .assetList(let list) where list.contains(where: \.needsDownload):
                var assets: [CloudAsset] = []
                for asset in list {
                    assets.append(asset.needsDownload ? try await download(asset, field: name, of: record.id) : asset)
                }
                downloaded.fields[name] = .assetList(assets)
            default:
                break
            }
        }
        return downloaded
    }

    private func download(_ asset: CloudAsset, field: String, of id: CloudRecord.ID) async throws -> CloudAsset {
        guard let address = asset.downloadURL else { return asset }
        let fileManager = FileManager.default
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CloudDatabaseError.internalError(
                "The asset cache folder \(directory.path) can't be made: \(error)", underlying: error)
        }
        let name = asset.fileChecksum.map(Self.fileName) ?? UUID().uuidString
        let destination = directory.appendingPathComponent(name)
        var local = asset
        local.fileURL = destination
        if asset.fileChecksum != nil, fileManager.fileExists(atPath: destination.path) { return local }

        // CloudKit's download URLs hold a `${f}` where the client puts the file name it wants.
        var request = HTTPClientRequest(url: address.replacingOccurrences(of: "${f}", with: name))
        request.method = .GET
        let partial = directory.appendingPathComponent(".\(UUID().uuidString).partial")
        defer { try? fileManager.removeItem(at: partial) }
        let timeout = WebServicesTransport.timeAmount(transport.configuration.requestTimeout)
        return try await transport.mappingNetworkErrors(
            "downloading \(id)'s asset \(field)", server: URL(string: request.url)
        ) {
            let response = try await transport.httpClient.execute(request, timeout: timeout)
            guard response.status.code == 200 else {
                throw CloudDatabaseError.networkFailure(
                    "downloading \(id)'s asset \(field): HTTP \(response.status.code)")
            }
            guard fileManager.createFile(atPath: partial.path, contents: nil) else {
                throw CloudDatabaseError.internalError("The asset cache folder \(directory.path) isn't writable")
            }
            let handle = try FileHandle(forWritingTo: partial)
            defer { try? handle.close() }
            for try await chunk in response.body { try handle.write(contentsOf: Data(chunk.readableBytesView)) }
            // A download that completes replaces whatever an earlier, interrupted one left.
            try? fileManager.removeItem(at: destination)
            try fileManager.moveItem(at: partial, to: destination)
            return local
        }
    }

    /// A file name from a checksum: base64 can hold `/` and `+`, which file names shouldn't.
    private static func fileName(_ checksum: String) -> String {
        String(checksum.map { $0 == "/" ? "_" : $0 == "+" ? "-" : $0 })
    }
}

extension CloudAsset {
    /// Whether the asset is on the server only: a download URL and no local contents.
    var needsDownload: Bool {
        downloadURL != nil && fileURL == nil && data == nil
    }
}
