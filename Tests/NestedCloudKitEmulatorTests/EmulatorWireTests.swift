import BackendTestSupport
import Foundation
import NestedCloudKitEmulator
import TestSupport
import Testing

/// The emulator's wire behaviour that the Web Services client doesn't exercise: token rotation, the documented
/// limits, every comparator, markers under change, the production schema, faults, long-poll pushes, FIDELITY.md.
///
/// Most tests drive the request handler directly (``EmulatorRouterHarness``), as HummingbirdTesting's router tests
/// do; the token rotation and the long-poll push go over loopback, end to end, through a real server.
@Suite(.stopsEmulators) struct EmulatorWireTests {
    /// A server on loopback, for the tests that go end to end.
    func start(_ configuration: EmulatorConfiguration = EmulatorConfiguration()) async throws -> EmulatorHTTP {
        EmulatorHTTP(emulator: try await CloudKitEmulator.start(configuration))
    }

    /// The request handler alone.
    func handler(_ configuration: EmulatorConfiguration = EmulatorConfiguration()) -> EmulatorRouterHarness {
        EmulatorRouterHarness(configuration)
    }

    func create(_ name: String, _ type: String = "Note", fields: [String: Any]) -> [String: Any] {
        ["operationType": "create", "record": ["recordName": name, "recordType": type, "fields": fields]]
    }

    @Test func eachAnswerRotatesTheWebAuthTokenAndAUsedOneKeepsWorkingAsLiveCloudKitsDoes() async throws {
        let http = try await start()
        let first = await http.emulator.signIn(user: "alice")
        let answer = try await http.database("private", "zones/list", token: first, json: [:])
        #expect(answer.status == 200)
        let next = try #require(answer.header("X-Apple-CloudKit-Web-Auth-Token"))
        #expect(next != first)
        #expect(answer.header("Access-Control-Expose-Headers")?.contains("X-Apple-CloudKit-Web-Auth-Token") == true)
        // Code written from MistKit's README keeps its first token: live CloudKit takes it again, eight times in a row
        // as MistKit #462 saw, and the newer tokens stay good too.
        for _ in 0..<8 {
            let reused = try await http.database("private", "zones/list", token: first, json: [:])
            #expect(reused.status == 200)
            #expect(reused.header("X-Apple-CloudKit-Web-Auth-Token").map { $0 != first } == true)
        }
        #expect(try await http.database("private", "zones/list", token: next, json: [:]).status == 200)
        // Unused for 30 minutes, a token expires.
        http.emulator.advanceClock(by: 31 * 60)
        #expect(try await http.database("private", "zones/list", token: first, json: [:]).status == 421)
    }

    @Test func singleUseTokensKeepToTheReferenceAndAUsedOneIsRefusedWithASignInURL() async throws {
        let http = try await start(EmulatorConfiguration(webAuthTokens: .singleUse))
        let first = await http.emulator.signIn(user: "alice")
        let answer = try await http.database("private", "zones/list", token: first, json: [:])
        #expect(answer.status == 200)
        let next = try #require(answer.header("X-Apple-CloudKit-Web-Auth-Token"))
        let reused = try await http.database("private", "zones/list", token: first, json: [:])
        #expect(reused.status == 421)
        #expect(reused.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
        #expect((reused.json["redirectURL"] as? String)?.hasSuffix("/emulator/sign-in") == true)
        #expect(try await http.database("private", "zones/list", token: next, json: [:]).status == 200)
    }

    @Test func aRequestOfMoreThan200OperationsIsRefused() async throws {
        let http = handler()
        let token = await http.signIn(user: "alice")
        let operations = (0...200).map { create("n\($0)", fields: [:]) }
        let answer = try await http.database(
            "private", "records/modify", token: token, json: ["operations": operations])
        #expect(answer.status == 400)
        #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
    }

    @Test func updateChangesOnlyWhatItSendsAndReplaceSetsTheRestToNull() async throws {
        let http = handler()
        var token = await http.signIn(user: "alice")
        func modify(_ operations: [[String: Any]]) async throws -> [String: Any] {
            let answer = try await http.database(
                "private", "records/modify", token: token, json: ["operations": operations])
            token = answer.header("X-Apple-CloudKit-Web-Auth-Token") ?? token
            #expect(answer.status == 200, "\(answer.text)")
            return try #require((answer.json["records"] as? [[String: Any]])?.first)
        }
        func fields(_ record: [String: Any]) -> [String: String] {
            ((record["fields"] as? [String: Any]) ?? [:]).compactMapValues {
                ($0 as? [String: Any])?["value"] as? String
            }
        }
        let created = try await modify([
            create("n", fields: ["title": ["value": "t"], "body": ["value": "b"], "color": ["value": "red"]])
        ])
        // "Only the fields you specify are changed"; a null value clears one.
        let updated = try await modify([
            [
                "operationType": "update",
                "record": [
                    "recordName": "n", "recordType": "Note", "recordChangeTag": created["recordChangeTag"] ?? "",
                    "fields": ["title": ["value": "u"], "body": ["value": NSNull()]],
                ],
            ]
        ])
        #expect(fields(updated) == ["title": "u", "color": "red"])
        // "Fields whose values you do not specify are set to null."
        let replaced = try await modify([
            [
                "operationType": "replace",
                "record": [
                    "recordName": "n", "recordType": "Note", "recordChangeTag": updated["recordChangeTag"] ?? "",
                    "fields": ["title": ["value": "v"]],
                ],
            ]
        ])
        #expect(fields(replaced) == ["title": "v"])
    }

    @Test func everyComparatorFiltersAsDocumented() async throws {
        let http = handler()
        var token = await http.signIn(user: "alice")
        let paris = ["latitude": 48.8566, "longitude": 2.3522]
        let records = [
            create(
                "a",
                fields: [
                    "title": ["value": "Moby-Dick", "type": "STRING"],
                    "tags": ["value": ["sea", "whale"], "type": "STRING_LIST"],
                    "pages": ["value": 635, "type": "INT64"], "place": ["value": paris, "type": "LOCATION"],
                ]),
            create(
                "b",
                fields: [
                    "title": ["value": "Mobile Homes", "type": "STRING"],
                    "tags": ["value": ["house"], "type": "STRING_LIST"], "pages": ["value": 120, "type": "INT64"],
                    "place": ["value": ["latitude": 51.5074, "longitude": -0.1278], "type": "LOCATION"],
                ]),
            create(
                "c",
                fields: [
                    "title": ["value": "Walden", "type": "STRING"],
                    "tags": ["value": ["pond", "sea"], "type": "STRING_LIST"],
                    "pages": ["value": 352, "type": "INT64"],
                ]),
        ]
        let saved = try await http.database("private", "records/modify", token: token, json: ["operations": records])
        token = try #require(saved.header("X-Apple-CloudKit-Web-Auth-Token"))
        func names(_ filter: [String: Any], sort: [[String: Any]] = [["fieldName": "___recordID"]]) async throws
            -> [String]
        {
            let answer = try await http.database(
                "private", "records/query", token: token,
                json: ["query": ["recordType": "Note", "filterBy": [filter], "sortBy": sort]])
            token = answer.header("X-Apple-CloudKit-Web-Auth-Token") ?? token
            #expect(answer.status == 200, "\(filter): \(answer.json)")
            return (answer.json["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
        }
        func string(_ value: Any, _ type: String = "STRING") -> [String: Any] { ["value": value, "type": type] }
        #expect(
            try await names(["comparator": "BEGINS_WITH", "fieldName": "title", "fieldValue": string("Mob")]) == [
                "a", "b",
            ])
        #expect(
            try await names(["comparator": "NOT_BEGINS_WITH", "fieldName": "title", "fieldValue": string("Mob")]) == [
                "c"
            ])
        #expect(
            try await names(["comparator": "IN", "fieldName": "pages", "fieldValue": string([120, 352], "INT64_LIST")])
                == ["b", "c"])
        #expect(
            try await names([
                "comparator": "NOT_IN", "fieldName": "pages", "fieldValue": string([120, 352], "INT64_LIST"),
            ]) == ["a"])
        #expect(
            try await names(["comparator": "LIST_CONTAINS", "fieldName": "tags", "fieldValue": string("sea")]) == [
                "a", "c",
            ])
        #expect(
            try await names([
                "comparator": "LIST_CONTAINS_ALL", "fieldName": "tags",
                "fieldValue": string(["sea", "pond"], "STRING_LIST"),
            ]) == ["c"])
        #expect(
            try await names([
                "comparator": "LIST_CONTAINS_ANY", "fieldName": "tags",
                "fieldValue": string(["house", "pond"], "STRING_LIST"),
            ]) == ["b", "c"])
        #expect(
            try await names(["comparator": "LIST_MEMBER_BEGINS_WITH", "fieldName": "tags", "fieldValue": string("wh")])
                == ["a"])
        #expect(
            try await names(["comparator": "GREATER_THAN", "fieldName": "pages", "fieldValue": string(352, "INT64")])
                == ["a"])
        #expect(
            try await names([
                "comparator": "CONTAINS_ANY_TOKENS", "fieldName": "title", "fieldValue": string("walden homes"),
            ]) == ["b", "c"])
        // Paris to London is 344 km.
        let near =
            ["comparator": "NEAR", "fieldName": "place", "fieldValue": string(paris, "LOCATION")] as [String: Any]
        #expect(try await names(near.merging(["distance": 1000]) { $1 }) == ["a"])
        #expect(
            try await names(
                near.merging(["distance": 400_000]) { $1 },
                sort: [
                    [
                        "fieldName": "place",
                        "relativeLocation": string(["latitude": 51.5, "longitude": -0.12], "LOCATION"),
                    ]
                ]) == ["b", "a"])
        #expect(
            try await names(["comparator": "EQUALS", "systemFieldName": "recordName", "fieldValue": string("b")]) == [
                "b"
            ])
    }

    @Test func aContinuationMarkerContinuesAfterItsRecordWhileRecordsChange() async throws {
        let http = handler()
        var token = await http.signIn(user: "alice")
        let operations = ["b", "d", "f", "h"].map { create($0, fields: ["n": ["value": $0, "type": "STRING"]]) }
        token = try #require(
            try await http.database("private", "records/modify", token: token, json: ["operations": operations]).header(
                "X-Apple-CloudKit-Web-Auth-Token"))
        let query: [String: Any] = ["recordType": "Note", "sortBy": [["fieldName": "n"]]]
        let first = try await http.database(
            "private", "records/query", token: token, json: ["query": query, "resultsLimit": 2])
        token = try #require(first.header("X-Apple-CloudKit-Web-Auth-Token"))
        #expect((first.json["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String } == ["b", "d"])
        let marker = try #require(first.json["continuationMarker"] as? String)
        // A record sorted before the marker and one after it: the next page sees only the later one.
        let more = ["a", "e"].map { create($0, fields: ["n": ["value": $0, "type": "STRING"]]) }
        token = try #require(
            try await http.database("private", "records/modify", token: token, json: ["operations": more]).header(
                "X-Apple-CloudKit-Web-Auth-Token"))
        let second = try await http.database(
            "private", "records/query", token: token,
            json: ["query": query, "resultsLimit": 2, "continuationMarker": marker])
        #expect((second.json["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String } == ["e", "f"])
        #expect(second.json["continuationMarker"] != nil)
    }

    @Test func productionKeepsToTheImportedSchemaWithCloudKitsReasons() async throws {
        let http = handler(EmulatorConfiguration(environment: .production))
        try await http.importSchema(
            """
            DEFINE SCHEMA
                RECORD TYPE Note (
                    "___recordID" REFERENCE QUERYABLE,
                    title STRING QUERYABLE SORTABLE,
                    body STRING,
                    GRANT READ TO "_world"
                );
            """)
        var token = await http.signIn(user: "alice")
        func modify(_ operations: [[String: Any]]) async throws -> EmulatorRouterHarness.Answer {
            let path =
                "/database/1/\(http.container)/production/private/records/modify?ckAPIToken=t&ckWebAuthToken=\(token)"
            let answer = try await http.send("POST", path, json: ["operations": operations])
            token = answer.header("X-Apple-CloudKit-Web-Auth-Token") ?? token
            return answer
        }
        let newType = try await modify([create("x", "Book", fields: [:])])
        #expect(
            (newType.json["records"] as? [[String: Any]])?.first?["reason"] as? String
                == "Cannot create new type Book in production schema")
        let known = try await modify([create("n", fields: ["title": ["value": "t", "type": "STRING"]])])
        #expect((known.json["records"] as? [[String: Any]])?.first?["recordChangeTag"] != nil)
        let path = "/database/1/\(http.container)/production/private/records/query?ckAPIToken=t&ckWebAuthToken=\(token)"
        let unsortable = try await http.send(
            "POST", path, json: ["query": ["recordType": "Note", "sortBy": [["fieldName": "body"]]]])
        #expect(unsortable.json["reason"] as? String == "Field 'body' is not marked sortable")
        #expect(
            try await http.send("GET", "/database/1/\(http.container)/development/public/zones/list?ckAPIToken=t")
                .status == 400)
    }

    @Test func aFaultThrottlesTheMatchingRequestOnce() async throws {
        let http = handler()
        let fault = try await http.send(
            "POST", "/emulator/v1/faults",
            json: ["path": "zones/list", "serverErrorCode": "THROTTLED", "retryAfter": 3, "remaining": 1])
        #expect(fault.json["id"] as? String == "fault-1")
        let throttled = try await http.send(
            "GET", "/database/1/\(http.container)/development/public/zones/list?ckAPIToken=t")
        #expect(throttled.status == 429)
        #expect(throttled.json["retryAfter"] as? Double == 3)
        #expect(
            try await http.send("GET", "/database/1/\(http.container)/development/public/zones/list?ckAPIToken=t")
                .status == 200)
        let log = try await http.send("GET", "/emulator/v1/requests")
        #expect(
            (log.json["requests"] as? [[String: Any]])?.compactMap { $0["status"] as? Int }.suffix(2) == [429, 200])
    }

    @Test func aZoneSubscriptionPushesThroughTheNotificationURL() async throws {
        let http = try await start(EmulatorConfiguration(notificationPollTimeout: .seconds(30)))
        var token = await http.emulator.signIn(user: "alice")
        func call(_ endpoint: String, _ json: [String: Any]) async throws -> EmulatorHTTP.Answer {
            let answer = try await http.database("private", endpoint, token: token, json: json)
            token = answer.header("X-Apple-CloudKit-Web-Auth-Token") ?? token
            return answer
        }
        let zone = ["zoneName": "Notes"]
        _ = try await call("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        _ = try await call(
            "subscriptions/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "subscription": ["subscriptionID": "notes", "subscriptionType": "zone", "zoneID": zone],
                    ]
                ]
            ])
        let courier = try #require(
            try await call("tokens/create", ["apnsEnvironment": "development"]).json["webcourierURL"] as? String)
        let path = String(courier.dropFirst(http.emulator.url.absoluteString.count))
        async let push = http.send("GET", path)
        _ = try await call("records/modify", ["zoneID": zone, "operations": [create("n", fields: [:])]])
        let payload = try await push.json
        let fetch = (payload["ck"] as? [String: Any])?["fet"] as? [String: Any]
        #expect(fetch?["sid"] as? String == "notes")
        #expect(fetch?["zid"] as? String == "Notes")
        #expect(fetch?["dbs"] as? Int == 2)

        // A deletion fires it too, though nothing read the record first.
        async let second = http.send("GET", path)
        let delete: [String: Any] = ["operationType": "forceDelete", "record": ["recordName": "n"]]
        _ = try await call("records/modify", ["zoneID": zone, "operations": [delete]])
        let deleted = (try await second.json["ck"] as? [String: Any])?["fet"] as? [String: Any]
        #expect(deleted?["sid"] as? String == "notes")
    }

    @Test func fidelityMarkdownIsWhatTheEmulatorReports() async throws {
        let http = handler()
        let served = try await http.send("GET", "/emulator/v1/fidelity")
        let entries = try #require(served.json["entries"] as? [[String: Any]])
        #expect(entries.count == Fidelity.entries.count)
        #expect(entries.compactMap { $0["item"] as? String } == Fidelity.entries.map(\.item))
        // Tests/NestedCloudKitEmulatorTests/EmulatorWireTests.swift, three folders below the package's root.
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("FIDELITY.md")
        let committed = try String(contentsOf: file, encoding: .utf8)
        #expect(
            committed == FidelityDocument.markdown,
            "FIDELITY.md is stale: swift run cloudkit-emulator --print-fidelity > FIDELITY.md")
    }
}
