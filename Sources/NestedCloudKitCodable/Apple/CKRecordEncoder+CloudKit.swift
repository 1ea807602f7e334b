#if canImport(CloudKit)
import CloudKit
import Foundation

// Version 1.0's spellings, so that its users upgrade by changing a version number.
extension CKRecordEncoder {
    /// Creates an encoder that makes records in the given CloudKit zone, or the default zone for `nil`: 1.0's
    /// initializer.
    public init(zoneID: CKRecordZone.ID?) {
        self.init(zoneID: zoneID.map(CloudRecord.ZoneID.init) ?? .default)
    }

    /// Encodes a value and everything nested in it into CloudKit records, each after the records it references
    /// and the root's record last, as 1.0 did.
    public func encode<Value: CKEncodable>(_ value: Value) throws -> [CKRecord] {
        try encodeRecords(value).map { try $0.ckRecord() }
    }
}

extension CKRecordDecoder {
    /// Decodes a value from its CloudKit record, fetching the records it references from a CloudKit database.
    public func decode<Value: CKDecodable>(
        _ type: Value.Type, from record: CKRecord, referenceDatabase database: CKDatabase
    ) async throws -> Value {
        try await decode(type, from: CloudRecord(record), referenceDatabase: CloudKitDatabase(database))
    }

    /// Decodes a value from its CloudKit record and calls back exactly once with the value or the error: 1.0's
    /// completion-handler form.
    public func decode<Value: CKDecodable & SendableMetatype>(
        _ type: Value.Type, from record: CKRecord, referenceDatabase database: CKDatabase,
        completion: @escaping @Sendable (_ value: Value?, _ error: CKCodableError?) -> Void
    ) {
        do {
            decode(type, from: try CloudRecord(record), referenceDatabase: CloudKitDatabase(database), completion: completion)
        } catch {
            let id = CloudRecord.ID(record.recordID)
            completion(nil, CKCodableError.atEntryPoint(error, rootID: id, wrappingCancellation: true) as? CKCodableError ?? .cancelled(id))
        }
    }
}
#endif
