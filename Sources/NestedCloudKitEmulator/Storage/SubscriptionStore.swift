import Foundation

/// A database's subscriptions as the wire describes them, kept by the emulator itself: the portable database knows
/// zone and database subscriptions, while the emulator also serves query subscriptions and must remember who made
/// each one, to know whose notification URL a push goes to. It runs on a queue of its own (``FileQueueExecutor``),
/// as it writes its file whole on every change.
actor SubscriptionStore {
    /// A subscription and the user who saved it, as the file keeps them.
    struct Entry: Sendable, Codable, Hashable {
        var subscription: JSONValue
        var owner: String?
    }

    /// A subscription, what it fires on, and the user who saved it.
    struct Active: Sendable {
        var entry: Entry
        var rule: SubscriptionRule
    }

    private var entries: [String: Active] = [:]
    /// The file they are kept in, for a data directory; `nil` in memory.
    private let file: URL?
    /// The record name the wire gives the database's owner, which its subscriptions' zones name.
    private let ownerRecordName: String
    private let fileQueue = FileQueueExecutor(label: "NestedCloudKitEmulator.subscriptions")
    nonisolated var unownedExecutor: UnownedSerialExecutor { fileQueue.asUnownedSerialExecutor() }

    /// Subscriptions kept in memory only.
    init(ownerRecordName: String) {
        file = nil
        self.ownerRecordName = ownerRecordName
    }

    /// The subscriptions kept in `file` (none if there is no file yet).
    /// - Throws: ``DamagedFile`` if the file can't be read or decoded, or holds a subscription that can't be read:
    ///   starting without them would silently drop subscriptions of the database, and the next save would write
    ///   over the file.
    init(file: URL, ownerRecordName: String) throws(DamagedFile) {
        self.file = file
        self.ownerRecordName = ownerRecordName
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        let saved: [String: Entry]
        do {
            saved = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: file))
        } catch {
            throw DamagedFile(reason: FilePaths.removed(from: "\(error)"))
        }
        for (id, entry) in saved {
            do {
                entries[id] = Active(
                    entry: entry, rule: try SubscriptionRule(entry.subscription, ownerRecordName: ownerRecordName))
            } catch {
                throw DamagedFile(reason: "subscription \(id) can't be read: \(error.reason)")
            }
        }
    }

    /// A subscriptions file that can't be read, and why (without its path).
    struct DamagedFile: Error {
        let reason: String
    }

    /// Every subscription, by ID.
    var all: [Active] { entries.keys.sorted().compactMap { entries[$0] } }

    func entry(_ id: String) -> Entry? { entries[id]?.entry }

    /// Keeps a subscription; one that can't be read is refused with the reason.
    func save(_ entry: Entry, id: String) throws(SaveError) {
        let rule: SubscriptionRule
        do {
            rule = try SubscriptionRule(entry.subscription, ownerRecordName: ownerRecordName)
        } catch {
            throw .unreadable(error)
        }
        var changed = entries
        changed[id] = Active(entry: entry, rule: rule)
        do {
            try persist(changed)
        } catch {
            throw .notWritten(FilePaths.removed(from: "\(error)"))
        }
        entries = changed
    }

    /// Why a subscription wasn't kept.
    enum SaveError: Error {
        /// The subscription can't be read; the error says why.
        case unreadable(ServerError)
        /// The file couldn't be written; the reason names no path.
        case notWritten(String)

        /// The error a request that saved it answers with.
        func serverError(id: String) -> ServerError {
            switch self {
            case .unreadable(let error): error
            case .notWritten(let reason): ServerError(.internalError, "couldn't keep subscription \(id): \(reason)")
            }
        }
    }

    func delete(_ id: String) throws {
        var changed = entries
        changed[id] = nil
        try persist(changed)
        entries = changed
    }

    /// Writes the whole set to a new file and renames it over the old, so a crash leaves one or the other whole.
    private func persist(_ changed: [String: Active]) throws {
        guard let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(changed.mapValues(\.entry)).write(to: file, options: .atomic)
    }
}
