import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitServer
import NestedCloudKitSync
import NestedCloudKitWebServices
import ToolSupport

/// Alice shares a shopping list with bob, each on a device of their own, through CloudKit Web Services and the
/// emulator: what a Linux or server app does against CloudKit, from sharing to stopping.
@main
struct SharingExampleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "SharingExample",
        abstract: "Alice shares a shopping list with bob through CloudKit Web Services and the emulator.",
        discussion: """
            The emulator runs in this process, on a free loopback port, in memory, as CloudKit's production \
            environment on the schema of the example's models (--print-schema prints it); each device's store is \
            in memory too. Time is simulated, so the run is the same every time.
            """
    )

    static let container = "iCloud.com.example.SharingExample"

    @Flag(help: "Print the CloudKit schema the example's records need, in CloudKit's schema language, and exit.")
    var printSchema = false

    @OptionGroup var logging: LogLevelOption

    /// The schema of the example's records: the emulator serves production on it, as CloudKit would.
    static func schema() throws -> CloudSchema {
        try CloudSchema(syncing: [ShoppingList.self, Item.self])
    }

    func run() async throws {
        logging.bootstrap()
        if printSchema {
            print(try Self.schema().text, terminator: "")
            return
        }
        let clock = VirtualCloudClock()
        // Production, on the schema made from the models: the emulator refuses what CloudKit's production would.
        let emulator = try await CloudKitEmulator.start(EmulatorConfiguration(schema: try Self.schema(), clock: clock))
        do {
            try await share(on: emulator, clock: clock)
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()
    }

    private func share(on emulator: CloudKitEmulator, clock: VirtualCloudClock) async throws {
        print("NestedCloudKitSync: alice shares a shopping list with bob, through the emulator at \(emulator.url)\n")
        let alice = try await SharingDevice("alice", emulator: emulator, container: Self.container, clock: clock)
        let bob = try await SharingDevice("bob", emulator: emulator, container: Self.container, clock: clock)
        let zone = alice.store.zoneID

        print("1. Alice writes her list and syncs.")
        try await alice.store.save(ShoppingList(id: "groceries", title: "Groceries"))
        for (id, text) in [("milk", "Milk"), ("bread", "Bread")] {
            try await alice.store.save(Item(id: id, text: text, done: false, list: Self.list(in: zone)))
        }
        try await alice.sync()

        print("\n2. She shares it with bob, read-write, and sends him the link.")
        let bobRecordName = try await bob.database(.private).userRecordName()
        let share = try await alice.engine.share(CloudRecord.ID(recordName: "groceries", zoneID: zone)) { share in
            share.title = "Groceries"
            try share.addParticipant(.init(userRecordName: bobRecordName, permission: .readWrite))
        }
        guard let url = share.url, let shortGUID = share.shortGUID else {
            throw ValidationError("the emulator gave the share no URL")
        }
        print("   link: \(url.absoluteString)")

        print("\n3. Bob opens the link, sees what it is, accepts, and syncs.")
        let bobShared = try await bob.database(.shared)
        let metadata = try await bobShared.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: true)
        let title = metadata.share.title ?? "a list"
        print("   \"\(title)\", shared by its owner with bob, \(Self.describe(metadata.participantPermission))")
        try await bobShared.acceptShare(shortGUID: shortGUID)
        try await bob.sync()
        let bobsView = metadata.share.id.zoneID
        print("   bob's store now holds alice's zone \(bobsView.zoneName) of \(bobsView.ownerName):")
        for line in try await bob.describeList(in: bobsView) { print("     " + line) }

        print("\n4. Both edit offline: alice ticks Milk; bob adds Eggs. Then both sync.")
        try await alice.store.update(Item.self, id: "milk") { $0.done = true }
        try await bob.store.save(
            Item(id: "eggs", text: "Eggs", done: false, list: Self.list(in: bobsView)), in: bobsView)
        try await bob.sync()
        try await alice.sync()
        try await bob.sync()
        let alicesList = try await alice.describeList(in: zone)
        let bobsList = try await bob.describeList(in: bobsView)
        for (name, lines) in [("alice", alicesList), ("bob", bobsList)] {
            print("   \(name):")
            for line in lines { print("     " + line) }
        }
        let converged = alicesList == bobsList
        print("   Converged: \(converged ? "yes, both hold the same list" : "NO")")
        guard converged else { throw ExitCode.failure }

        print("\n5. Alice makes bob read-only: his next change is refused on his device, and nothing is queued.")
        try await alice.engine.updateShare(share.id) { share in
            try share.addParticipant(.init(userRecordName: bobRecordName, permission: .readOnly))
        }
        try await bob.sync()
        do {
            try await bob.store.update(Item.self, id: "bread", in: bobsView) { $0.done = true }
            print("   bob's change was accepted: NO")
            throw ExitCode.failure
        } catch let error as SyncError where error.code == .sharePermissionDenied {
            print("   refused: \(error.recordID?.recordName ?? "?"): \(error.reason ?? "")")
        }
        print("   bob's pending changes: \(try await bob.engine.status().pendingChanges)")

        print("\n6. Alice stops sharing: bob's copy goes, and his app is told.")
        try await alice.engine.stopSharing(share.id)
        for case .sharedZoneRemoved(let removed, let discarded) in try await bob.sync() {
            print(
                "   event: shared zone \(removed.zoneName) of \(removed.ownerName) removed, \(discarded) changes discarded"
            )
        }
        let left = try await bob.store.fetchAll(Item.self, in: bobsView)
        print("   bob's items of the list: \(left.count); alice's: \(try await alice.store.fetchAll(Item.self).count)")
        guard left.isEmpty else { throw ExitCode.failure }
        print("\nShared, edited by both, and stopped: done.")
    }

    static func list(in zone: CloudRecord.ZoneID) -> CloudLazyReference<ShoppingList> {
        CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: zone))
    }

    static func describe(_ permission: CloudShare.Permission) -> String {
        switch permission {
        case .readWrite: "to read and change"
        case .readOnly: "to read"
        case .none: "without access"
        }
    }
}
