import Foundation
import NestedCloudKitCodable

/// `assets/upload` (the upload URLs), the uploads themselves, and the downloads of stored assets.
enum AssetsEndpoint {
    static let uploadPrefix = "/emulator/upload/"
    static let downloadPrefix = "/emulator/download/"

    /// Where a stored asset is downloaded from: the database, record, field and list position, so that the URL
    /// stays valid as long as the asset does.
    struct Location: Codable, Sendable {
        var key: DatabaseKey
        var zoneName: String
        var recordName: String
        var field: String
        var index: Int?

        var token: String {
            let data = (try? JSONEncoder().encode(self)) ?? Data()
            return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }

        init(key: DatabaseKey, zoneName: String, recordName: String, field: String, index: Int?) {
            self.key = key
            self.zoneName = zoneName
            self.recordName = recordName
            self.field = field
            self.index = index
        }

        init?(token: String) {
            var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard let data = Data(base64Encoded: base64),
                let location = try? JSONDecoder().decode(Location.self, from: data)
            else { return nil }
            self = location
        }
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
                        "recordName": token["recordName"] ?? "", "fieldName": token["fieldName"] ?? "",
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

    /// The bytes of a stored asset.
    static func download(_ token: String, state: EmulatorState) async throws(ServerError) -> EmulatorResponse {
        guard let location = Location(token: token) else { throw ServerError(.notFound, "no asset at this URL") }
        let handle = try await state.registry.handle(for: location.key)
        let id = CloudRecord.ID(
            recordName: location.recordName, zoneID: CloudRecord.ZoneID(zoneName: location.zoneName))
        let results = try await RecordsEndpoint.call { try await handle.database.records(for: [id], desiredKeys: nil) }
        guard case .success(let record)? = results[id] else {
            throw ServerError(.notFound, "record \(location.recordName) is gone, and its assets with it")
        }
        let asset: CloudAsset? =
            switch (record.fields[location.field], location.index) {
            case (.asset(let asset)?, nil): asset
            case (.assetList(let list)?, let index?) where list.indices.contains(index): list[index]
            default: nil
            }
        guard let asset, let data = WireCoding.contents(of: asset) else {
            throw ServerError(.notFound, "record \(location.recordName) no longer holds this asset")
        }
        return EmulatorResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: data)
    }
}
