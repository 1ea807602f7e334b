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
    ///
    /// Asset bytes held in memory (a large `Data` value, ``CloudAsset/data``) are written to files in
    /// ``temporaryAssetDirectory``, because `CKAsset` only takes a file, and CloudKit doesn't delete them after it
    /// saves them. Once the records are saved (or dropped), delete them with ``removeTemporaryAssetFiles(of:)``:
    ///
    /// ```swift
    /// let records: [CKRecord] = try CKRecordEncoder().encode(school)
    /// defer { CKRecordEncoder.removeTemporaryAssetFiles(of: records) }
    /// _ = try await database.modifyRecords(saving: records, deleting: [])
    /// ```
    ///
    /// Saving through ``CloudKitDatabase`` instead (encode to `[CloudRecord]`) deletes them by itself.
    ///
    /// - Throws: ``CKCodableError`` for a value that can't be encoded; ``CKRecordConversionError`` for a record
    ///   that can't become a `CKRecord` (see ``CloudRecord/ckRecord()``).
    public func encode<Value: CKEncodable>(_ value: Value) throws -> [CKRecord] {
        try encodeRecords(value).map { try $0.ckRecord() }
    }

    /// The folder, inside the system's temporary directory, where the Apple bridge writes the files of asset bytes
    /// held in memory. It holds nothing else, so everything in it may be deleted.
    public static var temporaryAssetDirectory: URL { TemporaryAssetFiles.directory }

    /// Deletes the temporary asset files that ``encode(_:)`` (or ``CloudRecord/ckRecord()``) wrote for these
    /// records; call it once CloudKit has saved them, or when they won't be saved. Other asset files (your own,
    /// CloudKit's) are left alone; a file already gone is skipped.
    public static func removeTemporaryAssetFiles(of records: some Sequence<CKRecord>) {
        for record in records {
            for file in TemporaryAssetFiles.files(of: record) { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// Deletes every file in ``temporaryAssetDirectory``, such as those a previous run left when it ended before
    /// removing them. Call it when no save is in flight (at launch, for example): a save that hasn't finished
    /// reading its files would fail.
    ///
    /// - Throws: The file manager's error when the folder exists but can't be emptied.
    public static func removeAllTemporaryAssetFiles() throws {
        let directory = TemporaryAssetFiles.directory
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            try FileManager.default.removeItem(at: file)
        }
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
    public func decode<Value: CKDecodable>(
        _ type: Value.Type, from record: CKRecord, referenceDatabase database: CKDatabase,
        completion: @escaping @Sendable (_ value: Value?, _ error: CKCodableError?) -> Void
    ) {
        do {
            decode(
                type, from: try CloudRecord(record), referenceDatabase: CloudKitDatabase(database),
                completion: completion)
        } catch {
            let id = CloudRecord.ID(record.recordID)
            completion(
                nil,
                CKCodableError.atEntryPoint(error, rootID: id, wrappingCancellation: true) as? CKCodableError
                    ?? .cancelled(id))
        }
    }
}
#endif
