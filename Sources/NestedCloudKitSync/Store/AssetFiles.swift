import Foundation
import GRDB
import NestedCloudKitCodable

/// The store's own copies of asset files.
///
/// A record's asset names a file the app (or a database's download cache) owns, which may be gone by the time the
/// engine uploads it, or by the time the app reads a fetched record. The store copies each such file into a folder
/// of its own when the record is written, and points the asset at the copy, as CloudKit's framework keeps its own
/// copies: a saved asset is as durable as the record.
///
/// A copy is made once: an asset whose contents equal those of the asset the store already holds in the same
/// place (the record's current value, or its server copy) keeps that file, so saving a model again, or fetching
/// back what was uploaded, neither copies nor changes anything. A stored asset is its file alone: the server's
/// metadata (checksums, receipt, download URL) describes the server's copy, and would make an unchanged value
/// read as a change.
///
/// Each row keeps the paths of the files it points to in a column of its own (``fileList(in:)``: the record and its
/// server copy; a pending change's remembered copies), from which triggers list every use in `ncs_asset_use`; a
/// copy no row points to any more is deleted in the transaction that let go of it (``collectGarbage(in:)``), and
/// copies a crash left behind are deleted when the store opens (``sweep(in:)``).
/// All of this runs inside the store's write transactions, so no other write sees a copy half made or half gone.
struct AssetFiles: Sendable {
    /// Where the copies go: beside the store's file, or a temporary folder for a store in memory.
    let directory: URL

    init(directory: URL) {
        self.directory = directory.standardizedFileURL
    }

    // MARK: Adopting

    /// The record with every asset held by the store.
    ///
    /// - Parameters:
    ///   - record: The record to write.
    ///   - existing: What the store holds of the record (its current value, its server copy), most recent first.
    ///     An asset with the same contents as the asset in the same field and position of one of them takes that
    ///     asset; a field whose asset is a copy of this store's that no longer exists is stale (the model was read
    ///     before the field changed, and its copy was let go), so it takes the value of the first of them.
    /// - Throws: ``SyncError/store(_:)`` if a file can't be read or copied, or a stale copy has nothing to stand
    ///   for it (a new record).
    func adopt(_ record: CloudRecord, reusing existing: [CloudRecord]) throws -> CloudRecord {
        guard record.fields.contains(where: { !$0.value.assets.isEmpty }) else { return record }
        var adopted = record
        for (name, value) in record.fields where !value.assets.isEmpty {
            if value.assets.contains(where: isMissingCopy) {
                guard let current = existing.first else {
                    throw SyncError.store(
                        "the asset of \(record.id)'s field \(name) names a copy the store no longer holds; read the "
                            + "model again (or give the asset a file of the app's) before saving it")
                }
                adopted[name] = current[name]
                continue
            }
            func adopt(_ asset: CloudAsset, at position: Int) throws -> CloudAsset {
                for other in existing {
                    let assets = other[name]?.assets ?? []
                    if assets.indices.contains(position), Self.sameContents(asset, assets[position]) {
                        return assets[position]
                    }
                }
                return try keep(asset, field: name, of: record.id)
            }
            switch value {
            case .asset(let asset):
                adopted[name] = .asset(try adopt(asset, at: 0))
            case .assetList(let assets):
                adopted[name] = .assetList(try assets.enumerated().map { try adopt($0.element, at: $0.offset) })
            default:
                continue
            }
        }
        adopted.clearedFieldNames = record.clearedFieldNames
        return adopted
    }

    /// The asset as the store keeps it: its copy of the file (made if the file isn't one of the store's), without
    /// the server's metadata; an asset with no local file (bytes in memory, or only the server's metadata) as it is.
    private func keep(_ asset: CloudAsset, field: String, of id: CloudRecord.ID) throws -> CloudAsset {
        guard let source = asset.fileURL else { return asset }
        if isCopy(source) { return CloudAsset(fileURL: source.standardizedFileURL) }
        let target = directory.appendingPathComponent(UUID().uuidString + "-" + Self.shortName(source))
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: target)
        } catch {
            throw SyncError.store(
                "can't keep the asset file \(source.lastPathComponent) of \(id)'s field \(field): "
                    + "\(error.localizedDescription); check that the file exists and is readable when the record is "
                    + "saved", underlying: error)
        }
        return CloudAsset(fileURL: target)
    }

    /// The last part of a copy's name: the original's, shortened so a copy's name stays far from the file system's
    /// limit whatever the original was called.
    private static func shortName(_ source: URL) -> String {
        let name = source.lastPathComponent
        guard name.utf8.count > 64 else { return name }
        let ext = source.pathExtension
        return ext.isEmpty || ext.utf8.count > 16 ? "asset" : "asset." + ext
    }

    /// Whether the asset points to a copy of this store's that is gone.
    private func isMissingCopy(_ asset: CloudAsset) -> Bool {
        guard let url = asset.fileURL, isCopy(url) else { return false }
        return !FileManager.default.fileExists(atPath: url.path)
    }

    /// Whether the URL points to a file in the store's folder.
    func isCopy(_ url: URL) -> Bool {
        // Compared as paths: a folder's URL may or may not end in a slash (the bug that copied a copy on every save).
        url.isFileURL && url.standardizedFileURL.deletingLastPathComponent().path == directory.path
    }

    /// The paths of the files the records' assets point to (the store's copies, once a record is adopted), as the
    /// JSON array the `asset_files` columns hold; `nil` for none, which the triggers that list uses skip at no cost.
    static func fileList(in records: [CloudRecord?]) -> String? {
        var paths: Set<String> = []
        for record in records {
            guard let record else { continue }
            for (_, value) in record.fields {
                switch value {
                case .asset(let asset):
                    if let url = asset.fileURL { paths.insert(url.standardizedFileURL.path) }
                case .assetList(let assets):
                    for asset in assets { if let url = asset.fileURL { paths.insert(url.standardizedFileURL.path) } }
                default:
                    continue
                }
            }
        }
        guard !paths.isEmpty, let json = try? JSONEncoder().encode(paths.sorted()) else { return nil }
        return String(decoding: json, as: UTF8.self)
    }

    // MARK: Comparing

    /// Whether two sets of fields hold the same values, assets compared by their contents: what the server gives
    /// back of an upload has its own copy of each file (and its metadata), not the file that was sent.
    static func sameContents(_ lhs: CloudRecord.Fields, _ rhs: CloudRecord.Fields) -> Bool {
        if lhs == rhs { return true }
        guard lhs.count == rhs.count else { return false }
        for (name, value) in lhs {
            guard let other = rhs[name] else { return false }
            if value == other { continue }
            let (assets, otherAssets) = (value.assets, other.assets)
            guard !assets.isEmpty, assets.count == otherAssets.count, value.kind == other.kind,
                zip(assets, otherAssets).allSatisfy(sameContents)
            else { return false }
        }
        return true
    }

    /// Whether two assets hold the same bytes: the same file, the same server checksum, or equal contents.
    static func sameContents(_ lhs: CloudAsset, _ rhs: CloudAsset) -> Bool {
        if let file = lhs.fileURL, file.standardizedFileURL == rhs.fileURL?.standardizedFileURL { return true }
        if lhs.data != nil, lhs.data == rhs.data { return true }
        // Two copies the server described: its checksums say it.
        if let checksum = lhs.fileChecksum, let other = rhs.fileChecksum { return checksum == other }
        guard let contents = try? lhs.contents(), let other = try? rhs.contents() else { return false }
        return contents == other
    }

    // MARK: Letting go

    /// Deletes the copies no row points to any more; runs at the end of each write transaction, so a write that
    /// points to a copy again before the transaction ends keeps it.
    func collectGarbage(in db: Database) throws {
        // One statement in the usual transaction, which let go of nothing.
        let released = try Row.fetchAll(
            try db.cachedStatement(
                sql: """
                    SELECT file, EXISTS (SELECT 1 FROM ncs_asset_use AS use WHERE use.file = garbage.file) AS used
                    FROM ncs_asset_garbage AS garbage
                    """))
        guard !released.isEmpty else { return }
        for row in released where !(row["used"] as Bool) {
            let path: String = row["file"]
            let file = URL(fileURLWithPath: path)
            // Only the store's own copies: a row can't point elsewhere once adopted, but a file not ours is never
            // deleted. A copy already gone (a crash between its deletion and the commit) is what we wanted.
            guard file.deletingLastPathComponent().path == directory.path else { continue }
            try? FileManager.default.removeItem(at: file)
        }
        try db.cachedStatement(sql: "DELETE FROM ncs_asset_garbage").execute()
    }

    /// Deletes the copies in the folder that no row points to: what a transaction that rolled back, or a crash,
    /// left behind. Runs when the store opens.
    func sweep(in db: Database) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let statement = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ncs_asset_use WHERE file = ?)")
        for name in names {
            let file = directory.appendingPathComponent(name)
            if try Bool.fetchOne(statement, arguments: [file.path]) != true {
                try? FileManager.default.removeItem(at: file)
            }
        }
    }
}
