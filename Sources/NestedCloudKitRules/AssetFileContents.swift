import Foundation
import NestedCloudKitCodable

/// Where an asset is: its record, field, and position in an asset list (0 for a single asset).
package struct AssetKey: Hashable, Sendable {
    package let recordID: CloudRecord.ID
    package let field: String
    package let position: Int

    package init(recordID: CloudRecord.ID, field: String, position: Int) {
        self.recordID = recordID
        self.field = field
        self.position = position
    }
}

/// The contents of the assets that records to save hold in local files, read when the save is asked for.
///
/// CloudKit uploads an asset's file when the record is saved and keeps that copy: overwriting or deleting the
/// file afterwards changes nothing on the server. Backends that store records read the files here, before their
/// write transaction, so they store a copy too, and refuse a record whose file can't be read, as CloudKit does.
package struct AssetFileContents: Sendable {
    /// The contents of each asset that came as a file.
    package private(set) var contents: [AssetKey: Data] = [:]
    /// The records whose asset files couldn't be read, each with an `invalidArguments` error naming the field.
    package private(set) var failures: [CloudRecord.ID: CloudDatabaseError] = [:]

    /// Reads the file of every asset that has one and no bytes in memory.
    package init(readingFilesOf records: [CloudRecord]) {
        for record in records {
            for (name, value) in record.fields {
                for (position, asset) in value.assets.enumerated() where asset.data == nil && asset.fileURL != nil {
                    do {
                        contents[AssetKey(recordID: record.id, field: name, position: position)] = try asset.contents()
                    } catch {
                        failures[record.id] = .invalidArguments("\(record.id)'s field \(name): \(error.reason)")
                    }
                }
            }
        }
    }

    /// The records whose asset files can't be read, each failed as `init(readingFilesOf:)` fails it, without
    /// reading any file: for a backend that copies the files itself, such as the sync store.
    package static func failures(ofUnreadableFilesIn records: [CloudRecord]) -> [CloudRecord.ID: CloudDatabaseError] {
        var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
        for record in records {
            for (name, value) in record.fields {
                for asset in value.assets where asset.fileURL != nil {
                    do {
                        try asset.checkReadable()
                    } catch {
                        failures[record.id] = .invalidArguments("\(record.id)'s field \(name): \(error.reason)")
                    }
                }
            }
        }
        return failures
    }

    /// The record with each asset that came as a file pointing to a copy of its contents in `directory`, so that
    /// the stored asset no longer depends on the caller's file, and a fetched one has a file, as CloudKit's do.
    ///
    /// - Parameter contents: The contents read from the assets' files (``contents``), by where they are.
    package static func storingCopies(
        of record: CloudRecord, contents: [AssetKey: Data], in directory: URL
    ) throws -> CloudRecord {
        guard !contents.isEmpty else { return record }
        var copy = record
        for (name, value) in record.fields {
            func copied(_ asset: CloudAsset, position: Int) throws -> CloudAsset {
                guard let data = contents[AssetKey(recordID: record.id, field: name, position: position)] else {
                    return asset
                }
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let file = directory.appendingPathComponent(UUID().uuidString)
                try data.write(to: file, options: .atomic)
                var copy = asset
                copy.fileURL = file
                return copy
            }
            switch value {
            case .asset(let asset): copy.fields[name] = .asset(try copied(asset, position: 0))
            case .assetList(let list):
                copy.fields[name] = .assetList(try list.enumerated().map { try copied($1, position: $0) })
            default: continue
            }
        }
        return copy
    }
}

extension CloudValue {
    /// The assets the value holds: one for an asset, the elements of an asset list, none otherwise.
    package var assets: [CloudAsset] {
        switch self {
        case .asset(let asset): [asset]
        case .assetList(let list): list
        default: []
        }
    }
}
