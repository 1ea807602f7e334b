import Foundation

/// A folder of database files for one group of workloads, deleted with it.
final class TemporaryFiles {
    let directory: URL
    private var count = 0

    init(prefix: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The path of a file not used before.
    func newPath() -> String {
        count += 1
        return directory.appendingPathComponent("\(count).sqlite").path
    }
}
