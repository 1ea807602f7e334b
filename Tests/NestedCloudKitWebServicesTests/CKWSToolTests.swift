import CloudKitTestServer
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

@testable import NestedCloudKitWebServices

/// The `ckws` command run as a user runs it, against the loopback server.
@Suite struct CKWSToolTests {
    typealias Harness = WebServicesHarness

    static func ckwsURL() throws -> URL {
        try toolURL("ckws")
    }

    /// The executable of one of the package's tools, built beside the tests.
    static func toolURL(_ name: String) throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map { $0.appendingPathComponent(name) }
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "\(name) isn't built beside \(directory.path)")
    }

    /// Runs ckws with the test key in the environment; returns its exit status, standard output and error.
    static func run(_ arguments: [String], server: LoopbackCloudKitServer) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await run(arguments, serverURL: server.url)
    }

    /// Runs ckws against `serverURL` with the test key in the environment.
    static func run(_ arguments: [String], serverURL: URL) async throws -> (
        status: Int32, output: String, error: String
    ) {
        // Generous timeouts: the suite's heaviest tests can keep both cores and the loopback server busy for seconds,
        // and a test about timing sets its own bound, far below these.
        let result = try await ChildProcess.run(
            try ckwsURL(),
            arguments: arguments + [
                "--server-url", serverURL.absoluteString, "--connect-timeout", "120", "--timeout", "300",
            ],
            environment: [
                "CLOUDKIT_CONTAINER": Harness.container, "CLOUDKIT_KEY_ID": TestKeys.keyID,
                "CLOUDKIT_PRIVATE_KEY": TestKeys.privateKeyPEM,
            ])
        return (result.termination.exitStatus ?? -1, result.output, result.error)
    }

    static let handler: LoopbackCloudKitServer.Handler = { request in
        guard request.isSignedWithTestKey else { return .serverError(401, "AUTHENTICATION_FAILED") }
        switch request.endpoint {
        case "zones/list":
            return .json(["zones": [["zoneID": ["zoneName": "_defaultZone", "ownerRecordName": "_7c3f2a9d"]]]])
        case "records/lookup":
            return .json([
                "records": [
                    Harness.serverRecord(
                        "ada",
                        fields: [
                            "name": ["value": "Ada", "type": "STRING"],
                            "school": ["value": ["recordName": "s1", "action": "DELETE_SELF"], "type": "REFERENCE"],
                        ]),
                    ["recordName": "ghost", "serverErrorCode": "NOT_FOUND", "reason": "Record not found"],
                ]
            ])
        default:
            return .json(["records": [Harness.serverRecord("bob", fields: ["grade": ["value": 3, "type": "INT64"]])]])
        }
    }

    @Test func zonesLookupsAndQueriesPrintAsTrees() async throws {
        try await LoopbackCloudKitServer.with(Self.handler) { server in
            let zones = try await Self.run(["zones"], server: server)
            #expect(zones.status == 0)
            #expect(zones.output == "_defaultZone\n")

            let lookup = try await Self.run(["lookup", "ada", "ghost"], server: server)
            #expect(lookup.status == 1)
            #expect(
                lookup.output == """
                    Student "ada"  (change tag tag-1)
                    ├─ name: "Ada"
                    └─ school → "s1" (not loaded)  [DELETE_SELF]

                    """)
            #expect(lookup.error == "ghost: The record ghost doesn't exist\n")

            let query = try await Self.run(
                ["query", "Student", "--filter", "grade=3", "--sort", "name", "--limit", "5"], server: server)
            #expect(query.status == 0)
            #expect(query.output == "Student \"bob\"  (change tag tag-1)\n└─ grade: 3\n")
            let body = try #require(server.requests.last).json()
            let filter = try #require(((body["query"] as? [String: Any])?["filterBy"] as? [[String: Any]])?.first)
            #expect((filter["fieldValue"] as? [String: Any])?["type"] as? String == "INT64")
            #expect(body["resultsLimit"] as? Int == 5)
        }
    }

    @Test func recordsPrintAsWebServicesJSON() async throws {
        try await LoopbackCloudKitServer.with(Self.handler) { server in
            let result = try await Self.run(["query", "Student", "--json"], server: server)
            #expect(result.status == 0)
            let records = try CloudKitWebServicesJSON.records(from: Data(result.output.utf8))
            #expect(records.map(\.id.recordName) == ["bob"])
            #expect(records.first?.fields["grade"] == .int64(3))
            #expect(records.first?.systemFields?.changeTag == "tag-1")
        }
    }

    @Test func theWebAuthTokenFileIsRewrittenWithEachNewToken() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        try "web-1\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        try await LoopbackCloudKitServer.with({ request in
            guard request.query["ckWebAuthToken"] == "web-1" else { return .serverError(401, "AUTHENTICATION_FAILED") }
            return .json(
                ["zones": [["zoneID": ["zoneName": "Schools"]]]], headers: ["X-Apple-CloudKit-Web-Auth-Token": "web-2"])
        }) { server in
            let result = try await Self.run(
                ["zones", "--database", "private", "--api-token", "api", "--web-auth-token-file", tokenFile.path],
                server: server
            )
            #expect(result.status == 0)
            #expect(result.output == "Schools\n")
            #expect(try String(contentsOf: tokenFile, encoding: .utf8) == "web-2")
            #expect(!result.output.contains("web-") && !result.error.contains("web-"))
        }
    }

    @Test func missingCredentialsAreExplained() async throws {
        try await LoopbackCloudKitServer.with(Self.handler) { server in
            let result = try await ChildProcess.run(
                try Self.ckwsURL(),
                arguments: ["zones", "--container", "iCloud.a", "--server-url", server.url.absoluteString],
                environment: [:])
            #expect(result.termination != .exited(0))
            #expect(
                result.error.contains(
                    "Give a server-to-server key (--key-id and --key-file) or an API token (--api-token)."))
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: Failing clearly

    @Test func aClosedPortFailsAtOnceWithAClearMessage() async throws {
        let url = try await WebServicesReliabilityTests.closedServerURL()
        let started = ContinuousClock.now
        let result = try await Self.run(["zones"], serverURL: url)
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(
            result.error == """
                Error: The network request failed: zones/list: 127.0.0.1:\(url.port ?? 0) refused the connection: check the \
                server URL, and that the server is running

                """)
        // A bound, not a measurement: the request timeout is five minutes, and a refused connection must not wait
        // for it. Generous, so a loaded machine can't fail it.
        #expect(ContinuousClock.now - started < .seconds(90))
    }

    @Test func aUserWhoMustSignInIsToldWhere() async throws {
        try await LoopbackCloudKitServer.with({ _ in
            .json(
                [
                    "serverErrorCode": "AUTHENTICATION_REQUIRED", "reason": "request needs authorization",
                    "redirectURL": "https://idmsa.apple.com/IDMSWebAuth/signin?token=abc",
                ], status: 421)
        }) { server in
            let result = try await Self.run(
                ["zones", "--database", "private", "--api-token", "api", "--web-auth-token", "old"], server: server)
            #expect(result.status == 1)
            #expect(
                result.error == """
                    Error: CloudKit needs a signed-in user. Sign in at https://idmsa.apple.com/IDMSWebAuth/signin?token=abc \
                    and run ckws again with the web auth token the sign-in gives (--web-auth-token, or --web-auth-token-file).

                    """)
        }
    }

    @Test func aNewTokenThatCantBeStoredIsNotLost() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        // The folder doesn't exist, so the file can't be written, even by root.
        let tokenFile = directory.appendingPathComponent("missing").appendingPathComponent("token")
        try await LoopbackCloudKitServer.with({ _ in
            .json(
                ["zones": [["zoneID": ["zoneName": "Schools"]]]], headers: ["X-Apple-CloudKit-Web-Auth-Token": "web-2"])
        }) { server in
            let result = try await Self.run(
                [
                    "zones", "--database", "private", "--api-token", "api", "--web-auth-token", "web-1",
                    "--web-auth-token-file", tokenFile.path,
                ],
                server: server
            )
            #expect(result.status == 1)
            // The zones were read, and are printed; then the failure that would end the session.
            #expect(result.output == "Schools\n")
            #expect(result.error.hasPrefix("Error: The new web auth token couldn't be written to \(tokenFile.path) ("))
            #expect(
                result.error.hasSuffix(
                    "), and CloudKit no longer accepts the old one. Store this one yourself to keep the session:\nweb-2\n"
                ))
        }
    }

    // MARK: Filters

    /// Answers queries with records whose `zip` is a string and `grade` an integer, or with none when
    /// `hasRecords` is false.
    static func schemaHandler(hasRecords: Bool) -> LoopbackCloudKitServer.Handler {
        { _ in
            .json([
                "records": hasRecords
                    ? [
                        Harness.serverRecord(
                            "bob",
                            fields: [
                                "zip": ["value": "02134", "type": "STRING"], "grade": ["value": 3, "type": "INT64"],
                            ])
                    ] : []
            ])
        }
    }

    /// The filters of the last query the server received.
    static func filters(_ server: LoopbackCloudKitServer) throws -> [[String: Any]] {
        let body = try #require(server.requests.last).json()
        return (body["query"] as? [String: Any])?["filterBy"] as? [[String: Any]] ?? []
    }

    @Test func aFilterValueTakesTheFieldsTypeAndKeepsItsLeadingZero() async throws {
        try await LoopbackCloudKitServer.with(Self.schemaHandler(hasRecords: true)) { server in
            let result = try await Self.run(
                ["query", "Student", "--filter", "zip=02134", "--filter", "grade=3"], server: server)
            #expect(result.status == 0)
            // One small query reads the fields' types, then the query itself.
            #expect(server.requests.count == 2)
            let probe = try server.requests[0].json()
            #expect(probe["desiredKeys"] as? [String] == ["zip", "grade"])
            let values = try Self.filters(server).map { $0["fieldValue"] as? [String: Any] ?? [:] }
            #expect(values.map { $0["type"] as? String } == ["STRING", "INT64"])
            #expect(values.first?["value"] as? String == "02134")
            #expect(values.last?["value"] as? Int == 3)
        }
    }

    @Test func aFilterOnAFieldNoRecordHasIsAString() async throws {
        try await LoopbackCloudKitServer.with(Self.schemaHandler(hasRecords: false)) { server in
            let result = try await Self.run(["query", "Student", "--filter", "zip=02134"], server: server)
            #expect(result.status == 0)
            let value = try #require(Self.filters(server).first?["fieldValue"] as? [String: Any])
            #expect(value["type"] as? String == "STRING")
            #expect(value["value"] as? String == "02134")
        }
    }

    @Test func aFilterWithATypeSendsThatTypeWithoutAskingFirst() async throws {
        try await LoopbackCloudKitServer.with(Self.schemaHandler(hasRecords: true)) { server in
            let result = try await Self.run(
                [
                    "query", "Student", "--filter", "zip:int64=02134", "--filter",
                    "since:TIMESTAMP=2016-01-25T22:15:43Z",
                ], server: server
            )
            #expect(result.status == 0)
            #expect(server.requests.count == 1)
            let values = try Self.filters(server).map { $0["fieldValue"] as? [String: Any] ?? [:] }
            #expect(values.map { $0["type"] as? String } == ["INT64", "TIMESTAMP"])
            #expect(values.first?["value"] as? Int == 2134)
            #expect(values.last?["value"] as? Int == 1_453_760_143_000)
        }
    }

    @Test func aFilterValueThatCantHaveItsTypeFailsBeforeAnyRequest() async throws {
        try await LoopbackCloudKitServer.with(Self.schemaHandler(hasRecords: true)) { server in
            let wrongValue = try await Self.run(["query", "Student", "--filter", "grade:INT64=three"], server: server)
            #expect(wrongValue.status != 0)
            #expect(
                wrongValue.error.contains("--filter grade=three: the field is INT64, so the value must be an integer."))
            let wrongType = try await Self.run(["query", "Student", "--filter", "grade:NUMBER=3"], server: server)
            #expect(wrongType.status != 0)
            #expect(
                wrongType.error.contains(
                    "--filter grade:NUMBER=3: the type must be one of STRING, INT64, DOUBLE, TIMESTAMP."))
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: JSON

    @Test func jsonHoldsWhatTheServerSentAndNothingMore() async throws {
        try await LoopbackCloudKitServer.with({ _ in
            .json([
                "records": [
                    [
                        "recordName": "springfield", "recordType": "School", "recordChangeTag": "tag-1",
                        "fields": [
                            "place": ["value": ["latitude": 44.05, "longitude": -123.09], "type": "LOCATION"],
                            "gate": [
                                "value": [
                                    "latitude": 44.06, "longitude": -123.1, "horizontalAccuracy": 5,
                                    "verticalAccuracy": 3,
                                    "altitude": 120, "course": 90, "speed": 1.5, "timestamp": 1_453_760_143_000,
                                ], "type": "LOCATION",
                            ],
                        ],
                    ]
                ]
            ])
        }) { server in
            let result = try await Self.run(["lookup", "springfield", "--json"], server: server)
            #expect(result.status == 0)
            let document = try #require(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            let record = try #require((document["records"] as? [[String: Any]])?.first)
            #expect(record["created"] == nil)
            #expect(record["modified"] == nil)
            let fields = try #require(record["fields"] as? [String: [String: Any]])
            let place = try #require(fields["place"]?["value"] as? [String: Double])
            #expect(place == ["latitude": 44.05, "longitude": -123.09])
            let gate = try #require(fields["gate"]?["value"] as? [String: Double])
            #expect(
                gate == [
                    "latitude": 44.06, "longitude": -123.1, "horizontalAccuracy": 5, "verticalAccuracy": 3,
                    "altitude": 120,
                    "course": 90, "speed": 1.5, "timestamp": 1_453_760_143_000,
                ])
        }
    }

    @Test func jsonKeepsTheAltitudeOfASeaLevelLocationAloneAndInAList() async throws {
        // At sea level, measured: altitude 0 with a vertical accuracy. Without a vertical accuracy, 0 is what a
        // missing altitude reads as, and stays out.
        try await LoopbackCloudKitServer.with({ _ in
            let seaLevel: [String: Any] = ["latitude": 43.3, "longitude": 5.37, "altitude": 0, "verticalAccuracy": 4]
            let unmeasured: [String: Any] = ["latitude": 43.3, "longitude": 5.37]
            return .json([
                "records": [
                    [
                        "recordName": "harbour", "recordType": "Place", "recordChangeTag": "tag-1",
                        "fields": [
                            "quay": ["value": seaLevel, "type": "LOCATION"],
                            "buoys": ["value": [seaLevel, unmeasured], "type": "LOCATION_LIST"],
                        ],
                    ]
                ]
            ])
        }) { server in
            let result = try await Self.run(["lookup", "harbour", "--json"], server: server)
            #expect(result.status == 0)
            let document = try #require(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            let record = try #require((document["records"] as? [[String: Any]])?.first)
            let fields = try #require(record["fields"] as? [String: [String: Any]])
            let expected: [String: Double] = [
                "latitude": 43.3, "longitude": 5.37, "altitude": 0, "verticalAccuracy": 4,
            ]
            #expect(fields["quay"]?["value"] as? [String: Double] == expected)
            let buoys = try #require(fields["buoys"]?["value"] as? [[String: Double]])
            #expect(buoys == [expected, ["latitude": 43.3, "longitude": 5.37]])
        }
    }
}
