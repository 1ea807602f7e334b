import CloudKitTestServer
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

/// Change tracking, the user and subscriptions over CloudKit Web Services: the requests sent, byte for byte, and
/// the documented responses read.
@Suite struct ChangeTrackingTests {
    typealias Harness = WebServicesHarness

    static let schools = CloudRecord.ZoneID(zoneName: "Schools")
    static let userToken = CloudKitWebServicesAuthentication.apiToken("api", webAuthToken: "web")

    static func body(_ request: ReceivedRequest?) -> String {
        request.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
    }

    // MARK: Zone changes

    @Test func zoneChangesAskChangesZoneForOneZoneAndSplitTombstones() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "zones": [
                        [
                            "zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"],
                            "records": [
                                Harness.serverRecord("a", zone: "Schools"),
                                [
                                    "recordName": "b", "recordType": "Student", "deleted": true,
                                    "zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"],
                                ],
                                ["recordName": "c", "deleted": true, "zoneID": ["zoneName": "Schools"]],
                            ],
                            "syncToken": "token-2", "moreComing": true,
                        ]
                    ]
                ])
            }
        ) { database, server in
            let changes = try await database.recordZoneChanges(
                inZoneWith: Self.schools, since: CloudChangeToken(string: "token-1"), desiredKeys: [],
                resultsLimit: 50)
            #expect(changes.modifications.map(\.id) == [CloudRecord.ID(recordName: "a", zoneID: Self.schools)])
            #expect(changes.modifications.first?.systemFields?.changeTag == "tag-1")
            #expect(
                changes.deletions == [
                    CloudRecordDeletion(
                        id: CloudRecord.ID(recordName: "b", zoneID: Self.schools), recordType: "Student"),
                    CloudRecordDeletion(id: CloudRecord.ID(recordName: "c", zoneID: Self.schools), recordType: ""),
                ])
            #expect(changes.modificationFailures.isEmpty)
            #expect(changes.changeToken == CloudChangeToken(string: "token-2"))
            #expect(changes.changeToken.string == "token-2")
            #expect(changes.moreComing)
            #expect(server.requests.map(\.path) == [Harness.path("changes/zone", database: "private")])
            #expect(
                Self.body(server.requests.first)
                    == #"{"zones":[{"desiredKeys":[],"resultsLimit":50,"syncToken":"token-1","zoneID":{"zoneName":"Schools"}}]}"#
            )
        }
    }

    @Test func aFirstZoneChangesRequestSendsNoTokenAndCapsTheLimitAt200() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json(["zones": [["zoneID": ["zoneName": "Schools"], "records": [], "syncToken": "t"]]])
            }
        ) { database, server in
            let changes = try await database.recordZoneChanges(
                inZoneWith: Self.schools, since: nil, desiredKeys: nil, resultsLimit: 1000)
            #expect(changes == CloudRecordZoneChanges(changeToken: CloudChangeToken(string: "t"), moreComing: false))
            #expect(
                Self.body(server.requests.first) == #"{"zones":[{"resultsLimit":200,"zoneID":{"zoneName":"Schools"}}]}"#
            )
        }
    }

    @Test func theDefaultZoneIsRefusedBeforeAnyRequest() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken, handler: { _ in .json(["zones": []]) }
        ) { database, server in
            await #expect(throws: CloudDatabaseError.defaultZoneHasNoChanges) {
                try await database.recordZoneChanges(inZoneWith: .default, since: nil)
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aZoneErrorInTheResponseIsThrownForThatZone() async throws {
        _ = try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "zones": [
                        ["zoneID": ["zoneName": "Schools"], "serverErrorCode": "ZONE_NOT_FOUND", "reason": "gone"]
                    ]
                ])
            }
        ) { database, _ in
            await #expect(throws: CloudDatabaseError.zoneNotFound(Self.schools)) {
                try await database.recordZoneChanges(inZoneWith: Self.schools, since: nil)
            }
        }
    }

    // MARK: Expired tokens

    @Test func anExpiredSyncTokenIsChangeTokenExpiredForTheZone() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in .serverError(400, "BAD_REQUEST", reason: "sync token expired") }
        ) { database, _ in
            await #expect(throws: CloudDatabaseError.changeTokenExpired(Self.schools)) {
                try await database.recordZoneChanges(
                    inZoneWith: Self.schools, since: CloudChangeToken(string: "old"))
            }
            await #expect(throws: CloudDatabaseError.changeTokenExpired(nil)) {
                try await database.databaseChanges(since: CloudChangeToken(string: "old"))
            }
        }
    }

    @Test func anExpiredSyncTokenInAZoneResultIsChangeTokenExpired() async throws {
        _ = try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "zones": [
                        [
                            "zoneID": ["zoneName": "Schools"], "serverErrorCode": "BAD_REQUEST",
                            "reason": "The syncToken has been reset",
                        ]
                    ]
                ])
            }
        ) { database, _ in
            await #expect(throws: CloudDatabaseError.changeTokenExpired(Self.schools)) {
                try await database.recordZoneChanges(
                    inZoneWith: Self.schools, since: CloudChangeToken(string: "old"))
            }
        }
    }

    @Test func onlyTokenErrorsAreRecognisedAsExpiredTokens() {
        let expired = [
            WireServerError(serverErrorCode: "CHANGE_TOKEN_EXPIRED"),
            WireServerError(serverErrorCode: "BAD_REQUEST", reason: "Sync token expired"),
            WireServerError(serverErrorCode: "BAD_REQUEST", reason: "syncToken has been reset"),
        ]
        for error in expired {
            #expect(error.changesError(zoneID: Self.schools) == .changeTokenExpired(Self.schools))
        }
        let others = [
            WireServerError(serverErrorCode: "BAD_REQUEST", reason: "resultsLimit too large"),
            WireServerError(serverErrorCode: "BAD_REQUEST", reason: "session expired"),
            WireServerError(serverErrorCode: "BAD_REQUEST"),
        ]
        #expect(others.map(\.isExpiredSyncToken) == [false, false, false])
        #expect(
            WireServerError(serverErrorCode: "BAD_REQUEST", reason: "bad").changesError(zoneID: nil)
                == .invalidArguments("bad (BAD_REQUEST)"))
        #expect(
            WireServerError(serverErrorCode: "ZONE_NOT_FOUND").changesError(zoneID: Self.schools)
                == .zoneNotFound(Self.schools))
    }

    // MARK: Database changes

    @Test func databaseChangesReadChangedDeletedAndPurgedZones() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "zones": [
                        ["zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"], "syncToken": "z"],
                        ["zoneID": ["zoneName": "Old", "ownerRecordName": "_7c3f2a9d"], "deleted": true],
                        ["zoneID": ["zoneName": "Gone", "ownerRecordName": "_7c3f2a9d"], "purged": true],
                        ["zoneID": ["zoneName": "Reset"], "encryptedDataReset": true, "deleted": true],
                    ],
                    "syncToken": "db-2", "moreComing": false,
                ])
            }
        ) { database, server in
            let changes = try await database.databaseChanges(since: CloudChangeToken(string: "db-1"), resultsLimit: 10)
            #expect(
                changes
                    == CloudDatabaseChanges(
                        modifiedZoneIDs: [Self.schools],
                        deletions: [
                            CloudZoneDeletion(zoneID: CloudRecord.ZoneID(zoneName: "Old"), reason: .deleted),
                            CloudZoneDeletion(zoneID: CloudRecord.ZoneID(zoneName: "Gone"), reason: .purged),
                            CloudZoneDeletion(
                                zoneID: CloudRecord.ZoneID(zoneName: "Reset"), reason: .encryptedDataReset),
                        ],
                        changeToken: CloudChangeToken(string: "db-2"), moreComing: false))
            #expect(server.requests.map(\.path) == [Harness.path("changes/database", database: "private")])
            #expect(Self.body(server.requests.first) == #"{"resultsLimit":10,"syncToken":"db-1"}"#)
        }
    }

    @Test func thePublicDatabaseHasNoDatabaseChanges() async throws {
        try await Harness.with(handler: { _ in .json([:]) }) { database, server in
            await #expect(throws: CloudDatabaseError.self) { try await database.databaseChanges(since: nil) }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aTokenThatIsntAStringIsRefused() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken, handler: { _ in .json([:]) }
        ) { database, server in
            await #expect(throws: CloudDatabaseError.self) {
                try await database.databaseChanges(since: CloudChangeToken(data: Data([0xFF, 0xFE])))
            }
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: The user

    @Test func theUserRecordNameComesFromUsersCallerUnderThePublicPath() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "users": [
                        [
                            "userRecordName": "_a1b2", "nameComponents": ["givenName": "Ada"],
                            "lookupInfo": ["emailAddress": "ada@example.com"],
                        ]
                    ]
                ])
            }
        ) { database, server in
            let name = try await database.userRecordName()
            let status = try await database.accountStatus()
            #expect(name == "_a1b2")
            #expect(status == .available)
            #expect(server.requests.map(\.method) == ["GET", "GET"])
            #expect(server.requests.map(\.path) == Array(repeating: Harness.path("users/caller"), count: 2))
        }
    }

    @Test func aTopLevelUserRecordNameIsReadToo() throws {
        let response = try JSONDecoder().decode(
            WireCallerResponse.self, from: Data(#"{"userRecordName":"_c3","firstName":"Ada"}"#.utf8))
        #expect(response.callerRecordName == "_c3")
    }

    @Test func noSignedInUserIsNoAccount() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in .serverError(421, "AUTHENTICATION_REQUIRED", reason: "sign in") }
        ) { database, _ in
            let status = try await database.accountStatus()
            #expect(status == .noAccount)
            await #expect(throws: CloudDatabaseError.notAuthenticated) { try await database.userRecordName() }
            return ()
        }
    }

    // MARK: Subscriptions

    @Test func savingSubscriptionsCreatesThemAndUpdatesTheOnesThatExist() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { request in
                let operations = (try? request.json()["operations"] as? [[String: Any]]) ?? []
                return .json([
                    "subscriptions": operations.map { operation -> [String: Any] in
                        var subscription = operation["subscription"] as? [String: Any] ?? [:]
                        let id = subscription["subscriptionID"] as? String ?? ""
                        switch (operation["operationType"] as? String, id) {
                        case ("create", "db"):
                            return ["subscriptionID": id, "serverErrorCode": "EXISTS", "reason": "exists"]
                        case ("delete", "missing"):
                            return ["subscriptionID": id, "serverErrorCode": "NOT_FOUND", "reason": "no"]
                        case ("delete", _): return ["subscriptionID": id]
                        default:
                            if var zone = subscription["zoneID"] as? [String: Any] {
                                zone["ownerRecordName"] = "_7c3f2a9d"
                                subscription["zoneID"] = zone
                            }
                            return subscription
                        }
                    }
                ])
            }
        ) { database, server in
            let zone = CloudSubscription(id: "schools", kind: .zone(Self.schools))
            let all = CloudSubscription(id: "db", kind: .database, sendsContentAvailable: false)
            let results = try await database.modifySubscriptions(
                saving: [zone, all], deleting: ["old", "missing"])
            #expect(try results.saveResults["schools"]?.get() == zone)
            #expect(try results.saveResults["db"]?.get() == all)
            #expect((try? results.deleteResults["old"]?.get()) != nil)
            #expect(
                results.deleteResults["missing"]?.failureOrNil
                    == .invalidArguments(
                        "no subscription has the ID missing (NOT_FOUND): list the database's subscriptions with "
                            + "allSubscriptions()"))
            #expect(server.requests.map(\.endpoint) == ["subscriptions/modify", "subscriptions/modify"])
            #expect(
                Self.body(server.requests.first)
                    == #"{"operations":[{"operationType":"create","subscription":{"notificationInfo":{"shouldSendContentAvailable":true},"subscriptionID":"schools","subscriptionType":"zone","zoneID":{"zoneName":"Schools"},"zoneWide":true}},{"operationType":"create","subscription":{"notificationInfo":{"shouldSendContentAvailable":false},"subscriptionID":"db","subscriptionType":"database"}},{"operationType":"delete","subscription":{"subscriptionID":"old"}},{"operationType":"delete","subscription":{"subscriptionID":"missing"}}]}"#
            )
            #expect(
                Self.body(server.requests.last)
                    == #"{"operations":[{"operationType":"update","subscription":{"notificationInfo":{"shouldSendContentAvailable":false},"subscriptionID":"db","subscriptionType":"database"}}]}"#
            )
        }
    }

    @Test func aZoneSubscriptionOfTheDefaultZoneIsRefusedBeforeAnyRequest() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken, handler: { _ in .json(["subscriptions": []]) }
        ) { database, server in
            let results = try await database.modifySubscriptions(
                saving: [CloudSubscription(id: "d", kind: .zone(.default))], deleting: [])
            #expect(
                results.saveResults["d"]?.failureOrNil
                    == .invalidArguments("the default zone has no zone subscriptions: subscribe to a custom zone"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test func listedSubscriptionsAreZoneAndDatabaseOnes() async throws {
        try await Harness.with(
            database: .private, authentication: Self.userToken,
            handler: { _ in
                .json([
                    "subscriptions": [
                        [
                            "subscriptionID": "z", "subscriptionType": "zone", "zoneWide": true,
                            "zoneID": ["zoneName": "Schools", "ownerRecordName": "_7c3f2a9d"],
                            "notificationInfo": ["shouldSendContentAvailable": true],
                        ],
                        [
                            "subscriptionID": "q", "subscriptionType": "query", "firesOn": ["create"],
                            "query": ["recordType": "Student"],
                        ],
                        ["subscriptionID": "a", "subscriptionType": "database"],
                    ]
                ])
            }
        ) { database, server in
            let subscriptions = try await database.allSubscriptions()
            #expect(
                subscriptions == [
                    CloudSubscription(id: "a", kind: .database, sendsContentAvailable: false),
                    CloudSubscription(id: "z", kind: .zone(Self.schools), sendsContentAvailable: true),
                ])
            #expect(server.requests.map(\.method) == ["GET"])
            #expect(server.requests.map(\.path) == [Harness.path("subscriptions/list", database: "private")])
        }
    }

    // MARK: Queries on system fields

    @Test func comparisonsAndSystemFieldsUseWebServicesNames() throws {
        let since = Date(timeIntervalSince1970: 1_453_760_143.123)
        let query = CloudQuery(
            recordType: "Student",
            predicate: .and([
                .modified(after: since),
                .compare(field: "grade", .lessThanOrEquals, .int64(3)),
                .compare(field: CloudQuery.SystemField.creationDate.fieldName, .greaterThanOrEquals, .date(since)),
                .equals(field: CloudQuery.SystemField.recordName.fieldName, value: .string("ada")),
                .compare(field: "name", .notEquals, .string("bob")),
            ]),
            sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate, ascending: false)]
        )
        #expect(
            try WireFormatTests.encode(WireQuery(query, in: Self.schools))
                == #"{"filterBy":[{"comparator":"GREATER_THAN","fieldName":"___modTime","fieldValue":{"type":"TIMESTAMP","value":1453760143123}},{"comparator":"LESS_THAN_OR_EQUALS","fieldName":"grade","fieldValue":{"type":"INT64","value":3}},{"comparator":"GREATER_THAN_OR_EQUALS","fieldName":"___createTime","fieldValue":{"type":"TIMESTAMP","value":1453760143123}},{"comparator":"EQUALS","fieldName":"___recordID","fieldValue":{"type":"REFERENCE","value":{"action":"NONE","recordName":"ada","zoneID":{"zoneName":"Schools"}}}},{"comparator":"NOT_EQUALS","fieldName":"name","fieldValue":{"type":"STRING","value":"bob"}}],"recordType":"Student","sortBy":[{"ascending":false,"fieldName":"___modTime"}]}"#
        )
        #expect(
            try WireFormatTests.encode(
                WireQuery(CloudQuery(recordType: "S", sortDescriptors: [CloudQuery.SortDescriptor(.recordName)])))
                == #"{"recordType":"S","sortBy":[{"ascending":true,"fieldName":"___recordID"}]}"#)
        #expect(
            throws: CloudDatabaseError.invalidArguments(
                "a query compares recordID with a string (or a list of strings), not a value of type INT64")
        ) {
            try WireQuery(CloudQuery(recordType: "S", predicate: .compare(field: "recordID", .lessThan, .int64(1))))
        }
    }

    @Test func listComparatorsNearAndUsersUseWebServicesShapes() throws {
        let query = CloudQuery(
            recordType: "Place",
            predicate: .and([
                .compare(field: "rating", .notIn, .int64List([1, 2])),
                .near(field: "spot", location: CloudLocation(latitude: 1.5, longitude: -2), radius: 250),
                .compare(field: CloudQuery.SystemField.creatorUserRecordName.fieldName, .equals, .string("_ada")),
                .compare(field: CloudQuery.SystemField.recordName.fieldName, .in, .stringList(["a"])),
            ]))
        let json = try WireFormatTests.encode(WireQuery(query, in: Self.schools))
        #expect(
            json.contains(
                #"{"comparator":"NOT_IN","fieldName":"rating","fieldValue":{"type":"INT64_LIST","value":[1,2]}}"#))
        #expect(
            json.contains(#"{"comparator":"NEAR","distance":250,"fieldName":"spot","fieldValue":{"type":"LOCATION""#))
        #expect(
            json.contains(
                #"{"comparator":"EQUALS","fieldName":"___createdBy","fieldValue":{"type":"REFERENCE","value":{"action":"NONE","recordName":"_ada","zoneID":{"zoneName":"_defaultZone"}}}}"#
            ))
        #expect(
            json.contains(
                #"{"comparator":"IN","fieldName":"___recordID","fieldValue":{"type":"REFERENCE_LIST","value":[{"action":"NONE","recordName":"a","zoneID":{"zoneName":"Schools"}}]}}"#
            ))
        #expect(
            throws: CloudDatabaseError.invalidArguments(
                "IN compares the field rating with a list of candidates, not one value")
        ) {
            try WireQuery(CloudQuery(recordType: "S", predicate: .compare(field: "rating", .in, .int64(1))))
        }
        #expect(
            throws: CloudDatabaseError.invalidArguments("a query compares the field rating with one value, not a list")
        ) {
            try WireQuery(CloudQuery(recordType: "S", predicate: .compare(field: "rating", .equals, .int64List([1]))))
        }
    }
}
