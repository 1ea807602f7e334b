#if canImport(CloudKit)
import CloudKit
import Foundation

/// The files the bridge writes for assets whose bytes are held in memory: `CKAsset` only takes a file, and
/// CloudKit leaves the file in place after it saves it ("If you no longer need the file, you must delete it
/// yourself"). They all go in one folder of their own, ``directory``, so that only they are ever deleted.
///
/// ``CloudKitDatabase`` passes one of these through a request's conversions and deletes the files it wrote once
/// the request is over, whether it succeeded or not; conversions outside a request write without keeping track,
/// and their caller deletes the files (``CKRecordEncoder/removeTemporaryAssetFiles(of:)``).
final class TemporaryAssetFiles {
    /// The folder of the bridge's temporary asset files, inside the system's temporary directory.
    static var directory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("NestedCloudKitCodable-Assets", isDirectory: true)
    }

    /// The files written so far, to delete at the end of the request.
    private(set) var written: [URL] = []

    /// Writes an asset's bytes to a new file in ``directory`` and returns its URL.
    func write(_ data: Data, recordID: CloudRecord.ID, field: String) throws(CKRecordConversionError) -> URL {
        let file = Self.directory.appendingPathComponent(UUID().uuidString)
        do {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try data.write(to: file, options: .atomic)
        } catch {
            throw CKRecordConversionError(
                .temporaryFileNotWritable(reason: "\(error)"), recordID: recordID, field: field)
        }
        written.append(file)
        return file
    }

    /// Deletes every file written so far.
    func removeAll() {
        for file in written { try? FileManager.default.removeItem(at: file) }
        written = []
    }

    /// Whether the file lies in the bridge's folder, so that the bridge wrote it and may delete it.
    static func isTemporary(_ file: URL) -> Bool {
        file.standardizedFileURL.deletingLastPathComponent().path == directory.standardizedFileURL.path
    }

    /// The bridge's temporary files among the assets of a record's fields.
    static func files(of record: CKRecord) -> [URL] {
        record.allKeys().flatMap { key -> [URL] in
            let value = record.object(forKey: key)
            let assets = (value as? CKAsset).map { [$0] } ?? ((value as? NSArray)?.compactMap { $0 as? CKAsset } ?? [])
            return assets.compactMap(\.fileURL).filter(isTemporary)
        }
    }
}
#endif
