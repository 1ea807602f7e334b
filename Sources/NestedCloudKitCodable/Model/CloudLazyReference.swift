import Foundation

/// A reference to another record that the decoder doesn't follow: it decodes to the target's ID, and the target
/// is loaded when asked for.
///
/// Use it for a property whose target (and everything below it) shouldn't be fetched with its holder:
///
/// ```swift
/// struct Album: CKCodable, Identifiable {
///     var id: String
///     var title: String
///     var photos: [CloudLazyReference<Photo>]   // IDs only; fetched on demand
/// }
///
/// let photo = try await album.photos[0].load(from: database)
/// ```
///
/// It encodes as a reference (with the property's action from `cloudKitReferenceActions()`), in the encoder's zone,
/// but doesn't encode its target: save the target on its own.
public struct CloudLazyReference<Target: CKRecordRepresentable>: Sendable, Hashable, Codable {
    /// The target's record ID.
    public var recordID: CloudRecord.ID

    /// A reference to the record with this ID.
    public init(recordID: CloudRecord.ID) {
        self.recordID = recordID
    }

    /// A reference to a value's record; the encoder puts it in its own zone.
    public init(to target: Target) {
        self.recordID = CloudRecord.ID(recordName: target.cloudKitIdentifier)
    }

    /// Fetches the target and decodes it, with everything it references.
    public func load(
        from database: some CloudDatabase, decoder: CKRecordDecoder = CKRecordDecoder()
    ) async throws -> Target where Target: CKDecodable {
        let record: CloudRecord
        do {
            record = try await database.record(for: recordID)
        } catch let error as CloudDatabaseError {
            if error.code == .unknownItem {
                throw CKCodableError.missingRecord(
                    recordID, at: DecodingLocation(path: .root, recordID: recordID, field: nil))
            }
            throw CKCodableError.databaseError(error, at: DecodingLocation(path: .root, recordID: recordID, field: nil))
        }
        return try await decoder.decode(Target.self, from: record, referenceDatabase: database)
    }

    /// Reads the reference from a record field; outside the record coders, from the record name as a string.
    public init(from decoder: any Decoder) throws {
        if let recordDecoder = decoder as? ValueDecoder {
            recordID = try recordDecoder.unboxReference().recordID
        } else {
            recordID = CloudRecord.ID(recordName: try decoder.singleValueContainer().decode(String.self))
        }
    }

    /// Writes a reference into a record field; outside the record coders, the record name as a string.
    public func encode(to encoder: any Encoder) throws {
        if let nodeEncoder = encoder as? NodeEncoder {
            nodeEncoder.encodeReference(toRecordNamed: recordID.recordName)
        } else {
            var container = encoder.singleValueContainer()
            try container.encode(recordID.recordName)
        }
    }
}
