import CloudKitTestServer
import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

/// Pushes without APNs: `tokens/create`, then long-polls of the notification URL, against crafted answers.
@Suite struct NotificationChannelTests {
    typealias Harness = WebServicesHarness

    static var payload: [String: Any] {
        [
            "aps": ["content-available": 1],
            "ck": [
                "cid": Harness.container, "nid": "n-1", "ckuserid": "_abc",
                "fet": ["sid": "zone", "zid": "Schools", "zoid": "_abc", "dbs": 2],
            ],
        ]
    }

    @Test func aChannelIsCreatedUnderTheContainerAndItsURLIsPolledPastKeepalivesJunkAndAFailure() async throws {
        let polls = NIOLockedValueBox(0)
        try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "token-1"),
            handler: { request in
                if request.path == "/courier/abc" {
                    let poll = polls.withLockedValue {
                        $0 += 1
                        return $0
                    }
                    switch poll {
                    case 1: return LoopbackResponse(status: 200, body: Data())  // the keepalive
                    case 2: return .json(["hello": "not a CloudKit push"])
                    case 3: return .serverError(503, "TRY_AGAIN_LATER", retryAfter: 0.001)
                    case 4: return .json(Self.payload)
                    // Then the server forgets the URL, which ends the stream: a test that knows how many polls ran.
                    default: return .serverError(404, "NOT_FOUND")
                    }
                }
                let port = request.headers["host"]?.split(separator: ":").last ?? ""
                return .json([
                    "apnsEnvironment": "development", "apnsToken": "abc",
                    "webcourierURL": "http://127.0.0.1:\(port)/courier/abc",
                ])
            }
        ) { database, server in
            let channel = try await database.createNotificationChannel()
            #expect(channel.apnsToken == "abc")
            #expect(channel.apnsEnvironment == .development)
            #expect(server.requests.map(\.path) == ["/database/1/\(Harness.container)/development/tokens/create"])
            #expect(try server.requests[0].json() as NSDictionary == ["apnsEnvironment": "development"])

            var pushes: [CloudNotification] = []
            var ending: (any Error)?
            do {
                for try await push in database.notifications(
                    from: channel, pollTimeout: .seconds(60), quietPollSpacing: .zero)
                {
                    pushes.append(push)
                }
            } catch {
                ending = error
            }
            #expect(
                pushes
                    == [
                        CloudNotification(
                            kind: .recordZone(CloudRecord.ZoneID(zoneName: "Schools", ownerName: "_abc")),
                            subscriptionID: "zone", databaseScope: .private, containerIdentifier: Harness.container,
                            notificationID: "n-1", userRecordName: "_abc")
                    ])
            #expect(
                ending as? CloudDatabaseError
                    == .invalidArguments(
                        "the server no longer knows this notification URL (HTTP 404): make a new channel with createNotificationChannel()"
                    ))
            #expect(polls.withLockedValue { $0 } == 5)
            // Polls carry no credential: the URL is the channel's.
            #expect(server.requests.dropFirst().allSatisfy { $0.method == "GET" && $0.query.isEmpty })
        }
    }

    @Test func pollsThatKeepFailingEndTheStreamWithTheError() async throws {
        try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "token-1"),
            handler: { _ in .serverError(503, "TRY_AGAIN_LATER", retryAfter: 0.001) }
        ) { database, server in
            let channel = CloudKitNotificationChannel(
                apnsToken: "abc", webcourierURL: server.url.appendingPathComponent("courier/abc"),
                apnsEnvironment: .development)
            await #expect(throws: CloudDatabaseError.serviceUnavailable(retryAfter: 0.001)) {
                for try await _ in database.notifications(
                    from: channel, pollTimeout: .seconds(60), quietPollSpacing: .zero)
                {}
            }
            #expect(server.requests.count == Harness.quickRetries.maximumAttempts)
        }
    }

    @Test func aPollThatOutlastsItsTimeoutIsQuietAndATimeoutOfZeroIsRefused() async throws {
        let (release, releaseHeldPoll) = AsyncStream<Void>.makeStream()
        try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "token-1"),
            handler: { _ in
                // Held until the test ends, far past the poll's timeout, however busy the machine is.
                for await _ in release {}
                return .json(Self.payload)
            }
        ) { database, server in
            defer { releaseHeldPoll.finish() }
            let courier = NotificationCourier(
                transport: database.transport, url: server.url.appendingPathComponent("courier/abc"),
                pollTimeout: .milliseconds(200), quietPollSpacing: .zero)
            let outcome = try await courier.poll()
            #expect(outcome == .quiet)

            let channel = CloudKitNotificationChannel(
                apnsToken: "abc", webcourierURL: server.url.appendingPathComponent("courier/abc"),
                apnsEnvironment: .development)
            await #expect(
                throws: CloudDatabaseError.invalidArguments(
                    "a poll timeout of 0.0 seconds can't work: give one above zero and at most a day, such as the default 300 s"
                )
            ) {
                for try await _ in database.notifications(from: channel, pollTimeout: .zero) {}
            }
        }
    }

    @Test func aResponseWithoutANotificationURLIsAnError() async throws {
        _ = try await Harness.with(
            database: .private, authentication: .apiToken("api", webAuthToken: "token-1"),
            handler: { _ in .json(["apnsToken": "abc"]) }
        ) { database, _ in
            await #expect(
                throws: CloudDatabaseError.internalError(
                    "CloudKit's response to tokens/create has no webcourierURL to long-poll: none")
            ) {
                try await database.createNotificationChannel()
            }
        }
    }
}
