import Foundation
import NIOConcurrencyHelpers

/// The latest requests the emulator answered, for the dashboard and for tests that check what a client sent.
final class RequestLog: Sendable {
    struct Entry: Sendable, Codable, Hashable {
        var time: Date
        var method: String
        /// The path without its query, which holds tokens.
        var path: String
        var status: Int
        var durationMilliseconds: Double
        var user: String?
        var serverErrorCode: String?
    }

    static let capacity = 1000
    private let entries = NIOLockedValueBox<[Entry]>([])

    var all: [Entry] { entries.withLockedValue { $0 } }

    func append(_ entry: Entry) {
        entries.withLockedValue { entries in
            entries.append(entry)
            if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
        }
    }

    func clear() { entries.withLockedValue { $0 = [] } }
}
