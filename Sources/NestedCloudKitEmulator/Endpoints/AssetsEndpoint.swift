import Foundation
import NestedCloudKitCodable

/// `assets/upload` (the upload URLs), the uploads themselves, and the downloads of stored assets.
enum AssetsEndpoint {
    static let uploadPrefix = "/emulator/upload/"
    static let downloadPrefix = "/emulator/download/"

    /// Where a stored asset is downloaded from: the database, record, field and list position. A download URL's
    /// token names it, signed (``DownloadTokens``).
    struct Location: Codable, Sendable {
        var key: DatabaseKey
        var zoneName: String
        /// The zone's owner when it is another user's (a shared database's zone); `nil` for the user's own.
        var zoneOwner: String?
        var recordName: String
        var field: String
        var index: Int?
    }

    /// `assets/upload`: a URL for each asset the request will upload.
    static func uploadURLs(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        guard let tokens = context.body["tokens"]?.array, !tokens.isEmpty else {
            throw .badRequest("assets/upload needs tokens, one per asset: {recordName, recordType, fieldName}")
        }
        guard tokens.count <= DatabaseRequest.maximumItems else {
            throw .badRequest("assets/upload takes at most \(DatabaseRequest.maximumItems) tokens")
        }
        return [
            "tokens": .array(
                tokens.map { token in
                    [
                        // "The default value is a random UUID" (Uploading Assets), and the answer names it.
                        "recordName": token["recordName"]?.string.flatMap { $0.isEmpty ? nil : JSONValue.string($0) }
                            ?? .string(UUID().uuidString),
                        "fieldName": token["fieldName"] ?? "",
                        "url": .string(context.request.baseURL + uploadPrefix + context.state.uploads.newUpload()),
                    ]
                })
        ]
    }

    /// The bytes posted to an upload URL; the answer is the dictionary a save puts in the field.
    static func upload(_ request: EmulatorRequest, id: String, state: EmulatorState) throws(ServerError) -> JSONValue {
        let receipt = try state.uploads.receive(request.body, upload: id)
        let checksum = WireCoding.checksum(request.body)
        return [
            "singleFile": [
                "fileChecksum": .string(checksum), "receipt": .string(receipt), "size": .int(Int64(request.body.count)),
                "wrappingKey": "emulator", "referenceChecksum": .string(checksum),
            ]
        ]
    }

    /// The bytes of a stored asset, for a download URL's token. A token the emulator didn't sign, or that expired,
    /// and an asset no longer there all answer the same 404; and no database is made for a token: only one that
    /// exists is read.
    static func download(_ token: String, state: EmulatorState) async throws(ServerError) -> EmulatorResponse {
        let unknown = ServerError(
            .notFound,
            "no asset at this download URL: it is unknown or expired; fetch the record again for a new downloadURL")
        guard let location = state.downloads.location(from: token),
            let handle = try await state.registry.existingHandle(for: location.key)
        else { throw unknown }
        let id = CloudRecord.ID(
            recordName: location.recordName,
            zoneID: CloudRecord.ZoneID(
                zoneName: location.zoneName,
                ownerName: location.zoneOwner ?? CloudRecord.ZoneID.currentUserOwnerName))
        let results = try await RecordsEndpoint.call { try await handle.database.records(for: [id], desiredKeys: nil) }
        guard case .success(let record)? = results[id] else { throw unknown }
        let asset: CloudAsset? =
            switch (record.fields[location.field], location.index) {
            case (.asset(let asset)?, nil): asset
            case (.assetList(let list)?, let index?) where list.indices.contains(index): list[index]
            default: nil
            }
        guard let asset, let data = await AssetFile.contents(of: asset) else { throw unknown }
        return EmulatorResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: data)
    }
}
