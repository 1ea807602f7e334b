import Foundation
import NestedCloudKitEmulator
import Testing

@testable import NestedCloudKitEmulator

/// Sharing on the wire: alice shares a list from her private database, bob resolves and accepts its short GUID
/// and reads it in his shared database; the share's URL is served by the emulator, and the admin API lists each
/// user's shares. The request and answer shapes are the reference's, the resolved-share keys CKToolJS's
/// `CKDBResolvedRecord`'s.
@Suite struct EmulatorSharingTests {
    let harness = EmulatorRouterHarness()
    static let lists: [String: String] = ["zoneName": "Lists"]

    /// Alice's list and its share with bob (read-write), saved from her private database; the share's answer.
    func aliceSharesHerList(_ alice: EmulatorRouterHarness.Session) async throws -> [String: Any] {
        _ = try await alice.call(
            "zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": Self.lists]]]])
        let share: [String: Any] = [
            "recordName": "share-1", "recordType": "cloudkit.share",
            "fields": ["cloudkit.title": ["value": "Groceries"]],
            "publicPermission": "NONE",
            "participants": [
                [
                    "userIdentity": ["userRecordName": Caller.userRecordName(for: "bob")],
                    "permission": "READ_WRITE", "type": "PRIVATE_USER", "acceptanceStatus": "PENDING",
                ]
            ],
        ]
        let list: [String: Any] = [
            "recordName": "groceries", "recordType": "List", "fields": ["name": ["value": "Groceries"]],
            "share": ["recordName": "share-1"],
        ]
        let answer = try await alice.call(
            "records/modify",
            [
                "zoneID": Self.lists, "atomic": true,
                "operations": [
                    ["operationType": "create", "record": list], ["operationType": "create", "record": share],
                ],
            ])
        #expect(answer.status == 200, "\(answer.text)")
        let records = try #require(answer.json["records"] as? [[String: Any]])
        return try #require(records.first { $0["recordName"] as? String == "share-1" })
    }

    @Test func bobResolvesAcceptsAndReadsAlicesListInHisSharedDatabase() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let bob = await EmulatorRouterHarness.Session(harness, user: "bob")
        let share = try await aliceSharesHerList(alice)
        let shortGUID = try #require(share["shortGUID"] as? String)
        #expect(share["url"] as? String == "http://\(EmulatorRouterHarness.host)/share/\(shortGUID)")

        let resolved = try await bob.call(
            "records/resolve", ["shortGUIDs": [["value": shortGUID, "shouldFetchRootRecord": true]]], scope: "public")
        #expect(resolved.status == 200, "\(resolved.text)")
        let result = try #require((resolved.json["results"] as? [[String: Any]])?.first)
        let alicesName = Caller.userRecordName(for: "alice")
        #expect(result["shortGUID"] as? String == shortGUID)
        #expect(result["databaseScope"] as? String == "SHARED")
        #expect(result["containerIdentifier"] as? String == harness.container)
        #expect(result["rootRecordName"] as? String == "groceries")
        #expect((result["zoneID"] as? [String: Any])?["ownerRecordName"] as? String == alicesName)
        #expect((result["ownerIdentity"] as? [String: Any])?["userRecordName"] as? String == alicesName)
        #expect(result["participantType"] as? String == "PRIVATE_USER")
        #expect(result["participantStatus"] as? String == "PENDING")
        #expect(result["participantPermission"] as? String == "READ_WRITE")
        #expect((result["rootRecord"] as? [String: Any])?["recordName"] as? String == "groceries")
        #expect((result["share"] as? [String: Any])?["recordType"] as? String == "cloudkit.share")

        let accepted = try await bob.call("records/accept", ["shortGUIDs": [["value": shortGUID]]], scope: "public")
        let acceptance = try #require((accepted.json["results"] as? [[String: Any]])?.first)
        #expect(acceptance["participantStatus"] as? String == "ACCEPTED")

        let zones = try await bob.call("zones/list", [:], scope: "shared")
        let zoneIDs = (zones.json["zones"] as? [[String: Any]])?.compactMap { $0["zoneID"] as? [String: Any] }
        #expect(zoneIDs?.map { $0["ownerRecordName"] as? String } == [alicesName])
        let lookup = try await bob.call(
            "records/lookup",
            [
                "zoneID": ["zoneName": "Lists", "ownerRecordName": alicesName],
                "records": [["recordName": "groceries"]],
            ],
            scope: "shared")
        let record = try #require((lookup.json["records"] as? [[String: Any]])?.first)
        #expect(
            (record["fields"] as? [String: Any])?["name"] as? [String: String] == [
                "value": "Groceries", "type": "STRING",
            ])
        // Bob's private database holds none of it.
        let own = try await bob.call("zones/list", [:], scope: "private")
        #expect((own.json["zones"] as? [[String: Any]])?.count == 1)
    }

    @Test func aForgedShortGUIDAndTheOwnersOwnShareAreRefusedPerItem() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let share = try await aliceSharesHerList(alice)
        let shortGUID = try #require(share["shortGUID"] as? String)
        let answer = try await alice.call(
            "records/accept", ["shortGUIDs": [["value": "forged"], ["value": shortGUID]]], scope: "public")
        #expect(answer.status == 200)
        let results = try #require(answer.json["results"] as? [[String: Any]])
        #expect(results.map { $0["shortGUID"] as? String } == ["forged", shortGUID])
        #expect(results.map { $0["serverErrorCode"] as? String } == ["BAD_REQUEST", "BAD_REQUEST"])
        #expect((results[0]["reason"] as? String)?.contains("no share has the short GUID forged") == true)
        #expect((results[1]["reason"] as? String)?.contains("only other users accept a share") == true)
    }

    @Test func aStrangerReadingTheOwnersZoneIsToldItIsntSharedWithThem() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let carol = await EmulatorRouterHarness.Session(harness, user: "carol")
        _ = try await aliceSharesHerList(alice)
        let alicesZone = ["zoneName": "Lists", "ownerRecordName": Caller.userRecordName(for: "alice")]
        let lookup = try await carol.call(
            "records/lookup", ["zoneID": alicesZone, "records": [["recordName": "groceries"]]], scope: "shared")
        let reason = try #require(
            (lookup.json["records"] as? [[String: Any]])?.first?["reason"] as? String ?? lookup.json["reason"]
                as? String, "\(lookup.text)")
        #expect(reason.contains("isn't shared with this user"), "\(reason)")
        #expect(!reason.contains("create it"), "one can't create another user's zone: \(reason)")
        #expect(!lookup.text.contains("Groceries"))
    }

    @Test func reasonsOnTheWireCarryNoClientPrefix() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let bob = await EmulatorRouterHarness.Session(harness, user: "bob")
        let share = try await aliceSharesHerList(alice)
        // Refused as invalid: the reason alone, which a client prefixes with its own words.
        let twice = try await alice.call(
            "records/modify",
            [
                "zoneID": Self.lists,
                "operations": [
                    ["operationType": "forceUpdate", "record": ["recordName": "x", "recordType": "List"]],
                    ["operationType": "forceDelete", "record": ["recordName": "x"]],
                ],
            ])
        let invalid = try #require(twice.json["reason"] as? String, "\(twice.text)")
        #expect(invalid.contains("twice") && !invalid.hasPrefix("Invalid request"), "\(invalid)")
        let elsewhere = try await alice.call(
            "records/modify",
            [
                "zoneID": Self.lists,
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "y", "recordType": "List",
                            "fields": [
                                "other": [
                                    "value": ["recordName": "z", "zoneID": ["zoneName": "Other"], "action": "NONE"],
                                    "type": "REFERENCE",
                                ]
                            ],
                        ],
                    ]
                ],
            ])
        let item = (elsewhere.json["records"] as? [[String: Any]])?.first
        let crossZone = try #require(item?["reason"] as? String, "\(elsewhere.text)")
        #expect(crossZone.contains("another zone") && !crossZone.hasPrefix("Invalid request"), "\(crossZone)")
        // Refused as not permitted: bob can't change the share alice owns (he may only leave it).
        _ = try await bob.call(
            "records/accept", ["shortGUIDs": [["value": try #require(share["shortGUID"] as? String)]]],
            scope: "public")
        let alicesZone = ["zoneName": "Lists", "ownerRecordName": Caller.userRecordName(for: "alice")]
        let denied = try await bob.call(
            "records/modify",
            [
                "zoneID": alicesZone,
                "operations": [
                    [
                        "operationType": "forceUpdate",
                        "record": [
                            "recordName": "share-1", "recordType": "cloudkit.share",
                            "fields": ["cloudkit.title": ["value": "Mine now"]],
                        ],
                    ]
                ],
            ], scope: "shared")
        let refused = (denied.json["records"] as? [[String: Any]])?.first
        let reason = try #require(refused?["reason"] as? String ?? denied.json["reason"] as? String, "\(denied.text)")
        #expect(
            (refused?["serverErrorCode"] ?? denied.json["serverErrorCode"]) as? String == "ACCESS_DENIED",
            "\(denied.text)")
        #expect(!reason.hasPrefix("Not permitted"), "\(reason)")
    }

    @Test func anUploadTokenWithoutARecordNameIsGivenARandomUUID() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let upload = try await alice.call(
            "assets/upload",
            [
                "tokens": [
                    ["recordType": "Photo", "fieldName": "image"], ["recordType": "Photo", "fieldName": "image"],
                    ["recordName": "photo", "recordType": "Photo", "fieldName": "image"],
                ]
            ])
        let names = try #require((upload.json["tokens"] as? [[String: Any]])?.map { $0["recordName"] as? String })
        #expect(names.count == 3)
        #expect(names[0].flatMap(UUID.init(uuidString:)) != nil, "\(upload.text)")
        #expect(names[1].flatMap(UUID.init(uuidString:)) != nil && names[1] != names[0])
        #expect(names[2] == "photo")
    }

    @Test func resolvingNeedsASignedInUser() async throws {
        let answer = try await harness.database(
            "public", "records/resolve", token: nil, json: ["shortGUIDs": [["value": "x"]]])
        #expect(answer.status == 421)
        #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
    }

    @Test func theShareURLOpensAPageWithItsTitleAndAnUnknownOneIsAPlain404() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let share = try await aliceSharesHerList(alice)
        let shortGUID = try #require(share["shortGUID"] as? String)
        let page = try await harness.send("GET", "/share/\(shortGUID)")
        #expect(page.status == 200)
        #expect(page.text.contains("“Groceries”"))
        #expect(page.text.contains(shortGUID))
        #expect(page.header("Access-Control-Allow-Origin") == nil)

        let unknown = try await harness.send("GET", "/share/\(String(shortGUID.reversed()))")
        #expect(unknown.status == 404)
        #expect(unknown.text.contains("no share has this URL"))
        #expect(!unknown.text.contains("/tmp") && !unknown.text.contains("Groceries"))
        // The URL's short GUID is its credential: the request log leaves it out.
        let log = try await harness.send("GET", "/emulator/v1/requests")
        #expect(!log.text.contains(shortGUID))
    }

    @Test func theAdminAPIListsTheSharesAUserOwnsAndTakesPartIn() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let share = try await aliceSharesHerList(alice)
        let shortGUID = try #require(share["shortGUID"] as? String)
        for (user, role) in [("alice", "OWNER"), ("bob", "PARTICIPANT")] {
            let answer = try await harness.send(
                "GET", "/emulator/v1/shares?container=\(harness.container)&user=\(user)")
            #expect(answer.status == 200, "\(answer.text)")
            let shares = try #require(answer.json["shares"] as? [[String: Any]])
            #expect(shares.count == 1)
            #expect(shares.first?["role"] as? String == role)
            #expect(shares.first?["title"] as? String == "Groceries")
            #expect(shares.first?["rootRecordName"] as? String == "groceries")
            #expect(shares.first?["url"] as? String == "http://\(EmulatorRouterHarness.host)/share/\(shortGUID)")
        }
        let carol = try await harness.send("GET", "/emulator/v1/shares?container=\(harness.container)&user=carol")
        #expect((carol.json["shares"] as? [Any])?.isEmpty == true)
    }

    @Test func bobDownloadsTheAssetOfARecordAliceSharedWithHim() async throws {
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let bob = await EmulatorRouterHarness.Session(harness, user: "bob")
        let share = try await aliceSharesHerList(alice)
        let shortGUID = try #require(share["shortGUID"] as? String)
        // Alice adds a photo under her list.
        let upload = try await alice.call(
            "assets/upload", ["tokens": [["recordName": "photo", "recordType": "Photo", "fieldName": "image"]]])
        let uploadURL = try #require((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let bytes = Data("a photo of the fridge".utf8)
        let posted = try await harness.send("POST", try #require(URL(string: uploadURL)?.path), body: bytes)
        let singleFile = try #require(posted.json["singleFile"] as? [String: Any])
        let photo: [String: Any] = [
            "recordName": "photo", "recordType": "Photo", "parent": ["recordName": "groceries"],
            "fields": ["image": ["value": singleFile, "type": "ASSETID"]],
        ]
        let saved = try await alice.call(
            "records/modify", ["zoneID": Self.lists, "operations": [["operationType": "create", "record": photo]]])
        #expect(saved.status == 200, "\(saved.text)")

        _ = try await bob.call("records/accept", ["shortGUIDs": [["value": shortGUID]]], scope: "public")
        let alicesZone = ["zoneName": "Lists", "ownerRecordName": Caller.userRecordName(for: "alice")]
        let lookup = try await bob.call(
            "records/lookup", ["zoneID": alicesZone, "records": [["recordName": "photo"]]], scope: "shared")
        let record = try #require((lookup.json["records"] as? [[String: Any]])?.first)
        let image = (record["fields"] as? [String: Any])?["image"] as? [String: Any]
        let download = try #require((image?["value"] as? [String: Any])?["downloadURL"] as? String)
        let path = String(download.dropFirst("http://\(EmulatorRouterHarness.host)".count))
            .replacingOccurrences(of: "${f}", with: "photo.jpg")
        let fetched = try await harness.send("GET", path)
        #expect(fetched.status == 200)
        #expect(fetched.body == bytes)
    }

    @Test func bobsSharedDatabaseSubscriptionFiresWhenAliceChangesTheList() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(notificationPollTimeout: .seconds(10)))
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let bob = await EmulatorRouterHarness.Session(harness, user: "bob")
        let share = try await aliceSharesHerList(alice)
        _ = try await bob.call(
            "records/accept", ["shortGUIDs": [["value": try #require(share["shortGUID"] as? String)]]],
            scope: "public")
        let subscribed = try await bob.call(
            "subscriptions/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "subscription": ["subscriptionID": "shared", "subscriptionType": "database"],
                    ]
                ]
            ], scope: "shared")
        #expect(subscribed.status == 200, "\(subscribed.text)")
        let courier = try #require(
            try await bob.call("tokens/create", ["apnsEnvironment": "development"], scope: "shared")
                .json["webcourierURL"] as? String)
        let path = String(courier.dropFirst("http://\(EmulatorRouterHarness.host)".count))

        async let push = harness.send("GET", path)
        let item: [String: Any] = [
            "recordName": "eggs", "recordType": "Item", "parent": ["recordName": "groceries"],
            "fields": ["name": ["value": "Eggs"]],
        ]
        _ = try await alice.call(
            "records/modify", ["zoneID": Self.lists, "operations": [["operationType": "create", "record": item]]])
        let payload = try await push.json
        let change = (payload["ck"] as? [String: Any])?["met"] as? [String: Any]
        #expect(change?["sid"] as? String == "shared")
        #expect(change?["dbs"] as? Int == 3)
    }

    // MARK: Under a data directory

    @Test func underADataDirectoryUsersFirstRequestsAtOnceAllGetTheirDatabaseFromTheFileQueue() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("opening-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = EmulatorRouterHarness(EmulatorConfiguration(storage: .directory(directory.path)))
        // Opening a file blocks: the registry does it on the emulator's file queue, not the cooperative pool.
        #expect(await harness.state.registry.runsOnFileQueue())
        let users = (1...6).map { "user\($0)" }
        // Each user twice at once: the second first request waits for the file the first is opening.
        let answers = try await withThrowingTaskGroup(of: (String, Int).self) { group in
            for user in users + users {
                group.addTask {
                    let answer = try await EmulatorRouterHarness.Session(harness, user: user).call("zones/list", [:])
                    return (user, answer.status)
                }
            }
            return try await group.reduce(into: [String: [Int]]()) { $0[$1.0, default: []].append($1.1) }
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: users.map { ($0, [200, 200]) }))
        await harness.close()
        let folder = directory.appendingPathComponent(harness.container).appendingPathComponent("development")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sqlite") }
        #expect(Set(files) == Set(users.map { "private-\($0).sqlite" }))
    }

    @Test func underADataDirectorySharingWorksAndSurvivesARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sharing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = EmulatorConfiguration(storage: .directory(directory.path))
        let first = EmulatorRouterHarness(configuration)
        let alice = await EmulatorRouterHarness.Session(first, user: "alice")
        let shortGUID = try #require(try await aliceSharesHerList(alice)["shortGUID"] as? String)
        let bob = await EmulatorRouterHarness.Session(first, user: "bob")
        let accepted = try await bob.call("records/accept", ["shortGUIDs": [["value": shortGUID]]], scope: "public")
        #expect(
            (accepted.json["results"] as? [[String: Any]])?.first?["participantStatus"] as? String == "ACCEPTED",
            "\(accepted.text)")
        await first.state.registry.close()
        // Each user's databases are the emulator's files, named by the user, in the container's folder.
        let folder = directory.appendingPathComponent(first.container).appendingPathComponent("development")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sqlite") }
        #expect(Set(files) == ["private-alice.sqlite", "shared-bob.sqlite", "public.sqlite"])

        let restarted = EmulatorRouterHarness(configuration)
        let alicesName = Caller.userRecordName(for: "alice")
        let bobAgain = await EmulatorRouterHarness.Session(restarted, user: "bob")
        let zones = try await bobAgain.call("zones/list", [:], scope: "shared")
        let zoneIDs = (zones.json["zones"] as? [[String: Any]])?.compactMap { $0["zoneID"] as? [String: Any] }
        #expect(zoneIDs?.map { $0["ownerRecordName"] as? String } == [alicesName], "\(zones.text)")

        // Alice adds an item after the restart; bob reads it in her zone, and the share's page is still served.
        let aliceAgain = await EmulatorRouterHarness.Session(restarted, user: "alice")
        let item: [String: Any] = [
            "recordName": "milk", "recordType": "Item", "fields": ["name": ["value": "Milk"]],
            "parent": ["recordName": "groceries"],
        ]
        let saved = try await aliceAgain.call(
            "records/modify", ["zoneID": Self.lists, "operations": [["operationType": "create", "record": item]]])
        #expect(saved.status == 200, "\(saved.text)")
        let lookup = try await bobAgain.call(
            "records/lookup",
            ["zoneID": ["zoneName": "Lists", "ownerRecordName": alicesName], "records": [["recordName": "milk"]]],
            scope: "shared")
        let milk = try #require((lookup.json["records"] as? [[String: Any]])?.first)
        #expect(
            (milk["fields"] as? [String: Any])?["name"] as? [String: String] == ["value": "Milk", "type": "STRING"])
        let page = try await restarted.send("GET", "/share/\(shortGUID)")
        #expect(page.status == 200)
        let listed = try await restarted.send(
            "GET", "/emulator/v1/shares?container=\(restarted.container)&user=bob")
        #expect((listed.json["shares"] as? [[String: Any]])?.first?["role"] as? String == "PARTICIPANT")
        await restarted.state.registry.close()
    }
}
