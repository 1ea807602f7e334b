import ArgumentParser
import Logging

/// The examples' and the benchmarks' `--log-level`: how much of the library's log (swift-log) they print, to
/// standard error, so that what they show on standard output stays readable.
public struct LogLevelOption: ParsableArguments {
    @Option(
        help: """
            The lowest level of the library's log to print to standard error: trace, debug, info, notice, warning, \
            error or critical.
            """,
        transform: Self.level(named:))
    public var logLevel: Logger.Level = .warning

    /// The option at its default, `warning`.
    public init() {}

    private static func level(named name: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: name) else {
            throw ValidationError(
                "no log level \(name): one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    /// Sends every logger's lines, from this level up, to standard error; once per process.
    public func bootstrap() {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
