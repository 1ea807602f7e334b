import CloudKitTestServer
import Crypto
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import Testing

@testable import NestedCloudKitWebServices

/// The client against the emulator, over HTTP: what only a server that checks what it is sent can show (a
/// signature verified, a token refused when reused, a sign-in asked for). The tests with crafted responses stay on
/// the loopback server, which answers what no well-behaved server would.
@Suite("Web Services client against the emulator")
struct EmulatorClientTests {
    typealias Harness = EmulatorHarness

    static func student(_ name: String, grade: Int64) -> CloudRecord {
        CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: name),
            fields: ["name": .string(name), "grade": .int64(grade)])
    }

    @Test func theClientsSignaturesAreVerifiedAndAnotherKeysAreRefused() async throws {
        try await Harness.with { emulator in
            let database = try Harness.publicDatabase(emulator)
            _ = try await database.modifyRecords(
                saving: [Self.student("ada", grade: 3), Self.student("bob", grade: 4)], deleting: [])
            let fetched = try await database.record(for: CloudRecord.ID(recordName: "ada"))
            #expect(fetched.fields == Self.student("ada", grade: 3).fields)
            let page = try await database.records(
                matching: CloudQuery(recordType: "Student", predicate: .equals(field: "grade", value: .int64(4))))
            #expect(page.matchResults.map(\.0.recordName) == ["bob"])

            // The same key ID, another private key: the emulator's check of the signature refuses it.
            let impostor = try ServerToServerKey(
                keyID: TestKeys.keyID, pemRepresentation: P256.Signing.PrivateKey().pemRepresentation)
            let refused = try Harness.publicDatabase(emulator, key: impostor)
            let error = await #expect(throws: CloudDatabaseError.self) {
                try await refused.record(for: CloudRecord.ID(recordName: "ada"))
            }
            guard case .permissionFailure(let reason) = (error)?.kind else {
                Issue.record("expected permissionFailure, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("check the key ID"))
        }
    }

    @Test func concurrentRequestsOfOneUserEachUseTheTokenThePreviousAnswerGave() async throws {
        // The emulator refuses a web auth token used twice: twenty requests at once succeed only if the client
        // sends them one token at a time.
        try await Harness.with { emulator in
            let database = try await Harness.privateDatabase(emulator, user: "ada")
            let first = await database.webAuthToken
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        _ = try await database.save(Self.student("s\(index)", grade: Int64(index)))
                    }
                }
                try await group.waitForAll()
            }
            #expect(await database.webAuthToken != first)
            let page = try await database.records(
                matching: CloudQuery(recordType: "Student"), inZoneWith: .default, desiredKeys: [], resultsLimit: 200)
            #expect(page.matchResults.count == 20)
        }
    }

    @Test func withoutASignedInUserTheAccountIsMissingAndTheSignInPageIsNamed() async throws {
        try await Harness.with { emulator in
            let anonymous = try Harness.anonymousDatabase(emulator)
            #expect(try await anonymous.accountStatus() == .noAccount)
            let signIn = try #require(anonymous.signInURL)
            #expect(signIn.absoluteString.hasPrefix(emulator.url.absoluteString + "/emulator/sign-in"))

            let signedIn = try await Harness.privateDatabase(emulator, user: "ada")
            #expect(try await signedIn.accountStatus() == .available)
            #expect(try await signedIn.userRecordName() == CloudKitEmulator.userRecordName(for: "ada"))
        }
    }

    @Test func ckwsPrintsWhatTheEmulatorHolds() async throws {
        try await Harness.with { emulator in
            let database = try Harness.publicDatabase(emulator)
            _ = try await database.modifyRecords(
                saving: [Self.student("ada", grade: 3), Self.student("bob", grade: 4)], deleting: [])

            let zones = try await CKWSToolTests.run(["zones"], serverURL: emulator.url)
            #expect(zones.status == 0)
            #expect(zones.output == "_defaultZone\n")
            let query = try await CKWSToolTests.run(
                ["query", "Student", "--filter", "grade=4", "--sort", "name"], serverURL: emulator.url)
            #expect(query.status == 0, "\(query.error)")
            let lines = query.output.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("Student \"bob\"  (change tag ") == true)
            #expect(lines.dropFirst() == ["├─ grade: 4", "└─ name: \"bob\""])
            let lookup = try await CKWSToolTests.run(["lookup", "ghost"], serverURL: emulator.url)
            #expect(lookup.status == 1)
            #expect(lookup.error.hasPrefix("ghost: "))
        }
    }
}
