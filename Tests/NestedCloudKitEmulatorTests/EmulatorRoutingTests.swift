import Foundation
import Testing

@testable import NestedCloudKitEmulator

/// The router and its middleware: what every answer carries, the order the middleware run in (the Host first,
/// authentication before a fault), what the request log keeps, and a path no route answers.
@Suite struct EmulatorRoutingTests {
    typealias Session = EmulatorRouterHarness.Session

    @Test func aPathNoRouteAnswersIsA404InCloudKitsWordsWithWhatEveryAnswerCarries() async throws {
        let harness = EmulatorRouterHarness()
        let session = await Session(harness, user: "alice")
        let unknown = try await session.call("records/frobnicate", [:])
        #expect(unknown.status == 404)
        #expect(unknown.json["serverErrorCode"] as? String == "NOT_FOUND")
        let reason = try #require(unknown.json["reason"] as? String)
        #expect(reason.contains("/private/records/frobnicate") && reason.contains("FIDELITY.md"), "\(reason)")
        #expect(unknown.header("Access-Control-Allow-Origin") == "*")
        #expect(unknown.header("X-Content-Type-Options") == "nosniff")
        #expect(unknown.header("X-Apple-Request-UUID")?.count == 36)

        let deleted = try await harness.send(
            "DELETE", "/database/1/\(harness.container)/development/public/zones/list?ckAPIToken=t")
        #expect(deleted.status == 404)
        let listed = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/zones/list?ckAPIToken=t")
        #expect(listed.status == 200)

        let admin = try await harness.send("PUT", "/emulator/v1/health")
        #expect(admin.status == 404)
        #expect((admin.json["reason"] as? String)?.hasPrefix("no admin route PUT /emulator/v1/health: health,") == true)
        #expect(admin.header("Access-Control-Allow-Origin") == nil)

        let elsewhere = try await harness.send("GET", "/favicon.ico")
        #expect(elsewhere.status == 404)
        #expect(
            elsewhere.json["reason"] as? String
                == "no endpoint at /favicon.ico: CloudKit's paths start /database/1/CONTAINER/ENVIRONMENT/")
    }

    @Test func anAnswerToAUserCarriesTheirNextTokenEvenWhenTheRequestFails() async throws {
        let harness = EmulatorRouterHarness()
        let session = await Session(harness, user: "alice")
        let first = session.token
        let failed = try await session.call("records/lookup", [:])
        #expect(failed.status == 400)
        #expect(failed.json["reason"] as? String == "records/lookup needs records")
        let next = try #require(failed.header("X-Apple-CloudKit-Web-Auth-Token"))
        #expect(next != first)
        #expect(try await session.call("zones/list", [:]).status == 200)
    }

    @Test func theRequestLogKeepsWhoCalledWhatTheyGotAndNoToken() async throws {
        let harness = EmulatorRouterHarness()
        let session = await Session(harness, user: "alice")
        _ = try await session.call("records/lookup", [:])
        _ = try await harness.send("GET", "/emulator/courier/secret-token")
        let log = harness.state.log.all
        #expect(log.count == 2)
        let failed = try #require(log.first)
        #expect(failed.method == "POST")
        #expect(failed.path == "/database/1/\(harness.container)/development/private/records/lookup")
        #expect(failed.status == 400)
        #expect(failed.user == "alice")
        #expect(failed.serverErrorCode == "BAD_REQUEST")
        let poll = try #require(log.last)
        #expect(poll.path == "/emulator/courier/(token)")
        #expect(poll.status == 404)
        #expect(poll.user == nil)
        #expect(poll.serverErrorCode == "NOT_FOUND")
    }

    @Test func aFaultWaitsForAnAuthenticatedDatabaseRequest() async throws {
        let harness = EmulatorRouterHarness()
        _ = try harness.state.faults.add(EmulatorFault(serverErrorCode: "THROTTLED", retryAfter: 7))
        // Neither the admin API nor a request that fails authentication uses the fault up.
        #expect(try await harness.send("GET", "/emulator/v1/health").status == 200)
        let refused = try await harness.database("private", "zones/list", token: nil, json: [:])
        #expect(refused.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")

        let session = await Session(harness, user: "alice")
        let throttled = try await session.call("zones/list", [:])
        #expect(throttled.status == 429)
        #expect(throttled.json["serverErrorCode"] as? String == "THROTTLED")
        #expect(throttled.json["retryAfter"] as? Double == 7)
        #expect(try await session.call("zones/list", [:]).status == 200)
    }

    @Test func aLostAnswerClosesTheConnectionAfterTheWriteTookEffect() async throws {
        let harness = EmulatorRouterHarness()
        _ = try harness.state.faults.add(EmulatorFault(path: "records/modify", loseResponse: true))
        let session = await Session(harness, user: "alice")
        let create: [String: Any] = [
            "operations": [["operationType": "create", "record": ["recordName": "kept", "recordType": "Note"]]]
        ]
        await #expect(throws: FaultMiddleware.LostResponse.self) {
            _ = try await session.call("records/modify", create)
        }
        let token = await harness.signIn(user: "alice")
        let looked = try await harness.database(
            "private", "records/lookup", token: token, json: ["records": [["recordName": "kept"]]])
        let record = try #require((looked.json["records"] as? [[String: Any]])?.first)
        #expect(record["recordType"] as? String == "Note")
    }

    /// The router skips empty path segments; so do the checks of a path, which would otherwise miss the route.
    @Test func aPathWithRepeatedSlashesIsCheckedAsTheRouteThatAnswersIt() async throws {
        let harness = EmulatorRouterHarness()
        _ = try await harness.send("GET", "/emulator//courier/secret-token")
        #expect(harness.state.log.all.last?.path == "/emulator/courier/(token)")
        let preflight = try await harness.send(
            "OPTIONS", "/emulator//v1/reset", headers: ["Origin": "http://evil.example"])
        #expect(preflight.status == 403)
        #expect(preflight.json["serverErrorCode"] as? String == "ACCESS_DENIED")
        let head = try await harness.send("HEAD", "/")
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test func aHostThatIsntTheEmulatorsIsRefusedBeforeAnyRouteOrPreflight() async throws {
        let harness = EmulatorRouterHarness()
        for (method, path) in [("OPTIONS", "/emulator/v1/reset"), ("GET", "/favicon.ico"), ("GET", "/")] {
            let answer = try await harness.send(method, path, headers: ["Host": "rebound.example:8123"])
            #expect(answer.status == 403, "\(method) \(path)")
            #expect(answer.json["serverErrorCode"] as? String == "ACCESS_DENIED", "\(method) \(path)")
        }
    }
}
