import Foundation
import TestSupport
import Testing

@testable import NestedCloudKitEmulator

/// The admin API the dashboard reads: records a page at a time, a revision per database so that an unchanged page
/// isn't read again, and a request log its own polling stays out of.
@Suite struct EmulatorAdminTests {
    typealias Session = EmulatorRouterHarness.Session

    func create(_ name: String, _ type: String = "Note", fields: [String: Any] = [:]) -> [String: Any] {
        ["operationType": "create", "record": ["recordName": name, "recordType": type, "fields": fields]]
    }

    @Test func adminRecordsArePagedWithAContinuation() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        let zone = ["zoneName": "Notes"]
        _ = try await alice.call(
            "zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        _ = try await alice.call("records/modify", ["operations": (0..<150).map { create("d\($0)") }])
        _ = try await alice.call(
            "records/modify", ["zoneID": zone, "operations": (0..<100).map { create("z\($0)", "Book") }])
        let database = "container=\(harness.container)&scope=private&user=alice"
        var seen: [String] = []
        var continuation: String?
        var pages: [Int] = []
        repeat {
            var target = "/emulator/v1/records?\(database)&limit=100"
            if let continuation { target += "&continuation=\(continuation)" }
            let page = try await harness.send("GET", target)
            #expect(page.status == 200)
            let zones = page.json["zones"] as? [[String: Any]] ?? []
            let names = zones.flatMap {
                ($0["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
            }
            pages.append(names.count)
            seen += names
            continuation = (page.json["continuation"] as? String)?
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics)
        } while continuation != nil && pages.count < 10
        #expect(pages == [100, 100, 50])
        #expect(seen.count == 250)
        #expect(Set(seen).count == 250)
        let bad = try await harness.send("GET", "/emulator/v1/records?\(database)&limit=0")
        #expect(bad.status == 400)
        #expect(bad.json["reason"] as? String == "limit must be 1 to 1000, got 0")
    }

    @Test func aDatabasesRevisionMovesWithEachWriteOnly() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        _ = try await alice.call("records/modify", ["operations": [create("a")]])
        func revision() async throws -> Int? {
            let listed = try await harness.send("GET", "/emulator/v1/databases")
            let databases = listed.json["databases"] as? [[String: Any]] ?? []
            return databases.first { $0["user"] as? String == "alice" }?["revision"] as? Int
        }
        let before = try #require(try await revision())
        _ = try await alice.call("records/lookup", ["records": [["recordName": "a"]]])
        _ = try await harness.send(
            "GET", "/emulator/v1/records?container=\(harness.container)&scope=private&user=alice")
        #expect(try await revision() == before)
        _ = try await alice.call("records/modify", ["operations": [create("b")]])
        #expect(try await revision() == before + 1)
    }

    @Test func adminReadsStayOutOfTheRequestLogUnlessAsked() async throws {
        for logsAdminReads in [false, true] {
            let harness = EmulatorRouterHarness(EmulatorConfiguration(logsAdminReads: logsAdminReads))
            let alice = await Session(harness, user: "alice")
            _ = try await alice.call("zones/list", [:])
            for path in [
                "health", "databases", "faults", "clock",
                "records?container=\(harness.container)&scope=private&user=alice",
            ] {
                #expect(try await harness.send("GET", "/emulator/v1/" + path).status == 200)
            }
            _ = try await harness.send("POST", "/emulator/v1/clock", json: ["advanceSeconds": 1])
            let logged = try await harness.send("GET", "/emulator/v1/requests")
            let paths = (logged.json["requests"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            let expected =
                logsAdminReads
                ? [
                    "/database/1/\(harness.container)/development/private/zones/list", "/emulator/v1/health",
                    "/emulator/v1/databases", "/emulator/v1/faults", "/emulator/v1/clock", "/emulator/v1/records",
                    "/emulator/v1/clock",
                ]
                : ["/database/1/\(harness.container)/development/private/zones/list", "/emulator/v1/clock"]
            #expect(paths == expected, "logsAdminReads: \(logsAdminReads)")
        }
    }

    /// An imported subscription is read as a saved one is: one that can't be read is refused, not kept to be
    /// matched without the parts that can't be read.
    @Test func anImportedSubscriptionThatCantBeReadIsRefused() async throws {
        let harness = EmulatorRouterHarness()
        let subscription: [String: Any] = [
            "subscriptionID": "broad", "subscriptionType": "query", "firesOn": ["create"], "zoneWide": true,
            "query": [
                "recordType": "Note",
                "filterBy": [["comparator": "RESEMBLES", "fieldName": "title", "fieldValue": ["value": "a"]]],
            ],
        ]
        let answer = try await harness.send(
            "POST", "/emulator/v1/import",
            json: [
                "databases": [
                    [
                        "container": harness.container, "scope": "private", "user": "alice",
                        "subscriptions": [subscription],
                    ]
                ]
            ])
        #expect(answer.status == 400)
        #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect((answer.json["reason"] as? String)?.contains("RESEMBLES") == true)
        let export = try await harness.send("GET", "/emulator/v1/export")
        let databases = export.json["databases"] as? [[String: Any]] ?? []
        #expect(databases.allSatisfy { ($0["subscriptions"] as? [Any] ?? []).isEmpty })
        await harness.close()
    }
}
