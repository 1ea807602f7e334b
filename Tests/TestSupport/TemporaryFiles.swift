import Foundation

/// A fresh path for a database file, in a folder of this test process's own.
package func temporaryDatabasePath(_ name: String = "database") -> String {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("nckc-tests-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
}
