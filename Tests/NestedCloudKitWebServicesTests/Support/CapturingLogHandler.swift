import Foundation
import Logging
import NIOConcurrencyHelpers

/// A log handler at trace level that keeps every line it is given, metadata included, for tests that check what
/// reaches the logs.
struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        lines.withLockedValue { $0.append("\(event.level) \(event.message) \(merged)") }
    }
}
