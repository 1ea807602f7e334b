import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import NestedCloudKitSync
import ToolSupport

/// Two devices on one server, both editing offline; the sync engine resolves the conflict by the chosen policy and
/// both converge.
@main
struct SyncExampleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "SyncExample",
        abstract: "Two devices edit a shopping list offline, then sync through one server and converge.",
        discussion: """
            The server and each device's store are SQLite files in a new temporary folder (or --directory). \
            Time is simulated, so the run is the same every time.
            """
    )

    enum Policy: String, ExpressibleByArgument, CaseIterable {
        case fieldByField, serverWins, clientWins, newestEditWins

        var conflictPolicy: ConflictPolicy {
            switch self {
            case .fieldByField: .fieldByField
            case .serverWins: .serverWins
            case .clientWins: .clientWins
            case .newestEditWins: .newestEditWins
            }
        }
    }

    @Option(help: "The conflict policy: \(Policy.allCases.map(\.rawValue).joined(separator: ", ")).")
    var policy: Policy = .fieldByField

    @Option(help: "The folder for the server's and the devices' files; a new temporary one if omitted.")
    var directory: String?

    @Flag(help: "Print the CloudKit schema the example's records need, in CloudKit's schema language, and exit.")
    var printSchema = false

    @Option(help: "Record what both devices send and receive to this file, as JSON Lines (values redacted).")
    var trace: String?

    @Flag(help: "Keep field values in the trace (--trace): the example's data is no one's.")
    var traceValues = false

    @OptionGroup var logging: LogLevelOption

    func run() async throws {
        logging.bootstrap()
        if printSchema {
            print(
                try CloudSchema(syncing: [ShoppingList.self, Item.self], indexes: Item.storeIndexes).text,
                terminator: "")
            return
        }
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Self.temporaryFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let clock = VirtualCloudClock()
        let server = try SQLiteCloudDatabase(
            path: folder.appendingPathComponent("server.sqlite").path, clock: clock)
        let configuration = SyncConfiguration(conflictPolicy: policy.conflictPolicy)
        let recorder = try trace.map {
            try SyncTrace(
                writingTo: URL(fileURLWithPath: $0), values: traceValues ? .included : .redacted, clock: clock)
        }
        let phone = try await ExampleDevice(
            "phone", path: folder.appendingPathComponent("phone.sqlite").path,
            server: recorder?.database(server, client: "phone") ?? server, clock: clock, configuration: configuration)
        let laptop = try await ExampleDevice(
            "laptop", path: folder.appendingPathComponent("laptop.sqlite").path,
            server: recorder?.database(server, client: "laptop") ?? server, clock: clock, configuration: configuration)
        print("NestedCloudKitSync: two devices, one server, policy \(policy.rawValue)")
        print("Files in \(folder.path)\n")
        // Closed whether the run succeeds or not: a trace of a failed run is the one worth reading.
        do {
            try await play(phone: phone, laptop: laptop, clock: clock)
        } catch {
            await recorder?.close()
            throw error
        }
        await recorder?.close()
        if let trace { print("\nThe trace of both devices' requests is in \(trace)") }
    }

    /// The story: a list written, edited offline on both devices, synced, shown on the laptop's screen.
    private func play(phone: ExampleDevice, laptop: ExampleDevice, clock: VirtualCloudClock) async throws {

        print("1. The phone writes a list and syncs; the laptop syncs and gets it.")
        let list = ShoppingList(
            id: "groceries", title: "Groceries",
            items: [Item(id: "milk", text: "Milk", done: false), Item(id: "bread", text: "Bread", done: false)])
        try await phone.store.save(list)
        try await phone.sync()
        try await laptop.sync()

        print("\n2. Both go offline and edit the same list.")
        var onPhone = try await phone.list()
        onPhone.title = "Weekend groceries"
        onPhone.items[0].done = true
        try await phone.store.save(onPhone)
        print("   phone:  renames the list \"Weekend groceries\", ticks Milk")
        clock.advance(by: .seconds(60))
        var onLaptop = try await laptop.list()
        onLaptop.title = "Groceries for Sunday"
        onLaptop.items[0].text = "Oat milk"
        onLaptop.items.append(Item(id: "apples", text: "Apples", done: false))
        try await laptop.store.save(onLaptop)
        print("   laptop: a minute later, renames it \"Groceries for Sunday\", changes Milk to Oat milk, adds Apples")

        print("\n3. Back online: the phone syncs first, then the laptop, then the phone again.")
        try await phone.sync()
        try await laptop.sync()
        try await phone.sync()

        print("\n4. What each device holds now:")
        for device in [phone, laptop] {
            print("\n\(device.name):")
            for line in try await device.tree() { print("   " + line) }
        }
        let converged = try await phone.list() == laptop.list()
        print("\nConverged: \(converged ? "yes, both devices hold the same list" : "NO")")
        if !converged { throw ExitCode.failure }

        print("\n5. The laptop's screen: the open items, newest first, a query SQLite answers on an index, observed.")
        try await laptop.store.declareIndexes(for: [Item.self])
        let openItems = ModelQuery(Item.self).filter(.equals(.done, false)).sorted(by: .descending(.creationDate))
        var screen = laptop.store.observe(openItems).makeAsyncIterator()
        print("   laptop's screen: " + Self.describe(try await screen.next() ?? []))
        clock.advance(by: .seconds(60))
        try await phone.store.update(ShoppingList.self, id: "groceries") { list in
            list.items.append(Item(id: "eggs", text: "Eggs", done: false))
        }
        try await phone.store.update(Item.self, id: "bread") { $0.done = true }
        print("   phone: adds Eggs, ticks Bread, and syncs; the laptop syncs")
        try await phone.sync()
        try await laptop.sync()
        // The observation delivers after each transaction of the sync; the screen shows the last result.
        let current = try await laptop.store.fetch(openItems)
        var shown = try await screen.next() ?? []
        while shown != current { shown = try await screen.next() ?? [] }
        print("   laptop's screen: " + Self.describe(shown))
        guard shown.first?.id == "eggs" else { throw ExitCode.failure }
    }

    static func describe(_ items: [Item]) -> String {
        items.isEmpty ? "nothing to buy" : items.map(\.text).joined(separator: ", ")
    }

    static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("SyncExample-\(UUID().uuidString)")
    }
}

/// A device: its store, its engine, and a printout of what the engine reports.
struct ExampleDevice {
    let name: String
    let store: SyncStore
    let engine: SyncEngine

    init(
        _ name: String, path: String, server: any CloudDatabase, clock: VirtualCloudClock,
        configuration: SyncConfiguration
    ) async throws {
        self.name = name
        store = try SyncStore(path: path, clock: clock)
        engine = SyncEngine(store: store, database: server, configuration: configuration)
    }

    /// Syncs and prints the events of this sync.
    func sync() async throws {
        let events = await engine.events()
        try await engine.sync()
        for await event in events {
            if let line = Self.describe(event) { print("   \(name): \(line)") }
            if case .syncFinished = event { break }
        }
    }

    func list() async throws -> ShoppingList {
        guard let list = try await store.fetch(ShoppingList.self, id: "groceries") else {
            throw ValidationError("\(name) has no list")
        }
        return list
    }

    func tree() async throws -> [String] {
        let zone = store.zoneID
        var records: [CloudRecord.ID: CloudRecord] = [:]
        for type in ["ShoppingList", "Item"] {
            for record in try await store.records(ofType: type, in: zone) { records[record.id] = record }
        }
        guard let root = records[CloudRecord.ID(recordName: "groceries", zoneID: zone)] else { return [] }
        return RecordTreePrinter(records: records).lines(for: root)
    }

    static func describe(_ decision: ConflictResolution.Decision) -> String {
        switch decision {
        case .keptServer: "kept the server's record"
        case .keptClient: "kept this device's record"
        case .merged(let fromServer, let fromClient):
            "merged: \(fromServer.joined(separator: ", ")) from the server, "
                + "\(fromClient.joined(separator: ", ")) from this device"
        case .deletedWithServer: "deleted, as on the server"
        case .recreatedFromClient: "saved again, though the server had deleted it"
        case .keptLocalDeletion: "kept this device's deletion"
        case .restoredFromServer: "restored from the server, though this device had deleted it"
        case .restoredForReference(let holder): "kept, because \(holder.recordName) needs it"
        case .deletedWithTarget(let target): "deleted with \(target.recordName), which it belonged to"
        }
    }

    static func describe(_ event: SyncEvent) -> String? {
        func names(_ ids: [CloudRecord.ID]) -> String { ids.map(\.recordName).joined(separator: ", ") }
        switch event {
        case .sentChanges(let sent):
            return "sent "
                + [
                    sent.saved.isEmpty ? nil : "saves of \(names(sent.saved))",
                    sent.deleted.isEmpty ? nil : "deletions of \(names(sent.deleted))",
                ].compactMap { $0 }.joined(separator: " and ")
        case .fetchedChanges(let fetched):
            return "fetched " + names(fetched.saved + fetched.deleted)
        case .conflictResolved(let resolution):
            return "conflict on \(resolution.recordID.recordName): " + describe(resolution.decision)
        case .syncFinished(let error?):
            return "sync failed: \(error)"
        case .halted(let reason):
            return "halted: \(reason)"
        default:
            return nil
        }
    }
}
