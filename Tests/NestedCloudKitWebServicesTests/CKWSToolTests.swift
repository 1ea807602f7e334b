import CloudKitTestServer
import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import Testing
@testable import NestedCloudKitWebServices

/// The `ckws` command run as a user runs it, against the loopback server.
@Suite struct CKWSToolTests {
    typealias Harness = WebServicesHarness

    static func ckwsURL() throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map { $0.appendingPathComponent("ckws") }
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "ckws isn't built beside \(directory.path)")
    }

    /// Runs ckws with the test key in the environment; returns its exit status, standard output and error.
    static func run(_ arguments: [String], server: LoopbackCloudKitServer) async throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = try ckwsURL()
        process.arguments = arguments + ["--server-url", server.url.absoluteString]
        process.environment = [
            "CLOUDKIT_CONTAINER": Harness.container, "CLOUDKIT_KEY_ID": TestKeys.keyID, "CLOUDKIT_PRIVATE_KEY": TestKeys.privateKeyPEM,
        ]
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let (outputData, errorData) = await finish(process, output: output, error: error)
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
    }

    /// Reads the process's output to its end and waits for it to exit, off Swift's cooperative threads: the
    /// loopback server answering the process runs on them, and blocking them would stall it.
    static func finish(_ process: Process, output: Pipe, error: Pipe) async -> (Data, Data) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let errorRead = DispatchGroup()
                let errorData = NIOLockedValueBox(Data())
                DispatchQueue.global().async(group: errorRead) {
                    let data = error.fileHandleForReading.readDataToEndOfFile()
                    errorData.withLockedValue { $0 = data }
                }
                let outputData = output.fileHandleForReading.readDataToEndOfFile()
                errorRead.wait()
                process.waitUntilExit()
                continuation.resume(returning: (outputData, errorData.withLockedValue { $0 }))
            }
        }
    }

    static let handler: LoopbackCloudKitServer.Handler = { request in
        guard request.isSignedWithTestKey else { return .serverError(401, "AUTHENTICATION_FAILED") }
        switch request.endpoint {
        case "zones/list":
            return .json(["zones": [["zoneID": ["zoneName": "_defaultZone", "ownerRecordName": "_7c3f2a9d"]]]])
        case "records/lookup":
            return .json(["records": [
                Harness.serverRecord("ada", fields: [
                    "name": ["value": "Ada", "type": "STRING"],
                    "school": ["value": ["recordName": "s1", "action": "DELETE_SELF"], "type": "REFERENCE"],
                ]),
                ["recordName": "ghost", "serverErrorCode": "NOT_FOUND", "reason": "Record not found"],
            ]])
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
            #expect(lookup.output == """
                Student "ada"  (change tag tag-1)
                ├─ name: "Ada"
                └─ school → "s1" (not loaded)  [DELETE_SELF]

                """)
            #expect(lookup.error == "ghost: The record ghost doesn't exist\n")

            let query = try await Self.run(["query", "Student", "--filter", "grade=3", "--sort", "name", "--limit", "5"], server: server)
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
            return .json(["zones": [["zoneID": ["zoneName": "Schools"]]]], headers: ["X-Apple-CloudKit-Web-Auth-Token": "web-2"])
        }) { server in
            let result = try await Self.run(
                ["zones", "--database", "private", "--api-token", "api", "--web-auth-token-file", tokenFile.path], server: server
            )
            #expect(result.status == 0)
            #expect(result.output == "Schools\n")
            #expect(try String(contentsOf: tokenFile, encoding: .utf8) == "web-2")
            #expect(!result.output.contains("web-") && !result.error.contains("web-"))
        }
    }

    @Test func missingCredentialsAreExplained() async throws {
        try await LoopbackCloudKitServer.with(Self.handler) { server in
            let process = Process()
            process.executableURL = try Self.ckwsURL()
            process.arguments = ["zones", "--container", "iCloud.a", "--server-url", server.url.absoluteString]
            process.environment = [:]
            let output = Pipe()
            let error = Pipe()
            process.standardError = error
            process.standardOutput = output
            try process.run()
            let text = String(decoding: await Self.finish(process, output: output, error: error).1, as: UTF8.self)
            #expect(process.terminationStatus != 0)
            #expect(text.contains("Give a server-to-server key (--key-id and --key-file) or an API token (--api-token)."))
            #expect(server.requests.isEmpty)
        }
    }
}
