import Foundation

/// The folder beside the database file where fetched assets' contents are written as files, as CloudKit
/// downloads assets into a cache: `<database>-assets/`, the name the sync store gives its own folder too.
///
/// The contents themselves live in the database, saved and deleted with their record in one transaction; the
/// files are a cache derived from them, named by the record's row and change tag, so a file never changes once
/// written and the folder can be deleted at any time.
struct AssetFiles: Sendable {
    let directory: URL

    /// The file holding `content`, written if it isn't there yet.
    func file(for content: Data, name: String) throws -> URL {
        let file = directory.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: file.path) { return file }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Atomically, so that a reader never sees half a file.
        try content.write(to: file, options: .atomic)
        return file
    }

    /// Removes the files of deleted records. Best effort: a file left behind is only a stale cache entry, never
    /// read again (names include the change tag), and the next open sweeps it.
    func removeFiles(ofRows rowIDs: [Int64]) {
        guard !rowIDs.isEmpty else { return }
        let rows = Set(rowIDs)
        removeFiles { row, _ in rows.contains(row) }
    }

    /// Removes every file that isn't of a record's current version. Files of an earlier version are kept until
    /// then, because a reader that fetched that version may still be reading them.
    func sweep(currentChangeTags: [Int64: String]) {
        removeFiles { row, changeTag in currentChangeTags[row] != changeTag }
    }

    private func removeFiles(where isObsolete: (_ row: Int64, _ changeTag: String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names {
            let parts = name.split(separator: "-", maxSplits: 2)
            guard parts.count == 3, let row = Int64(parts[0]), isObsolete(row, String(parts[1])) else { continue }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
