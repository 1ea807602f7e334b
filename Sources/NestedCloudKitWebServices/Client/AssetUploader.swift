import AsyncHTTPClient
import Foundation
import NIOCore
import NestedCloudKitCodable

/// Uploads a record's assets through CloudKit Web Services' two steps, so that saving it sends receipts.
///
/// First `assets/upload` gives a URL for each asset (one token per field and element); then each asset's bytes
/// are POSTed to its URL, streamed from their file a chunk at a time, and the reply's `singleFile` dictionary
/// (receipt, checksums, size) replaces the asset in the field. Assets that already carry a receipt, or that came
/// from the server, are sent as they are.
struct AssetUploader: Sendable {
    let transport: WebServicesTransport

    /// The bytes read from a file per chunk of an upload.
    static let chunkSize = 1 << 20

    /// The record with each local asset replaced by its upload's receipt.
    func uploadingAssets(of record: CloudRecord) async throws -> CloudRecord {
        var slots: [(field: String, index: Int?, asset: CloudAsset)] = []
        for (name, value) in record.fields {
            switch value {
            case .asset(let asset) where asset.needsUpload: slots.append((name, nil, asset))
            case .assetList(let list):
                for (index, asset) in list.enumerated() where asset.needsUpload { slots.append((name, index, asset)) }
            default: break
            }
        }
        guard !slots.isEmpty else { return record }

        let request = WireAssetUploadRequest(
            zoneID: WireZoneID(record.id.zoneID),
            tokens: slots.map {
                .init(recordName: record.id.recordName, recordType: record.recordType, fieldName: $0.field)
            }
        )
        let response = try await transport.post("assets/upload", request, as: WireAssetUploadResponse.self)
        guard response.tokens.count == slots.count else {
            throw CloudDatabaseError.internalError(
                "CloudKit gave \(response.tokens.count) upload URLs for \(slots.count) assets of \(record.id)"
            )
        }
        var uploaded = record
        for (slot, token) in zip(slots, response.tokens) {
            let receipt = try await upload(slot.asset, to: token.url, field: slot.field, of: record.id)
            switch (slot.index, uploaded.fields[slot.field]) {
            case (nil, _): uploaded.fields[slot.field] = .asset(receipt)
            case (let index?, .assetList(var list)?):
                list[index] = receipt
                uploaded.fields[slot.field] = .assetList(list)
            default: break
            }
        }
        return uploaded
    }

    /// POSTs one asset's bytes and returns the asset as the save sends it.
    private func upload(_ asset: CloudAsset, to url: String, field: String, of id: CloudRecord.ID) async throws
        -> CloudAsset
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        if let data = asset.data {
            request.body = .bytes(ByteBuffer(bytes: data))
        } else if let fileURL = asset.fileURL?.resolvingSymlinksInPath() {
            let values = try? fileURL.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values?.isRegularFile == true, let size = values?.fileSize else {
                throw CloudDatabaseError.invalidArguments(
                    "\(id)'s asset \(field) is a file that isn't there or isn't a regular file: \(fileURL.path)")
            }
            request.body = .stream(FileChunks(url: fileURL, chunkSize: Self.chunkSize), length: .known(Int64(size)))
        }
        let timeout = WebServicesTransport.timeAmount(transport.configuration.requestTimeout)
        let (status, bytes) = try await transport.mappingNetworkErrors(
            "uploading \(id)'s asset \(field)", server: URL(string: url)
        ) {
            let response = try await transport.httpClient.execute(request, timeout: timeout)
            return (Int(response.status.code), Data(try await response.body.collect(upTo: 1 << 20).readableBytesView))
        }
        guard status == 200 else {
            let serverError = try? JSONDecoder().decode(WireServerError.self, from: bytes)
            throw serverError?.databaseError(recordID: id, zoneID: id.zoneID)
                ?? WireServerError.databaseError(status: status, body: String(decoding: bytes, as: UTF8.self))
        }
        guard let receipt = try? JSONDecoder().decode(WireAssetUploadReceipt.self, from: bytes) else {
            throw CloudDatabaseError.internalError(
                "CloudKit's reply to the upload of \(id)'s asset \(field) has no singleFile dictionary")
        }
        return receipt.singleFile.asset
    }
}

extension CloudAsset {
    /// Whether the asset holds local contents the server hasn't got: no receipt yet, and no server metadata.
    var needsUpload: Bool {
        receipt == nil && downloadURL == nil && fileChecksum == nil && (data != nil || fileURL != nil)
    }
}

/// A file's bytes as an asynchronous sequence of chunks, so that an upload never holds the whole file.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let url: URL
    let chunkSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let url: URL
        let chunkSize: Int
        var handle: FileHandle?
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            guard !finished else { return nil }
            if handle == nil { handle = try FileHandle(forReadingFrom: url) }
            guard let data = try handle?.read(upToCount: chunkSize), !data.isEmpty else {
                finished = true
                try handle?.close()
                return nil
            }
            return ByteBuffer(bytes: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(url: url, chunkSize: chunkSize)
    }
}

extension CloudRecord {
    /// The server's record with the local contents of the client's assets: what was just uploaded needn't be
    /// downloaded again.
    func keepingLocalAssets(of client: CloudRecord) -> CloudRecord {
        var merged = self
        for (name, value) in fields {
            switch (value, client.fields[name]) {
            case (.asset(let server), .asset(let local)?):
                merged.fields[name] = .asset(server.withContents(of: local))
            case (.assetList(let server), .assetList(let local)?) where server.count == local.count:
                merged.fields[name] = .assetList(zip(server, local).map { $0.withContents(of: $1) })
            default:
                break
            }
        }
        return merged
    }
}

extension CloudAsset {
    /// The asset with the local file or bytes of another.
    fileprivate func withContents(of local: CloudAsset) -> CloudAsset {
        var asset = self
        asset.fileURL = local.fileURL
        asset.data = local.data
        return asset
    }
}
