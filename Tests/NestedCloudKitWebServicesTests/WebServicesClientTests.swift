import CloudKitTestServer
import Foundation
import Logging
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

/// The client against a loopback server that answers as CloudKit Web Services' documentation says.
@Suite struct WebServicesClientTests {
    typealias Harness = WebServicesHarness

    static let schools = CloudRecord.ZoneID(zoneName: "Schools")

    static func student(_ name: String, zone: CloudRecord.ZoneID = .default) -> CloudRecord {
        CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: name, zoneID: zone), fields: ["name": .string(name)])
    }

    /// The operations a modify request's body holds.
    static func operations(_ request: ReceivedRequest) throws -> [[String: Any]] {
        try request.json()["operations"] as? [[String: Any]] ?? []
    }

    static func recordNames(_ request: ReceivedRequest, key: String = "records") throws -> [String] {
        let items = try request.json()[key] as? [[String: Any]] ?? []
        return items.compactMap {
            ($0["recordName"] as? String) ?? (($0["record"] as? [String: Any])?["recordName"] as? String)
        }
    }

    @Test func lookupsAreSignedAndMapRecordsAndMissingOnes() async throws {
        try await Harness.with(handler: { request in
            guard request.isSignedWithTestKey else { return .serverError(401, "AUTHENTICATION_FAILED") }
            return .json([
                "records": [
                    Harness.serverRecord(
                        "ada",
                        fields: [
                            "name": ["value": "Ada", "type": "STRING"],
                            "school": [
                                "value": [
                                    "recordName": "s1",
                                    "zoneID": ["zoneName": "_defaultZone", "ownerRecordName": "_7c3f2a9d"],
                                    "action": "DELETE_SELF",
                                ], "type": "REFERENCE",
                            ],
                        ]),
                    ["recordName": "ghost", "serverErrorCode": "NOT_FOUND", "reason": "Record not found"],
                ]
            ])
        }) { database, server in
            let ada = CloudRecord.ID(recordName: "ada")
            let ghost = CloudRecord.ID(recordName: "ghost")
            let results = try await database.records(for: [ada, ghost])

            let record = try #require(try results[ada]?.get())
            #expect(record.id == ada)
            #expect(record.fields["name"] == .string("Ada"))
            #expect(
                record.fields["school"]
                    == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "s1"), action: .deleteSelf)))
            #expect(record.systemFields?.changeTag == "tag-1")
            #expect(results[ghost]?.failureOrNil == .unknownItem(ghost))

            let request = try #require(server.requests.first)
            #expect(server.requests.count == 1)
            #expect(request.method == "POST")
            #expect(request.path == Harness.path("records/lookup"))
            #expect(request.isSignedWithTestKey)
            #expect(try request.json()["zoneID"] as? [String: String] == ["zoneName": "_defaultZone"])
            #expect(try Self.recordNames(request) == ["ada", "ghost"])
        }
    }

    @Test func recordsOfSeveralZonesAreLookedUpOneRequestPerZone() async throws {
        try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "web-0"),
            handler: { request in
                let zone = (try? request.json()["zoneID"] as? [String: String])?["zoneName"] ?? ""
                let names = (try? Self.recordNames(request)) ?? []
                return .json(["records": names.map { Harness.serverRecord($0, zone: zone) }])
            }
        ) { database, server in
            let ids = [
                CloudRecord.ID(recordName: "a"), CloudRecord.ID(recordName: "b", zoneID: Self.schools),
                CloudRecord.ID(recordName: "c"),
            ]
            let results = try await database.records(for: ids)
            for id in ids { #expect(try results[id]?.get().id == id) }
            #expect(server.requests.count == 2)
        }
    }

    @Test func aStaleSaveReportsTheServersRecord() async throws {
        try await Harness.with(handler: { request in
            switch request.endpoint {
            case "records/modify":
                .json([
                    "records": [
                        [
                            "recordName": "ada", "serverErrorCode": "CONFLICT",
                            "reason": "record to insert already exists",
                        ]
                    ]
                ])
            default:
                .json([
                    "records": [
                        Harness.serverRecord(
                            "ada", tag: "tag-7", fields: ["name": ["value": "Ada L.", "type": "STRING"]])
                    ]
                ])
            }
        }) { database, loopback in
            var client = Self.student("ada")
            client.systemFields = CloudRecord.SystemFields(changeTag: "tag-1")
            let results = try await database.modifyRecords(
                saving: [client], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
            guard
                case .serverRecordChanged(let serverRecord, let sent, let ancestor)? = results.saveResults[client.id]?
                    .failureKind
            else {
                Issue.record("expected a conflict, got \(String(describing: results.saveResults[client.id]))")
                return
            }
            #expect(serverRecord.systemFields?.changeTag == "tag-7")
            #expect(serverRecord.fields["name"] == .string("Ada L."))
            #expect(sent == client)
            #expect(ancestor == nil)
            #expect(serverRecord.id == client.id)

            let modify = try #require(loopback.requests.first)
            let operation = try #require(try Self.operations(modify).first)
            #expect(operation["operationType"] as? String == "update")
            #expect((operation["record"] as? [String: Any])?["recordChangeTag"] as? String == "tag-1")
            #expect(loopback.requests.map(\.endpoint) == ["records/modify", "records/lookup"])
        }
    }

    @Test func aPartialFailureFailsOnlyItsRecords() async throws {
        try await Harness.with(handler: { _ in
            .json([
                "records": [
                    Harness.serverRecord("a"),
                    ["recordName": "b", "serverErrorCode": "VALIDATING_REFERENCE_ERROR", "reason": "target missing"],
                    ["recordName": "gone", "deleted": true],
                ]
            ])
        }) { database, server in
            let results = try await database.modifyRecords(
                saving: [Self.student("a"), Self.student("b")], deleting: [CloudRecord.ID(recordName: "gone")],
                savePolicy: .ifServerRecordUnchanged, atomically: true
            )
            #expect(try results.saveResults[CloudRecord.ID(recordName: "a")]?.get().systemFields?.changeTag == "tag-1")
            #expect(
                results.saveResults[CloudRecord.ID(recordName: "b")]?.failureOrNil
                    == .referenceViolation(
                        CloudRecord.ID(recordName: "b"), reason: "target missing (VALIDATING_REFERENCE_ERROR)"))
            #expect(results.deleteResults[CloudRecord.ID(recordName: "gone")].map { (try? $0.get()) != nil } == true)

            let request = try #require(server.requests.first)
            #expect(
                try Self.operations(request).map { $0["operationType"] as? String } == ["create", "create", "delete"])
            // The default zone has no atomic changes; the request says so.
            #expect(try request.json()["atomic"] as? Bool == false)
        }
    }

    @Test func throttlingIsRetriedAfterRetryAfter() async throws {
        let calls = NIOLockedValueBox(0)
        try await Harness.with(handler: { _ in
            let call = calls.withLockedValue {
                $0 += 1; return $0
            }
            return call == 1
                ? .serverError(429, "THROTTLED", retryAfter: 0.05) : .json(["records": [Harness.serverRecord("ada")]])
        }) { database, server in
            let started = ContinuousClock.now
            let record = try await database.record(for: CloudRecord.ID(recordName: "ada"))
            #expect(record.id.recordName == "ada")
            #expect(server.requests.count == 2)
            #expect(ContinuousClock.now - started >= .milliseconds(50))
            #expect(server.requests.allSatisfy { $0.isSignedWithTestKey })
        }
    }

    @Test func throttlingThatOutlastsTheRetriesIsThrown() async throws {
        try await Harness.with(handler: { _ in .serverError(503, "TRY_AGAIN_LATER", retryAfter: 0.01) }) {
            database, server in
            await #expect(throws: CloudDatabaseError.serviceUnavailable(retryAfter: 0.01)) {
                _ = try await database.records(for: [CloudRecord.ID(recordName: "ada")])
            }
            #expect(server.requests.count == Harness.quickRetries.maximumAttempts)
        }
    }

    @Test func anErrorWithoutRetryAfterIsNotRetried() async throws {
        try await Harness.with(handler: { _ in .serverError(429, "THROTTLED") }) { database, server in
            await #expect(throws: CloudDatabaseError.requestRateLimited(retryAfter: 0)) {
                _ = try await database.records(for: [CloudRecord.ID(recordName: "ada")])
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func waitingToRetryIsCancellable() async throws {
        let patient = CloudKitWebServicesRetryPolicy(
            maximumAttempts: 3, initialBackoff: .milliseconds(1), maximumDelay: .seconds(120))
        try await Harness.with(retryPolicy: patient, handler: { _ in .serverError(429, "THROTTLED", retryAfter: 50) }) {
            database, server in
            let task = Task { try await database.records(for: [CloudRecord.ID(recordName: "ada")]) }
            while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            // Cancel once the client is waiting out the server's 50 seconds.
            try await Task.sleep(for: .milliseconds(200))
            let cancelled = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            // A bound far below the 50 seconds, so a loaded machine can't fail it.
            #expect(ContinuousClock.now - cancelled < .seconds(25))
            #expect(server.requests.count == 1)
        }
    }

    @Test func batchesSplitAt200Operations() async throws {
        try await Harness.with(handler: { request in
            let names =
                (try? Self.recordNames(request, key: request.endpoint == "records/modify" ? "operations" : "records"))
                ?? []
            return .json(["records": names.map { Harness.serverRecord($0) }])
        }) { database, server in
            let records = (0..<450).map { Self.student("s\($0)") }
            let saved = try await database.saveRecords(records)
            #expect(saved.map(\.id) == records.map(\.id))
            #expect(try server.requests.map { try Self.operations($0).count } == [200, 200, 50])

            let fetched = try await database.fetchRecords(records.map(\.id))
            #expect(fetched.count == 450)
            #expect(try server.requests.dropFirst(3).map { try Self.recordNames($0).count }.sorted() == [50, 200, 200])

            await #expect(throws: CloudDatabaseError.limitExceeded(limit: 200, requested: 201)) {
                _ = try await database.modifyRecords(
                    saving: Array(records.prefix(201)), deleting: [], savePolicy: .allKeys, atomically: false)
            }
            #expect(server.requests.count == 6)
        }
    }

    @Test func theWebAuthTokenRotatesWithEachResponseOneRequestAtATime() async throws {
        let inFlight = NIOLockedValueBox((now: 0, most: 0, issued: 0))
        let rotations = NIOLockedValueBox<[String]>([])
        try await Harness.with(
            database: .private, authentication: .apiToken("api-token", webAuthToken: "web-0"),
            webAuthTokenRotated: { token in rotations.withLockedValue { $0.append(token) } },
            handler: { request in
                let expected = inFlight.withLockedValue { state -> String in
                    state.now += 1
                    state.most = max(state.most, state.now)
                    return "web-\(state.issued)"
                }
                try? await Task.sleep(for: .milliseconds(10))
                let next = inFlight.withLockedValue { state -> String in
                    state.now -= 1
                    state.issued += 1
                    return "web-\(state.issued)"
                }
                guard request.query["ckWebAuthToken"] == expected, request.query["ckAPIToken"] == "api-token" else {
                    return .serverError(401, "AUTHENTICATION_FAILED")
                }
                return .json(
                    ["records": [Harness.serverRecord("ada")]], headers: ["X-Apple-CloudKit-Web-Auth-Token": next])
            }
        ) { database, server in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {
                    group.addTask { _ = try await database.record(for: CloudRecord.ID(recordName: "ada")) }
                }
                try await group.waitForAll()
            }
            #expect(inFlight.withLockedValue { $0.most } == 1)
            #expect(rotations.withLockedValue { $0 } == ["web-1", "web-2", "web-3", "web-4", "web-5"])
            #expect(await database.webAuthToken == "web-5")
            #expect(server.requests.allSatisfy { $0.path == Harness.path("records/lookup", database: "private") })
            #expect(
                server.requests.allSatisfy {
                    !$0.isSignedWithTestKey && $0.headers["X-Apple-CloudKit-Request-SignatureV1"] == nil
                })
        }
    }

    @Test func secretsNeverReachTheLogs() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        let calls = NIOLockedValueBox(0)
        try await Harness.with(
            database: .private, authentication: .apiToken("api-secret", webAuthToken: "web-secret-0"), logger: logger,
            handler: { _ in
                let call = calls.withLockedValue {
                    $0 += 1; return $0
                }
                let headers = ["X-Apple-CloudKit-Web-Auth-Token": "web-secret-\(call)"]
                return call == 1
                    ? LoopbackResponse(
                        status: 429, headers: headers,
                        body: Data(#"{"serverErrorCode":"THROTTLED","retryAfter":0.01}"#.utf8))
                    : .json(["records": [Harness.serverRecord("ada")]], headers: headers)
            }
        ) { database, _ in
            _ = try await database.record(for: CloudRecord.ID(recordName: "ada"))
            #expect(await database.webAuthToken == "web-secret-2")
        }
        let logged = lines.withLockedValue { $0 }
        #expect(logged.contains { $0.contains("CloudKit asked to retry") })
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { !$0.contains("secret") })
    }

    @Test func queriesSendFiltersAndContinueFromTheMarker() async throws {
        try await Harness.with(handler: { request in
            let marker = (try? request.json()["continuationMarker"]) as? String
            return marker == nil
                ? .json(["records": [Harness.serverRecord("a")], "continuationMarker": "page-2"])
                : .json(["records": [Harness.serverRecord("b")]])
        }) { database, server in
            let query = CloudQuery(
                recordType: "Student", predicate: .references(CloudRecord.ID(recordName: "s1"), in: "school"))
            let first = try await database.records(
                matching: query, inZoneWith: .default, desiredKeys: ["name"], resultsLimit: CloudQuery.maximumResults)
            #expect(first.matchResults.map(\.0.recordName) == ["a"])
            let cursor = try #require(first.queryCursor)
            #expect(cursor.position == "page-2")
            let second = try await database.records(
                continuingMatchFrom: cursor, desiredKeys: ["name"], resultsLimit: 500)
            #expect(second.matchResults.map(\.0.recordName) == ["b"])
            #expect(second.queryCursor == nil)

            let bodies = try server.requests.map { try $0.json() }
            #expect(bodies.map { $0["resultsLimit"] as? Int } == [200, 200])
            #expect(bodies.map { $0["continuationMarker"] as? String } == [nil, "page-2"])
            #expect(bodies.map { $0["desiredKeys"] as? [String] } == [["name"], ["name"]])
            let filter = try #require(((bodies[0]["query"] as? [String: Any])?["filterBy"] as? [[String: Any]])?.first)
            #expect(filter["comparator"] as? String == "EQUALS")
            #expect(filter["fieldName"] as? String == "school")
        }
    }

    @Test func zonesAreListedAndModified() async throws {
        try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "web"),
            handler: { request in
                switch request.endpoint {
                case "zones/list":
                    return .json([
                        "zones": [
                            ["zoneID": ["zoneName": "_defaultZone", "ownerRecordName": "_7c3f2a9d"]],
                            ["zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"], "atomic": true],
                        ]
                    ])
                default:
                    return .json([
                        "zones": [
                            ["zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"]],
                            [
                                "zoneID": ["zoneName": "Old"], "serverErrorCode": "ZONE_NOT_FOUND",
                                "reason": "no such zone",
                            ],
                        ]
                    ])
                }
            }
        ) { database, server in
            #expect(try await database.allRecordZones() == [.default, Self.schools])
            let old = CloudRecord.ZoneID(zoneName: "Old")
            let results = try await database.modifyRecordZones(saving: [Self.schools, .default], deleting: [old])
            #expect(results.saveResults[Self.schools].map { (try? $0.get()) != nil } == true)
            #expect(
                results.saveResults[.default]?.failureOrNil
                    == .invalidArguments("the default zone can't be created or deleted"))
            #expect(results.deleteResults[old]?.failureOrNil == .zoneNotFound(old))
            #expect(server.requests.map(\.method) == ["GET", "POST"])
            let operations = try Self.operations(try #require(server.requests.last))
            #expect(operations.map { $0["operationType"] as? String } == ["create", "delete"])
        }
    }

    @Test func thePublicDatabaseRefusesCustomZonesWithoutAsking() async throws {
        try await Harness.with(handler: { _ in .json(["zones": []]) }) { database, server in
            let results = try await database.modifyRecordZones(saving: [Self.schools], deleting: [])
            guard case .invalidArguments? = (results.saveResults[Self.schools]?.failureKind) else {
                Issue.record("expected a refusal")
                return
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func assetsAreUploadedInTwoStepsAndSavedWithTheirReceipts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("photo.jpg")
        let contents = Data((0..<(3 * AssetUploader.chunkSize / 2)).map { UInt8(truncatingIfNeeded: $0) })
        try contents.write(to: file)
        let uploadedBytes = NIOLockedValueBox<[Data]>([])

        try await Harness.with(handler: { request in
            switch request.endpoint {
            case "assets/upload":
                let port = request.headers["host"]?.split(separator: ":").last ?? ""
                return .json([
                    "tokens": [
                        ["recordName": "ada", "fieldName": "photo", "url": "http://127.0.0.1:\(port)/upload/1"],
                        ["recordName": "ada", "fieldName": "scans", "url": "http://127.0.0.1:\(port)/upload/2"],
                    ]
                ])
            case "upload/1", "upload/2":
                uploadedBytes.withLockedValue { $0.append(request.body) }
                return .json([
                    "singleFile": [
                        "fileChecksum": "checksum-\(request.endpoint.suffix(1))",
                        "receipt": "receipt-\(request.endpoint.suffix(1))",
                        "size": request.body.count, "wrappingKey": "wk", "referenceChecksum": "rc",
                    ]
                ])
            default:
                let fields =
                    ((try? Self.operations(request).first?["record"] as? [String: Any])?["fields"]) as? [String: Any]
                    ?? [:]
                return .json(["records": [Harness.serverRecord("ada", fields: fields)]])
            }
        }) { database, server in
            var record = Self.student("ada")
            record["photo"] = .asset(CloudAsset(fileURL: file))
            record["scans"] = .assetList([CloudAsset(data: Data("scan".utf8))])
            let saved = try await database.save(record)

            #expect(uploadedBytes.withLockedValue { $0 } == [contents, Data("scan".utf8)])
            #expect(server.requests.map(\.endpoint) == ["assets/upload", "upload/1", "upload/2", "records/modify"])
            let tokens = try server.requests[0].json()["tokens"] as? [[String: String]]
            #expect(
                tokens == [
                    ["recordName": "ada", "recordType": "Student", "fieldName": "photo"],
                    ["recordName": "ada", "recordType": "Student", "fieldName": "scans"],
                ])
            var photo = CloudAsset(
                size: Int64(contents.count), fileChecksum: "checksum-1", referenceChecksum: "rc", wrappingKey: "wk",
                receipt: "receipt-1"
            )
            photo.fileURL = file
            // The saved record keeps the local file: what was just uploaded needn't be downloaded.
            #expect(saved.fields["photo"] == .asset(photo))
            guard case .assetList(let scans)? = saved.fields["scans"] else { Issue.record("no scans"); return }
            #expect(scans.map(\.receipt) == ["receipt-2"])
        }
    }

    @Test func fetchedAssetsAreDownloadedIntoTheCacheOnce() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: cache) }
        let contents = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try await Harness.with(
            assetCacheDirectory: cache,
            handler: { request in
                if request.path.hasPrefix("/download/") {
                    // The client names the file in place of `${f}`: the checksum, made safe for a path.
                    return request.path == "/download/Ab_c-d==" && request.query["o"] == "1"
                        ? LoopbackResponse(status: 200, body: contents) : .serverError(404, "NOT_FOUND")
                }
                let port = request.headers["host"]?.split(separator: ":").last ?? ""
                let asset: [String: Any] = [
                    "fileChecksum": "Ab/c+d==", "size": contents.count,
                    "downloadURL": "http://127.0.0.1:\(port)/download/${f}?o=1",
                ]
                let missing: [String: Any] = [
                    "fileChecksum": "gone", "size": 1, "downloadURL": "http://127.0.0.1:\(port)/download/x/${f}",
                ]
                return .json([
                    "records": [
                        Harness.serverRecord("ada", fields: ["photo": ["type": "ASSETID", "value": asset]]),
                        Harness.serverRecord("bob", fields: ["photo": ["type": "ASSETID", "value": missing]]),
                    ]
                ])
            }
        ) { database, server in
            let ada = CloudRecord.ID(recordName: "ada")
            let bob = CloudRecord.ID(recordName: "bob")
            let results = try await database.records(for: [ada, bob])
            guard case .asset(let asset)? = try results[ada]?.get().fields["photo"] else {
                Issue.record("no asset")
                return
            }
            #expect(asset.fileURL == cache.appendingPathComponent("Ab_c-d=="))
            #expect(try asset.contents() == contents)
            #expect(asset.downloadURL != nil && asset.size == Int64(contents.count))
            guard case .networkFailure(let reason)? = (results[bob]?.failureKind) else {
                Issue.record("expected a failed download, got \(String(describing: results[bob]))")
                return
            }
            #expect(reason == "downloading bob's asset photo: HTTP 404")

            _ = try await database.records(for: [ada])
            #expect(server.requests.filter { $0.path == "/download/Ab_c-d==" }.count == 1)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter {
                $0.hasSuffix(".partial")
            }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func recordsCloudKitCantTakeAreRefusedBeforeAnyRequest() async throws {
        try await Harness.with(handler: { _ in .json(["records": []]) }) { database, server in
            var record = Self.student("ada")
            record["score"] = .double(.infinity)
            let results = try await database.modifyRecords(
                saving: [record, Self.student("bob", zone: Self.schools)], deleting: [],
                savePolicy: .ifServerRecordUnchanged, atomically: true
            )
            #expect(
                results.saveResults[record.id]?.failureOrNil
                    == .invalidArguments(
                        "ada's field score holds a number that isn't finite, which JSON can't carry"
                    ))
            #expect(server.requests.map(\.endpoint) == ["records/modify"])
        }
    }
}

extension Result {
    var failureOrNil: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
