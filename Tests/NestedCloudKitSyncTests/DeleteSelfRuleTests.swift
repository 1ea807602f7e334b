import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// Deletions that meet edits through `.deleteSelf` references: a folder deleted on one device while another edits
/// or adds an item in it. After the devices converge, no record holds a `.deleteSelf` reference to a record that
/// exists nowhere, the delete policy decides which side wins, and every event says what the server holds.
@Suite("Sync: deletions through .deleteSelf references", .stopsEmulators)
struct DeleteSelfRuleTests {
    enum Order: String, CaseIterable, Sendable {
        /// The device that deleted the folder syncs first.
        case deleterFirst
        /// The device that edited or added an item syncs first.
        case editorFirst
    }

    private static let types = ["Folder", "Item"]

    private func devices(
        _ scenario: any DeviceScenario, _ policy: DeleteConflictPolicy
    ) async throws -> (Device, Device) {
        let configuration = SyncConfiguration(deleteConflictPolicy: policy, retry: SyncRetryPolicy(jitter: 0))
        return (try await scenario.device(configuration), try await scenario.device(configuration))
    }

    /// Syncs the devices in turns until both have nothing left to send and fetched the other's last changes.
    private func converge(_ first: Device, _ second: Device) async throws {
        for _ in 0..<3 {
            try await first.sync()
            try await second.sync()
        }
    }

    private func item(_ id: String, _ title: String, in folder: String) -> Item {
        Item(id: id, title: title, folder: CloudLazyReference(recordID: CloudRecord.ID(recordName: folder)))
    }

    /// What both devices and the server hold, by record name.
    private func holdings(
        _ scenario: any DeviceScenario, _ devices: [Device]
    ) async throws -> (server: [String], devices: [[String]]) {
        let server = try await scenario.serverRecords(ofTypes: Self.types).map(\.id.recordName)
        var local: [[String]] = []
        for device in devices {
            var names: [String] = []
            for type in Self.types { names += try await device.store.records(ofType: type).map(\.id.recordName) }
            local.append(names.sorted())
        }
        return (server, local)
    }

    /// No server record holds a `.deleteSelf` reference to a record the server doesn't have.
    private func expectNoOrphans(_ scenario: any DeviceScenario, _ comment: Comment) async throws {
        let records = try await scenario.serverRecords(ofTypes: Self.types)
        let names = Set(records.map(\.id.recordName))
        for record in records {
            for target in SyncLedger.deleteSelfTargets(of: record) {
                #expect(names.contains(target.recordName), "\(record.id.recordName) → \(target.recordName); \(comment)")
            }
        }
    }

    /// Each resolution says what the server holds at the end.
    private func expectEventsTrue(_ device: Device, server: [String], _ comment: Comment) {
        for resolution in device.recorder.resolutions {
            let kept: Bool
            switch resolution.decision {
            case .restoredFromServer, .restoredForReference, .recreatedFromClient, .keptClient, .keptServer, .merged:
                kept = true
            case .deletedWithServer, .keptLocalDeletion, .deletedWithTarget:
                kept = false
            }
            #expect(
                server.contains(resolution.recordID.recordName) == kept,
                "\(resolution.recordID.recordName): \(resolution.decision); \(comment)")
        }
    }

    @Test(arguments: ScenarioServer.allCases)
    func anEditAgainstAnotherDevicesCascadeFollowsTheDeletePolicy(server: ScenarioServer) async throws {
        for policy in [DeleteConflictPolicy.editWins, .deleteWins] {
            for order in Order.allCases {
                let comment: Comment = "\(policy), \(order.rawValue)"
                let scenario = try await server.scenario()
                let (editor, deleter) = try await devices(scenario, policy)
                try await editor.store.save(Folder(id: "f", name: "Trip"))
                try await editor.store.save(item("i1", "tickets", in: "f"))
                try await editor.store.save(item("i2", "hotel", in: "f"))
                try await editor.sync()
                try await deleter.sync()
                // The deleter deletes the folder (and so its items, locally); the editor, offline, edits one item.
                try await deleter.store.delete(Folder(id: "f", name: "Trip"))
                #expect(try await deleter.store.fetch(Item.self, id: "i1") == nil, comment)
                try await editor.store.save(item("i1", "tickets, edited", in: "f"))
                switch order {
                case .deleterFirst: try await converge(deleter, editor)
                case .editorFirst: try await converge(editor, deleter)
                }
                let (onServer, onDevices) = try await holdings(scenario, [editor, deleter])
                switch policy {
                case .editWins:
                    #expect(onServer == ["f", "i1"], comment)
                    #expect(try await deleter.store.fetch(Item.self, id: "i1")?.title == "tickets, edited", comment)
                case .deleteWins:
                    #expect(onServer == [], comment)
                }
                #expect(onDevices == [onServer, onServer], comment)
                try await expectNoOrphans(scenario, comment)
                expectEventsTrue(editor, server: onServer, comment)
                expectEventsTrue(deleter, server: onServer, comment)
                #expect(!(editor.recorder.resolutions + deleter.recorder.resolutions).isEmpty, comment)
            }
        }
    }

    @Test(arguments: ScenarioServer.allCases)
    func anItemAddedToAFolderAnotherDeviceDeletedFollowsTheDeletePolicy(server: ScenarioServer) async throws {
        for policy in [DeleteConflictPolicy.editWins, .deleteWins] {
            for order in Order.allCases {
                let comment: Comment = "\(policy), \(order.rawValue)"
                let scenario = try await server.scenario()
                let (adder, deleter) = try await devices(scenario, policy)
                try await deleter.store.save(Folder(id: "f", name: "Trip"))
                try await deleter.sync()
                try await adder.sync()
                try await deleter.store.delete(Folder(id: "f", name: "Trip"))
                try await adder.store.save(item("new", "passport", in: "f"))
                switch order {
                case .deleterFirst: try await converge(deleter, adder)
                case .editorFirst: try await converge(adder, deleter)
                }
                let (onServer, onDevices) = try await holdings(scenario, [adder, deleter])
                // Under .editWins the folder comes back for the new item; under .deleteWins the item goes with it.
                #expect(onServer == (policy == .editWins ? ["f", "new"] : []), comment)
                #expect(onDevices == [onServer, onServer], comment)
                try await expectNoOrphans(scenario, comment)
                expectEventsTrue(adder, server: onServer, comment)
                expectEventsTrue(deleter, server: onServer, comment)
            }
        }
    }

    @Test func aRestoredFolderIsReportedWithTheItemThatNeededIt() async throws {
        let scenario = Scenario()
        let (editor, deleter) = try await devices(scenario, .editWins)
        try await editor.store.save(Folder(id: "f", name: "Trip"))
        try await editor.store.save(item("i1", "tickets", in: "f"))
        try await editor.sync()
        try await deleter.sync()
        try await deleter.store.delete(Folder(id: "f", name: "Trip"))
        try await editor.store.save(item("i1", "tickets, edited", in: "f"))
        try await editor.sync()
        try await deleter.sync()
        let i1 = scenario.recordID("i1")
        let f = scenario.recordID("f")
        #expect(
            deleter.recorder.resolutions == [
                ConflictResolution(recordID: i1, decision: .restoredFromServer),
                ConflictResolution(recordID: f, decision: .restoredForReference(from: i1)),
            ])
        #expect(try await deleter.store.pendingChanges().isEmpty)
    }

    @Test func aChainOfDeleteSelfReferencesKeepsEveryLinkAnEditNeeds() async throws {
        // A folder in a folder: deleting the outer one deletes the inner one and its item on the server.
        let scenario = Scenario()
        let (editor, deleter) = try await devices(scenario, .editWins)
        let zone = editor.store.zoneID
        func id(_ name: String) -> CloudRecord.ID { CloudRecord.ID(recordName: name, zoneID: zone) }
        let outer = CloudRecord(recordType: "Folder", id: id("outer"), fields: ["name": .string("outer")])
        let inner = CloudRecord(
            recordType: "Folder", id: id("inner"),
            fields: [
                "name": .string("inner"),
                "enclosing": .reference(CloudReference(recordID: id("outer"), action: .deleteSelf)),
            ])
        try await editor.store.save([outer, inner])
        try await editor.store.save(item("i", "note", in: "inner"))
        try await editor.sync()
        try await deleter.sync()
        try await deleter.store.deleteRecords(withIDs: [id("outer")])
        try await deleter.sync()
        try await editor.store.save(item("i", "note, edited", in: "inner"))
        try await converge(editor, deleter)
        let onServer = await scenario.serverRecords(ofTypes: Self.types).map(\.id.recordName)
        #expect(onServer == ["i", "inner", "outer"])
        #expect(try await deleter.store.fetch(Item.self, id: "i")?.title == "note, edited")
    }
}
