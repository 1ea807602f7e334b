import Foundation
import Logging
import NestedCloudKitCodable

/// The lines loggers made through it, in order: a `LogHandler` for tests, at every level.
final class CapturedLog: Sendable {
    struct Line: Sendable, Equatable {
        let label: String
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let captured = Locked<[Line]>([])

    var lines: [Line] { captured.withLock { $0 } }

    func clear() { captured.withLock { $0 = [] } }

    /// A logger with this label whose lines are captured here.
    func logger(label: String = "NestedCloudKitSync") -> Logger {
        Logger(label: label) { label in Handler(label: label, log: self) }
    }

    fileprivate func append(_ line: Line) { captured.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let label: String
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(
                Line(
                    label: label, level: event.level, message: event.message.description,
                    metadata: all.mapValues { $0.description }))
        }
    }
}
