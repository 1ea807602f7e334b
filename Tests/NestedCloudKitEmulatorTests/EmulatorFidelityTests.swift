import Crypto
import Foundation
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitEmulator

/// Where the emulator keeps to Apple's reference: the record size limit, `zones/list`'s sync tokens, the query
/// page size, the `DELETE_SELF` limit in request order, production's index on `recordName`.
@Suite struct EmulatorFidelityTests {
    typealias Session = EmulatorRouterHarness.Session

    func create(_ name: String, _ type: String = "Note", fields: [String: Any] = [:]) -> [String: Any] {
        ["operationType": "create", "record": ["recordName": name, "recordType": type, "fields": fields]]
    }

    func records(_ answer: EmulatorRouterHarness.Answer) -> [[String: Any]] {
        answer.json["records"] as? [[String: Any]] ?? []
    }

    // MARK: What a write reads

    /// A write reads the records it names only when something needs them: here, a query subscription that tells
    /// created from updated records. The database's own rules catch an update of a record that isn't there.
    @Test func aWriteReadsNothingFirstUnlessAQuerySubscriptionNeedsIt() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        func fetches() async throws -> Int {
            let key = DatabaseKey(
                container: harness.container, environment: .development, scope: .public, user: nil)
            let handle = try #require(await harness.state.registry.openHandle(for: key))
            return try #require(handle.database as? InMemoryCloudDatabase).network.statistics.fetchRequests
        }
        #expect(try await alice.call("records/modify", ["operations": [create("n")]], scope: "public").status == 200)
        let update: [String: Any] = [
            "operationType": "forceUpdate",
            "record": ["recordName": "n", "recordType": "Note", "fields": ["title": ["value": "two"]]],
        ]
        #expect(try await alice.call("records/modify", ["operations": [update]], scope: "public").status == 200)
        #expect(try await fetches() == 0)

        let missing: [String: Any] = [
            "operationType": "update",
            "record": ["recordName": "gone", "recordType": "Note", "fields": [:], "recordChangeTag": "t"],
        ]
        let refused = try await alice.call("records/modify", ["operations": [missing]], scope: "public")
        #expect(records(refused).first?["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(try await fetches() == 0)

        let subscription: [String: Any] = [
            "subscriptionID": "notes", "subscriptionType": "query", "firesOn": ["create", "update"],
            "query": ["recordType": "Note"],
        ]
        let saved = try await alice.call(
            "subscriptions/modify", ["operations": [["operationType": "create", "subscription": subscription]]],
            scope: "public")
        #expect(saved.status == 200)
        #expect(try await alice.call("records/modify", ["operations": [update]], scope: "public").status == 200)
        #expect(try await fetches() == 1)
    }

    // MARK: 1 MB per record

    @Test func aRecordOverOneMegabyteOfFieldDataIsRefused() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        let big = String(repeating: "x", count: 2_000_000)
        let refused = try await alice.call(
            "records/modify",
            ["operations": [create("big", fields: ["text": ["value": big, "type": "STRING"]]), create("small")]])
        #expect(refused.status == 200)
        let items = records(refused)
        #expect(items.first?["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(
            items.first?["reason"] as? String
                == "record too large: big holds 2000004 bytes of field data; CloudKit takes at most 1 MB (1000000 bytes) a record, assets not counted: keep large values in assets"
        )
        #expect(items.last?["recordChangeTag"] != nil)
        let lookedUp = try await alice.call("records/lookup", ["records": [["recordName": "big"]]])
        #expect(records(lookedUp).first?["serverErrorCode"] as? String == "NOT_FOUND")

        // An update that would take a record over the limit with the fields it keeps.
        let half = String(repeating: "y", count: 600_000)
        let first = try await alice.call(
            "records/modify", ["operations": [create("grows", fields: ["a": ["value": half, "type": "STRING"]])]])
        let tag = try #require(records(first).first?["recordChangeTag"] as? String)
        let update: [String: Any] = [
            "operationType": "update",
            "record": [
                "recordName": "grows", "recordType": "Note", "recordChangeTag": tag,
                "fields": ["b": ["value": half, "type": "STRING"]],
            ],
        ]
        let grown = try await alice.call("records/modify", ["operations": [update]])
        #expect(records(grown).first?["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(
            (records(grown).first?["reason"] as? String)?.hasPrefix("record too large: grows holds 1200002 bytes")
                == true)
    }

    // MARK: records/modify's operation types

    @Test func eachOperationTypeAnswersWithCloudKitsErrorCodes() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        let zone = ["zoneName": "Notes"]
        _ = try await alice.call(
            "zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        func modify(_ operations: [[String: Any]], atomic: Bool = true) async throws -> [[String: Any]] {
            records(
                try await alice.call("records/modify", ["zoneID": zone, "operations": operations, "atomic": atomic]))
        }
        func operation(_ type: String, _ name: String, tag: String? = nil, fields: [String: Any] = [:])
            -> [String: Any]
        {
            var record: [String: Any] = ["recordName": name, "recordType": "Note", "fields": fields]
            if let tag { record["recordChangeTag"] = tag }
            return ["operationType": type, "record": record]
        }
        let created = try await modify([
            operation(
                "create", "n", fields: ["a": ["value": "1", "type": "STRING"], "b": ["value": "2", "type": "STRING"]])
        ])
        let tag = try #require(created.first?["recordChangeTag"] as? String)

        #expect(try await modify([operation("create", "n")]).first?["serverErrorCode"] as? String == "EXISTS")
        let untagged = try await modify([operation("update", "n")]).first
        #expect(untagged?["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(
            untagged?["reason"] as? String
                == "update of n needs the recordChangeTag it was fetched with; forceUpdate overwrites")
        #expect(
            try await modify([operation("replace", "n", tag: "stale")]).first?["serverErrorCode"] as? String
                == "CONFLICT")
        #expect(
            try await modify([operation("delete", "n", tag: "stale")]).first?["serverErrorCode"] as? String
                == "CONFLICT")
        #expect(
            try await modify([operation("update", "gone", tag: tag)]).first?["serverErrorCode"] as? String
                == "NOT_FOUND")

        // An update keeps the fields it doesn't send; a replace clears them.
        let updated = try await modify([
            operation("update", "n", tag: tag, fields: ["a": ["value": "3", "type": "STRING"]])
        ])
        let updatedFields = try #require(updated.first?["fields"] as? [String: Any])
        #expect(Set(updatedFields.keys) == ["a", "b"])
        let newTag = try #require(updated.first?["recordChangeTag"] as? String)
        let replaced = try await modify([
            operation("replace", "n", tag: newTag, fields: ["a": ["value": "4", "type": "STRING"]])
        ])
        #expect(Set((replaced.first?["fields"] as? [String: Any])?.keys ?? [:].keys) == ["a"])

        // An operation the emulator can't read fails the zone's others when atomic, and only itself when not.
        let mixed = [operation("forceUpdate", "m"), operation("update", "n")]
        let atomic = try await modify(mixed)
        #expect(atomic.map { $0["serverErrorCode"] as? String } == ["ATOMIC_ERROR", "BAD_REQUEST"])
        let separate = try await modify(mixed, atomic: false)
        #expect(separate.map { $0["serverErrorCode"] as? String } == [nil, "BAD_REQUEST"])
    }

    // MARK: zones/list

    @Test func zonesListGivesEachZonesSyncToken() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        let zone = ["zoneName": "Notes"]
        _ = try await alice.call(
            "zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        _ = try await alice.call("records/modify", ["zoneID": zone, "operations": [create("n1")]])
        let listed = try await alice.call("zones/list", [:])
        let zones = try #require(listed.json["zones"] as? [[String: Any]])
        let notes = try #require(zones.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String == "Notes" })
        let defaultZone = try #require(
            zones.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String == "_defaultZone" })
        let syncToken = try #require(notes["syncToken"] as? String)
        #expect(notes["atomic"] as? Bool == true)
        // The default zone keeps no change history, so it has no token.
        #expect(defaultZone["syncToken"] == nil)
        #expect(defaultZone["atomic"] as? Bool == false)

        // The token is the zone's state now: nothing changed since, until the next save.
        let since = try await alice.call("changes/zone", ["zones": [["zoneID": zone, "syncToken": syncToken]]])
        let sinceZone = try #require((since.json["zones"] as? [[String: Any]])?.first)
        #expect((sinceZone["records"] as? [Any])?.isEmpty == true)
        #expect(sinceZone["moreComing"] as? Bool == false)
        _ = try await alice.call("records/modify", ["zoneID": zone, "operations": [create("n2")]])
        let after = try await alice.call("changes/zone", ["zones": [["zoneID": zone, "syncToken": syncToken]]])
        let changed = (after.json["zones"] as? [[String: Any]])?.first?["records"] as? [[String: Any]]
        #expect(changed?.compactMap { $0["recordName"] as? String } == ["n2"])
    }

    // MARK: Assets

    /// Every answer that holds a record gives its asset the file's size and checksum: lookup, query, zone changes
    /// and the save's own answer, in memory and under a data directory (where the asset is a file the database
    /// writes), and the download URL gives the bytes back.
    @Test(arguments: [false, true])
    func anAssetIsAnsweredWithItsSizeAndChecksumEverywhere(underADataDirectory: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("assets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = EmulatorRouterHarness(
            EmulatorConfiguration(storage: underADataDirectory ? .directory(directory.path) : .inMemory))
        let alice = await Session(harness, user: "alice")
        // Over a mebibyte, so that the file is read in more than one chunk.
        let bytes = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
        let checksum = Data(SHA256.hash(data: bytes)).base64EncodedString()
        let zone: [String: Any] = ["zoneName": "Photos"]
        _ = try await alice.call(
            "zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        let upload = try await alice.call(
            "assets/upload",
            ["zoneID": zone, "tokens": [["recordName": "photo", "recordType": "Photo", "fieldName": "image"]]])
        let url = try #require((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let posted = try await harness.send("POST", try #require(URL(string: url)?.path), body: bytes)
        let receipt = try #require(posted.json["singleFile"] as? [String: Any])
        let photo: [String: Any] = [
            "recordName": "photo", "recordType": "Photo", "fields": ["image": ["value": receipt, "type": "ASSETID"]],
        ]
        func asset(_ record: [String: Any]?) -> [String: Any]? {
            ((record?["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any]
        }

        let saved = records(
            try await alice.call(
                "records/modify", ["zoneID": zone, "operations": [["operationType": "create", "record": photo]]]))
        let looked = records(
            try await alice.call("records/lookup", ["zoneID": zone, "records": [["recordName": "photo"]]]))
        let queried = records(
            try await alice.call("records/query", ["zoneID": zone, "query": ["recordType": "Photo"]]))
        let changed = try await alice.call("changes/zone", ["zones": [["zoneID": zone]]])
        let changes = (changed.json["zones"] as? [[String: Any]])?.first?["records"] as? [[String: Any]]
        for (answer, record) in [
            ("modify", saved.first), ("lookup", looked.first), ("query", queried.first),
            ("changes", changes?.first),
        ] {
            let described = asset(record)
            #expect(described?["size"] as? Int == bytes.count, "\(answer): \(record ?? [:])")
            #expect(described?["fileChecksum"] as? String == checksum, "\(answer): \(record ?? [:])")
            #expect(described?["downloadURL"] is String, "\(answer)")
        }
        let download = try #require(asset(looked.first)?["downloadURL"] as? String)
        let path = String(download.dropFirst("http://\(EmulatorRouterHarness.host)".count))
            .replacingOccurrences(of: "${f}", with: "photo.jpg")
        let downloaded = try await harness.send("GET", path)
        #expect(downloaded.status == 200)
        #expect(downloaded.body == bytes)

        // A save that sends the asset back as it was fetched keeps it, matched by checksum against the held file's
        // bytes; a checksum that doesn't match is refused.
        func update(_ value: [String: Any]) async throws -> [String: Any]? {
            let held = try await alice.call("records/lookup", ["zoneID": zone, "records": [["recordName": "photo"]]])
            let tag = try #require(records(held).first?["recordChangeTag"] as? String)
            let record: [String: Any] = [
                "recordName": "photo", "recordType": "Photo", "recordChangeTag": tag,
                "fields": ["image": ["value": value, "type": "ASSETID"]],
            ]
            return records(
                try await alice.call(
                    "records/modify", ["zoneID": zone, "operations": [["operationType": "update", "record": record]]])
            ).first
        }
        let fetched = try #require(asset(looked.first))
        let kept = try await update(fetched)
        #expect(asset(kept)?["fileChecksum"] as? String == checksum, "\(kept ?? [:])")
        #expect(asset(kept)?["size"] as? Int == bytes.count)
        var tampered = fetched
        tampered["fileChecksum"] = Data(SHA256.hash(data: Data("other".utf8))).base64EncodedString()
        let refused = try await update(tampered)
        #expect((refused?["reason"] as? String)?.contains("an ASSETID needs the receipt of an upload") == true)
    }

    // MARK: records/query

    @Test func aQueryWithoutResultsLimitAnswersTheDocumented200Records() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        for batch in 0..<2 {
            let operations = (0..<125).map { create(String(format: "n%03d", batch * 125 + $0)) }
            #expect(try await alice.call("records/modify", ["operations": operations]).status == 200)
        }
        let first = try await alice.call("records/query", ["query": ["recordType": "Note"]])
        #expect(records(first).count == 200)
        let marker = try #require(first.json["continuationMarker"] as? String)
        let second = try await alice.call(
            "records/query", ["query": ["recordType": "Note"], "continuationMarker": marker])
        #expect(records(second).count == 50)
        #expect(second.json["continuationMarker"] == nil)
    }

    // MARK: 750 DELETE_SELF references

    @Test func theDeleteSelfLimitRefusesInRequestOrderWithTheRightCount() async throws {
        let harness = EmulatorRouterHarness()
        let alice = await Session(harness, user: "alice")
        let owner: [String: Any] = ["value": ["recordName": "target", "action": "DELETE_SELF"], "type": "REFERENCE"]
        #expect(try await alice.call("records/modify", ["operations": [create("target")]]).status == 200)
        for batch in 0..<4 {
            let operations = (0..<185).map { create("held\(batch * 185 + $0)", fields: ["owner": owner]) }
            let saved = try await alice.call("records/modify", ["operations": operations])
            #expect(records(saved).allSatisfy { $0["serverErrorCode"] == nil })
        }
        // 740 records point to the target; 20 more come, in this order: the first 10 fit.
        let names = (0..<20).map { "new\(String(format: "%02d", 19 - $0))" }
        let answer = try await alice.call(
            "records/modify", ["operations": names.map { create($0, fields: ["owner": owner]) }])
        let items = records(answer)
        #expect(items.count == 20)
        for (index, item) in items.enumerated() {
            #expect(item["recordName"] as? String == names[index])
            if index < 10 {
                #expect(item["serverErrorCode"] == nil, "\(names[index]): \(item)")
            } else {
                #expect(item["serverErrorCode"] as? String == "VALIDATING_REFERENCE_ERROR", "\(names[index])")
                #expect(
                    item["reason"] as? String
                        == "The change to \(names[index]) breaks a reference: 751 records would point to target with deleteSelf; CloudKit allows 750"
                )
            }
        }
    }

    // MARK: Production indexes

    @Test func productionRefusesAnUnfilteredQueryUnlessRecordNameIsQueryable() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(environment: .production))
        try await harness.state.schema.importSchema(
            """
            DEFINE SCHEMA
                RECORD TYPE Note (
                    title STRING QUERYABLE,
                    GRANT READ TO "_world"
                );
                RECORD TYPE Book (
                    "___recordID" REFERENCE QUERYABLE,
                    title STRING QUERYABLE,
                    GRANT READ TO "_world"
                );
            """, container: harness.container, environment: .production)
        let alice = await Session(harness, user: "alice")
        let unfiltered = try await alice.call("records/query", ["query": ["recordType": "Note"]])
        #expect(unfiltered.status == 400)
        #expect(unfiltered.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(unfiltered.json["reason"] as? String == "Field '___recordID' is not marked queryable")
        let title: [String: Any] = [
            "comparator": "EQUALS", "fieldName": "title", "fieldValue": ["value": "t", "type": "STRING"],
        ]
        let filtered = try await alice.call("records/query", ["query": ["recordType": "Note", "filterBy": [title]]])
        #expect(filtered.status == 200)
        #expect(try await alice.call("records/query", ["query": ["recordType": "Book"]]).status == 200)
    }
}
