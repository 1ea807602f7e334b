import Crypto
import Foundation
import Testing

@testable import NestedCloudKitEmulator

/// Requests shaped as brightdigit/MistKit, a CloudKit Web Services client of its own, sends them: what it found
/// the emulator refusing where CloudKit answers (a create without a record name, user discovery, a signed request
/// without a body).
@Suite struct EmulatorThirdPartyClientTests {
    private static let iso = Date.ISO8601FormatStyle()

    @Test func aCreateWithoutARecordNameGetsAUUIDThatTheAnswerCarries() async throws {
        let http = EmulatorRouterHarness()
        let alice = await EmulatorRouterHarness.Session(http, user: "alice")
        // MistKit's createRecord(recordType:fields:): no recordName.
        let created = try await alice.call(
            "records/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "record": ["recordType": "Note", "fields": ["title": ["value": "hi"]]],
                    ]
                ]
            ])
        #expect(created.status == 200, "\(created.text)")
        let record = try #require((created.json["records"] as? [[String: Any]])?.first)
        let name = try #require(record["recordName"] as? String)
        #expect(UUID(uuidString: name) != nil)
        #expect(record["recordChangeTag"] as? String != nil)
        let found = try await alice.call("records/lookup", ["records": [["recordName": name]]])
        let fetched = try #require((found.json["records"] as? [[String: Any]])?.first)
        #expect(((fetched["fields"] as? [String: Any])?["title"] as? [String: Any])?["value"] as? String == "hi")

        // Two creates without names in one request are two records.
        let two = try await alice.call(
            "records/modify",
            ["operations": Array(repeating: ["operationType": "create", "record": ["recordType": "Note"]], count: 2)])
        let names = Set(((two.json["records"] as? [[String: Any]]) ?? []).compactMap { $0["recordName"] as? String })
        #expect(names.count == 2)

        // Any other operation names the record it changes.
        let update = try await alice.call(
            "records/modify", ["operations": [["operationType": "forceUpdate", "record": ["recordType": "Note"]]]])
        #expect(update.status == 400)
        #expect((update.json["reason"] as? String)?.contains("only a create may leave it out") == true)
    }

    @Test func discoverableUsersAreFoundByEmailPhoneAndRecordNameAndOthersAreNot() async throws {
        let http = EmulatorRouterHarness()
        let signIn = try await http.send(
            "POST", "/emulator/v1/sign-in",
            json: [
                "user": "alice",
                "discoverable": [
                    "givenName": "Alice", "familyName": "Liddell", "emailAddress": "alice@example.com",
                    "phoneNumber": "+1 (555) 010-0001",
                ],
            ])
        #expect(signIn.status == 200, "\(signIn.text)")
        _ = await http.signIn(user: "bob")  // signed in, not discoverable
        let alice = try #require(signIn.json["userRecordName"] as? String)
        let carol = await EmulatorRouterHarness.Session(http, user: "carol")

        let discovered = try await carol.call(
            "users/discover",
            [
                "lookupInfos": [
                    ["emailAddress": "ALICE@example.com"], ["emailAddress": "bob@example.com"],
                    ["phoneNumber": "15550100001"], ["userRecordName": alice],
                    ["userRecordName": CloudKitEmulator.userRecordName(for: "bob")],
                ]
            ], scope: "public")
        #expect(discovered.status == 200, "\(discovered.text)")
        let users = try #require(discovered.json["users"] as? [[String: Any]])
        #expect(users.map { $0["userRecordName"] as? String } == [alice, alice, alice])
        #expect(
            users.map { ($0["lookupInfo"] as? [String: String])?.values.first } == [
                "ALICE@example.com", "15550100001", alice,
            ])
        #expect(users.first?["nameComponents"] as? [String: String] == ["givenName": "Alice", "familyName": "Liddell"])

        let byEmail = try await carol.call(
            "users/lookup/email",
            ["users": [["emailAddress": "alice@example.com"], ["emailAddress": "x@example.com"]]],
            scope: "public")
        let emailUsers = try #require(byEmail.json["users"] as? [[String: Any]])
        #expect(emailUsers.count == 1)
        #expect(emailUsers.first?["emailAddress"] as? String == "alice@example.com")
        #expect(emailUsers.first?["firstName"] as? String == "Alice")
        #expect(emailUsers.first?["lastName"] as? String == "Liddell")

        let byID = try await carol.call(
            "users/lookup/id",
            ["users": [["userRecordName": alice], ["userRecordName": CloudKitEmulator.userRecordName(for: "bob")]]],
            scope: "public")
        #expect((byID.json["users"] as? [[String: Any]])?.map { $0["userRecordName"] as? String } == [alice])

        // As live CloudKit answers: the public database only, a user only, and something to look up.
        let privately = try await carol.call("users/discover", ["lookupInfos": [["userRecordName": alice]]])
        #expect(privately.status == 400)
        #expect((privately.json["reason"] as? String)?.contains("database type 'privatedb'") == true)
        let empty = try await carol.call("users/discover", ["lookupInfos": []], scope: "public")
        #expect(empty.status == 400 && empty.json["serverErrorCode"] as? String == "BAD_REQUEST")
        let anonymous = try await http.database(
            "public", "users/discover", token: nil, json: ["lookupInfos": [["userRecordName": alice]]])
        #expect(anonymous.status == 421)

        // A reset forgets who was discoverable.
        _ = try await http.send("POST", "/emulator/v1/reset", json: [:])
        let again = await EmulatorRouterHarness.Session(http, user: "carol")
        let afterReset = try await again.call(
            "users/lookup/id", ["users": [["userRecordName": alice]]], scope: "public")
        #expect((afterReset.json["users"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func theSignInPageMakesAUserDiscoverableWhenAsked() async throws {
        let http = EmulatorRouterHarness()
        let form = "user=dana&discoverable=on&givenName=Dana&familyName=Scully&emailAddress=dana%40example.com"
        let posted = try await http.send(
            "POST", "/emulator/sign-in",
            headers: ["Origin": "http://127.0.0.1:8123", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data(form.utf8))
        #expect(posted.status == 200)
        #expect(
            http.state.users.identity(of: "dana")
                == EmulatorUserIdentity(
                    givenName: "Dana", familyName: "Scully", emailAddress: "dana@example.com"))
        let page = try await http.send("GET", "/emulator/sign-in")
        #expect(page.text.contains("name=\"discoverable\""))
        let unticked = try await http.send(
            "POST", "/emulator/sign-in",
            headers: ["Origin": "http://127.0.0.1:8123", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user=erin&givenName=Erin".utf8))
        #expect(unticked.status == 200)
        #expect(http.state.users.identity(of: "erin") == nil)
    }

    /// A GET signed as MistKit signs one, with an empty body hash (`DATE::SUBPATH`), and as clients that hash the
    /// empty body do: CloudKit takes both.
    @Test func aSignedRequestWithoutABodyVerifiesWithAnEmptyHashOrTheEmptyBodysHash() async throws {
        let key = P256.Signing.PrivateKey()
        let http = EmulatorRouterHarness(EmulatorConfiguration(serverKeys: ["mistkit-key": key.publicKey]))
        let path = "/database/1/\(http.container)/development/public/zones/list"
        func signed(bodyHash: String) async throws -> EmulatorRouterHarness.Answer {
            let date = Date().formatted(Self.iso)
            let signature = try key.signature(for: Data("\(date):\(bodyHash):\(path)".utf8))
            return try await http.send(
                "GET", path,
                headers: [
                    "X-Apple-CloudKit-Request-KeyID": "mistkit-key", "X-Apple-CloudKit-Request-ISO8601Date": date,
                    "X-Apple-CloudKit-Request-SignatureV1": signature.derRepresentation.base64EncodedString(),
                ])
        }
        let emptyField = try await signed(bodyHash: "")
        #expect(emptyField.status == 200, "\(emptyField.text)")
        #expect(try await signed(bodyHash: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=").status == 200)
        let wrong = try await signed(bodyHash: "bm90IHRoZSBoYXNo")
        #expect(wrong.status == 401 && wrong.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        // A body's hash is always its own: an empty field doesn't sign a request that has one.
        #expect(
            ServerToServerVerifier.bodyHashes(Data("{}".utf8)) == [
                Data(SHA256.hash(data: Data("{}".utf8))).base64EncodedString()
            ])
    }
}
