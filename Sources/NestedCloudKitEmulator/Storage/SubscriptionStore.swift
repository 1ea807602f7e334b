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

    init(file: URL?) {
        self.file = file
        if let file, let data = try? Data(contentsOf: file),
            let stored = try? JSONDecoder().decode([String: Entry].self, from: data)
        {
            entries = stored
        }
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
