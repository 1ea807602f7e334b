import Foundation

/// A database's subscriptions as the wire describes them, kept by the emulator itself: the portable database knows
/// zone and database subscriptions, while the emulator also serves query subscriptions and must remember who made
/// each one, to know whose notification URL a push goes to.
actor SubscriptionStore {
    /// A subscription and the user who saved it.
    struct Entry: Sendable, Codable, Hashable {
        var subscription: JSONValue
        var owner: String?
    }

    private var entries: [String: Entry] = [:]
    /// The file they are kept in, for a data directory; `nil` in memory.
    private let file: URL?

    /// Subscriptions kept in memory only.
    init() { file = nil }

    /// The subscriptions kept in `file` (none if there is no file yet).
    /// - Throws: ``DamagedFile`` if the file can't be read or decoded: starting without them would silently drop
    ///   every subscription of the database, and the next save would write over the file.
    init(file: URL) throws(DamagedFile) {
        self.file = file
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        do {
            entries = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: file))
        } catch {
            throw DamagedFile(reason: FilePaths.removed(from: "\(error)"))
        }
    }

    /// A subscriptions file that can't be read, and why (without its path).
    struct DamagedFile: Error {
        let reason: String
    }

    var all: [Entry] { entries.keys.sorted().compactMap { entries[$0] } }

    func entry(_ id: String) -> Entry? { entries[id] }

    func save(_ entry: Entry, id: String) throws {
        var changed = entries
        changed[id] = entry
        try persist(changed)
        entries = changed
    }

    func delete(_ id: String) throws {
        var changed = entries
        changed[id] = nil
        try persist(changed)
        entries = changed
    }

    /// Writes the whole set to a new file and renames it over the old, so a crash leaves one or the other whole.
    private func persist(_ changed: [String: Entry]) throws {
        guard let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(changed).write(to: file, options: .atomic)
    }
}
