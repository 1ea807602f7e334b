import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitEmulator

/// The emulator runs next to the developer's browser: nothing without credentials reads or changes a user's data,
/// the admin API answers no other web origin, the Host header is checked, and hostile input gets a clear 4xx with
/// no file path in it.
@Suite(.stopsEmulators) struct EmulatorSecurityTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    typealias Session = EmulatorRouterHarness.Session

    /// Saves a record of alice's holding an asset, and answers the path of its download URL.
    func savePhoto(_ session: Session, bytes: Data) async throws -> String {
        let upload = try await session.call(
            "assets/upload", ["tokens": [["recordName": "photo", "recordType": "Photo", "fieldName": "image"]]])
        let url = try #require((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let uploadPath = try #require(URL(string: url)?.path)
        let posted = try await session.harness.send("POST", uploadPath, body: bytes)
        let singleFile = try #require(posted.json["singleFile"] as? [String: Any])
        let saved = try await session.call(
            "records/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "photo", "recordType": "Photo",
                            "fields": ["image": ["value": singleFile, "type": "ASSETID"]],
                        ],
                    ]
                ]
            ])
        #expect(saved.status == 200)
        let looked = try await session.call("records/lookup", ["records": [["recordName": "photo"]]])
        let record = try #require((looked.json["records"] as? [[String: Any]])?.first)
        let image = (record["fields"] as? [String: Any])?["image"] as? [String: Any]
        let download = try #require((image?["value"] as? [String: Any])?["downloadURL"] as? String)
        return String(download.dropFirst("http://\(EmulatorRouterHarness.host)".count))
            .replacingOccurrences(of: "${f}", with: "photo.jpg")
    }

    /// The token an unsigned download URL held before they were signed: the location in base64 JSON.
    func unsignedToken(user: String, recordName: String) throws -> String {
        let location = AssetsEndpoint.Location(
            key: DatabaseKey(
                container: "iCloud.com.example.HandlerTests", environment: .development, scope: .private, user: user),
            zoneName: "_defaultZone", recordName: recordName, field: "image", index: nil)
        return try JSONEncoder().encode(location).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    // MARK: Download URLs

    @Test func aDownloadURLServesItsAssetAndAForgedOneReadsNothingAndCreatesNothing() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(clock: VirtualCloudClock(start: Self.start)))
        let alice = await Session(harness, user: "alice")
        let bytes = Data("the photo's bytes".utf8)
        let path = try await savePhoto(alice, bytes: bytes)
        let served = try await harness.send("GET", path)
        #expect(served.status == 200)
        #expect(served.body == bytes)

        // The location a token names, written without the emulator's key: alice's own record, and bob's.
        let databasesBefore = await harness.state.registry.keys()
        for user in ["alice", "bob"] {
            let forged = try await harness.send(
                "GET", "/emulator/download/\(try unsignedToken(user: user, recordName: "photo"))/photo.jpg")
            #expect(forged.status == 404)
            #expect(forged.json["serverErrorCode"] as? String == "NOT_FOUND")
            #expect(forged.body != bytes)
        }
        #expect(await harness.state.registry.keys() == databasesBefore)

        // A signed token changed by one character, in its payload or in its signature.
        let token = try #require(path.split(separator: "/").dropFirst(2).first.map(String.init))
        // (Not the last character, whose low bits may be base64's padding.)
        for index in [token.startIndex, token.index(token.endIndex, offsetBy: -5)] {
            var tampered = token
            tampered.replaceSubrange(index...index, with: tampered[index] == "A" ? "B" : "A")
            let answer = try await harness.send("GET", "/emulator/download/\(tampered)/photo.jpg")
            #expect(answer.status == 404)
        }
    }

    @Test func aDownloadURLExpiresWithTheEmulatorsClock() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(clock: VirtualCloudClock(start: Self.start)))
        let alice = await Session(harness, user: "alice")
        let path = try await savePhoto(alice, bytes: Data("bytes".utf8))
        harness.state.clock.advance(by: 59 * 60)
        #expect(try await harness.send("GET", path).status == 200)
        harness.state.clock.advance(by: 2 * 3600)
        let expired = try await harness.send("GET", path)
        #expect(expired.status == 404)
        #expect(
            expired.json["reason"] as? String
                == "no asset at this download URL: it is unknown or expired; fetch the record again for a new downloadURL"
        )
    }

    // MARK: The admin API and other origins

    @Test func theAdminAPIRefusesARequestFromAnotherWebOrigin() async throws {
        let harness = EmulatorRouterHarness()
        for headers in [
            ["Origin": "https://evil.example"], ["Origin": "http://localhost:3000"], ["Origin": "null"],
            ["Sec-Fetch-Site": "cross-site"], ["Sec-Fetch-Site": "same-site"],
        ] {
            for (method, path) in [("POST", "/emulator/v1/reset"), ("GET", "/emulator/v1/export")] {
                let answer = try await harness.send(method, path, headers: headers, json: [:])
                #expect(answer.status == 403, "\(method) \(path) \(headers)")
                #expect(answer.json["serverErrorCode"] as? String == "ACCESS_DENIED")
                #expect(answer.json["uuid"] is String)
                #expect(
                    (answer.json["reason"] as? String)?.hasPrefix(
                        "the admin API answers only the emulator's own pages (http://127.0.0.1:8123)") == true,
                    "\(answer.json)")
                #expect(answer.header("Access-Control-Allow-Origin") == nil)
            }
        }
        let sameOrigin = try await harness.send(
            "POST", "/emulator/v1/reset",
            headers: ["Origin": "http://127.0.0.1:8123", "Sec-Fetch-Site": "same-origin"],
            json: [:])
        #expect(sameOrigin.status == 200)
        #expect(try await harness.send("GET", "/emulator/v1/health").status == 200)
    }

    @Test func corsIsOnCloudKitsPathsAndNotOnTheAdminAPIOrThePages() async throws {
        let harness = EmulatorRouterHarness()
        let cloudKit = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/zones/list?ckAPIToken=t")
        #expect(cloudKit.status == 200)
        #expect(cloudKit.header("Access-Control-Allow-Origin") == "*")
        #expect(cloudKit.header("Access-Control-Expose-Headers")?.contains("X-Apple-CloudKit-Web-Auth-Token") == true)
        let preflight = try await harness.send(
            "OPTIONS", "/database/1/\(harness.container)/development/public/records/query",
            headers: ["Origin": "http://localhost:3000"])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        for path in ["/emulator/v1/health", "/", "/emulator/sign-in"] {
            let answer = try await harness.send("GET", path)
            #expect(answer.status == 200, "\(path)")
            #expect(answer.header("Access-Control-Allow-Origin") == nil, "\(path)")
        }
        #expect(try await harness.send("GET", "/").header("X-Frame-Options") == "DENY")
    }

    @Test func anAdminTokenIsNeededOnEveryAdminCallWhenOneIsSet() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(adminToken: "s3cret-admin"))
        for headers in [[:], ["Authorization": "Bearer wrong"], ["Authorization": "s3cret-admin"]] {
            for (method, path) in [("GET", "/emulator/v1/health"), ("POST", "/emulator/v1/sign-in")] {
                let answer = try await harness.send(method, path, headers: headers, json: ["user": "alice"])
                #expect(answer.status == 401, "\(method) \(path) \(headers)")
                #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
                #expect(
                    answer.json["reason"] as? String
                        == "the admin API needs the emulator's admin token: send Authorization: Bearer TOKEN (the dashboard: open http://127.0.0.1:8123/#admin-token=TOKEN)"
                )
            }
        }
        let authorized = ["Authorization": "Bearer s3cret-admin"]
        #expect(try await harness.send("GET", "/emulator/v1/health", headers: authorized).status == 200)
        let signIn = try await harness.send(
            "POST", "/emulator/v1/sign-in", headers: authorized, json: ["user": "alice"])
        #expect(signIn.status == 200)
        // The dashboard page itself needs no token: it asks for one, or reads it from its URL's fragment.
        let dashboard = try await harness.send("GET", "/")
        #expect(dashboard.status == 200)
        #expect(dashboard.text.contains("admin-token="))
        // CloudKit's own paths don't take the admin token: they have CloudKit's credentials.
        let cloudKit = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/zones/list?ckAPIToken=t")
        #expect(cloudKit.status == 200)
    }

    // MARK: The Host header

    @Test func aRequestWhoseHostIsntTheEmulatorIsRefusedAndNoURLIsBuiltFromIt() async throws {
        let harness = EmulatorRouterHarness()
        for host in [
            "evil.example:8123", "127.0.0.1:9999", "localhost", "localhost.evil.example:8123", "127.0.0.2:8123",
        ] {
            for path in [
                "/emulator/v1/health",
                "/database/1/\(harness.container)/development/private/users/current?ckAPIToken=t", "/",
            ] {
                let answer = try await harness.send("GET", path, headers: ["Host": host])
                #expect(answer.status == 403, "\(host) \(path)")
                #expect(answer.json["serverErrorCode"] as? String == "ACCESS_DENIED", "\(host) \(path)")
                #expect(
                    answer.json["reason"] as? String
                        == "this emulator answers requests for 127.0.0.1:8123, localhost:8123 or [::1]:8123, not \(host): reach it by one of those names (a page on another name may be a DNS-rebinding attack)"
                )
                #expect(!answer.text.contains("redirectURL"))
            }
        }
        for host in ["127.0.0.1:8123", "localhost:8123", "LOCALHOST:8123", "[::1]:8123"] {
            let answer = try await harness.send(
                "GET", "/database/1/\(harness.container)/development/private/users/current?ckAPIToken=t",
                headers: ["Host": host])
            #expect(answer.status == 421, "\(host)")
            #expect(answer.json["redirectURL"] as? String == "http://\(host.lowercased())/emulator/sign-in")
        }
    }

    @Test func anEmulatorBoundToAnotherAddressAlsoAnswersThatHost() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(host: "192.168.1.20"))
        #expect(
            try await harness.send("GET", "/emulator/v1/health", headers: ["Host": "192.168.1.20:8123"]).status == 200)
        #expect(
            try await harness.send("GET", "/emulator/v1/health", headers: ["Host": "192.168.1.21:8123"]).status == 403)
    }

    // MARK: The sign-in page

    @Test func theSignInPageRefusesAReturnURLOnAnOriginThatIsntAllowed() async throws {
        let harness = EmulatorRouterHarness(EmulatorConfiguration(allowedOrigins: ["https://dev.example.com:8443"]))
        for returnURL in [
            "javascript:alert(document.domain)", "https://evil.example/callback", "data:text/html,hi",
            "//evil.example/callback", "http://localhost.evil.example/", "https://dev.example.com/other-port",
        ] {
            let query = returnURL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? returnURL
            let page = try await harness.send("GET", "/emulator/sign-in?returnURL=\(query)")
            #expect(page.status == 400, "\(returnURL)")
            #expect(
                page.text.contains(
                    "returnURL must be an http or https URL on an allowed origin: loopback (localhost, 127.0.0.1, [::1]) or one given with --allowed-origin"
                ), "\(returnURL)")
            let posted = try await harness.send(
                "POST", "/emulator/sign-in", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data("user=alice&returnURL=\(query)".utf8))
            #expect(posted.status == 400, "\(returnURL)")
            #expect(!posted.text.contains("emu__"), "\(returnURL): the page holds a token")
        }
        for returnURL in ["http://localhost:3000/app", "https://127.0.0.1:5173/", "https://dev.example.com:8443/app"] {
            let query = returnURL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? returnURL
            #expect(try await harness.send("GET", "/emulator/sign-in?returnURL=\(query)").status == 200, "\(returnURL)")
        }
    }

    @Test func theSignInPagePostsTheTokenToTheOpenersOriginOnly() async throws {
        let harness = EmulatorRouterHarness()
        // CloudKit JS opens the page in a popup from its own page: the Referer names its origin.
        let form = try await harness.send(
            "GET", "/emulator/sign-in", headers: ["Referer": "http://localhost:3000/notes/index.html"])
        #expect(form.status == 200)
        #expect(form.text.contains("name=\"origin\" value=\"http://localhost:3000\""))
        let posted = try await harness.send(
            "POST", "/emulator/sign-in",
            headers: ["Origin": "http://127.0.0.1:8123", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user=alice&returnURL=&origin=http%3A%2F%2Flocalhost%3A3000".utf8))
        #expect(posted.status == 200)
        #expect(posted.text.contains("const targetOrigin = \"http://localhost:3000\";"))
        #expect(
            posted.text.contains("window.opener.postMessage({ ckSession: token, ckWebAuthToken: token }, targetOrigin)")
        )
        #expect(!posted.text.contains("\"*\""))

        // An opener on another origin gets nothing: the page shows the token to copy instead.
        let foreign = try await harness.send(
            "GET", "/emulator/sign-in", headers: ["Referer": "https://evil.example/"])
        #expect(!foreign.text.contains("evil.example"))
        let forged = try await harness.send(
            "POST", "/emulator/sign-in", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user=alice&origin=https%3A%2F%2Fevil.example".utf8))
        #expect(forged.status == 400)
        // A form posted from another origin's page is refused before it signs anyone in.
        let crossSite = try await harness.send(
            "POST", "/emulator/sign-in",
            headers: ["Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user=alice".utf8))
        #expect(crossSite.status == 403)
    }

    // MARK: Oversized and hostile input

    @Test func aBodyOverTheLimitIsA413WithCloudKitsErrorDictionary() async throws {
        var configuration = EmulatorConfiguration()
        configuration.maximumRequestBodySize = 4096
        let http = EmulatorHTTP(emulator: try await CloudKitEmulator.start(configuration))
        let body = Data(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        let answer = try await http.send(
            "POST", "/database/1/\(http.container)/development/public/records/query?ckAPIToken=t", body: body)
        #expect(answer.status == 413)
        #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(answer.json["uuid"] is String)
        #expect(
            answer.json["reason"] as? String
                == "request too large: the body holds more than the 4096 bytes the emulator reads; split the request (CloudKit takes 200 operations and 1 MB a record), and send large values as assets"
        )
        #expect(answer.header("Access-Control-Allow-Origin") == "*")
    }

    @Test func containerAndUserNamesAreCheckedAndNoErrorShowsAFilePath() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = EmulatorRouterHarness(EmulatorConfiguration(storage: .directory(directory.path)))
        let long = String(repeating: "c", count: 10_000)
        let containerReason =
            "the container identifier must be 1 to 200 ASCII letters, digits, '.', '-' and '_', starting with a letter or digit, as iCloud.com.example.App"
        for container in [long, "iCloud.com.example.App%2F..%2F..%2Fetc", "..", "iCloud%20com"] {
            let answer = try await harness.send(
                "GET", "/database/1/\(container)/development/public/zones/list?ckAPIToken=t")
            #expect(answer.status == 400, "\(container.prefix(40))")
            #expect(answer.json["reason"] as? String == containerReason, "\(container.prefix(40))")
            let admin = try await harness.send(
                "GET", "/emulator/v1/records?container=\(container)&scope=public")
            #expect(admin.status == 400)
            #expect(admin.json["reason"] as? String == containerReason)
        }
        let userReason =
            "a test user's name must be 1 to 64 ASCII letters, digits, '.', '-', '_', '@' and '+', starting with a letter or digit, as alice or alice@example.com"
        let admin = try await harness.send(
            "POST", "/emulator/v1/sign-in", json: ["user": String(repeating: "u", count: 10_000)])
        #expect(admin.status == 400)
        #expect(admin.json["reason"] as? String == userReason)
        // A token the Swift API issued for such a name: the database it would open is refused.
        let session = await Session(harness, user: "../" + long)
        let answer = try await session.call("zones/list", [:])
        #expect(answer.status == 400)
        #expect(answer.json["reason"] as? String == userReason)
        let page = try await harness.send(
            "POST", "/emulator/sign-in", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user=\(long)".utf8))
        #expect(page.status == 400)
        #expect(page.text.contains(userReason))
        for text in [answer.text, admin.text, page.text] {
            #expect(!text.contains(directory.path))
            #expect(!text.contains(".sqlite"))
        }
        // Nothing was made for any of them.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] == [])
        await harness.close()
    }

    @Test func aStorageErrorNamesNoFilePath() async throws {
        // A data directory that is a file: every database under it fails to open.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nckc-not-a-directory-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let harness = EmulatorRouterHarness(EmulatorConfiguration(storage: .directory(file.path)))
        let answer = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/zones/list?ckAPIToken=t")
        #expect(answer.status == 500)
        #expect(answer.json["serverErrorCode"] as? String == "INTERNAL_ERROR")
        let reason = try #require(answer.json["reason"] as? String)
        #expect(
            reason.hasPrefix(
                "couldn't open the database \(harness.container)/development/public under the data directory"))
        #expect(!reason.contains(file.path))
        #expect(!reason.contains(FileManager.default.temporaryDirectory.path))
        let schema = try await harness.send(
            "POST", "/emulator/v1/schema?container=\(harness.container)", body: Data("DEFINE SCHEMA".utf8))
        #expect(schema.status == 500)
        #expect(!schema.text.contains(file.path))
        await harness.close()
    }

    @Test func aDamagedSubscriptionsFileIsAnErrorNotAnEmptySet() async throws {
        let (harness, directory, damaged) = try Self.dataDirectory(
            holding: "public.sqlite.subscriptions.json", Data("{\"zone-changes\": ".utf8))
        defer { try? FileManager.default.removeItem(at: directory) }
        let answer = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/subscriptions/list?ckAPIToken=t")
        #expect(answer.status == 500)
        #expect(answer.json["serverErrorCode"] as? String == "INTERNAL_ERROR")
        let reason = try #require(answer.json["reason"] as? String)
        #expect(
            reason.hasPrefix(
                "the subscriptions of the database \(harness.container)/development/public can't be read ("))
        #expect(
            reason.hasSuffix(
                "move its public.sqlite.subscriptions.json file aside to open it without them, or put back a good copy")
        )
        #expect(!reason.contains(directory.path))
        // Nothing was written over it.
        #expect(try Data(contentsOf: damaged) == Data("{\"zone-changes\": ".utf8))
        await harness.close()
    }

    /// A subscription the file holds but the emulator can't read (here a filter on an unknown comparator) makes the
    /// file damaged: matched without its filter, it would fire on every record of its type.
    @Test func aSubscriptionThatCantBeReadMakesItsFileDamaged() async throws {
        let file = Data(
            #"""
            {"broad": {"owner": "alice", "subscription": {"subscriptionID": "broad", "subscriptionType": "query",
              "firesOn": ["create"], "zoneWide": true, "query": {"recordType": "Note",
              "filterBy": [{"comparator": "RESEMBLES", "fieldName": "title", "fieldValue": {"value": "a"}}]}}}}
            """#.utf8)
        let (harness, directory, damaged) = try Self.dataDirectory(holding: "public.sqlite.subscriptions.json", file)
        defer { try? FileManager.default.removeItem(at: directory) }
        let answer = try await harness.send(
            "GET", "/database/1/\(harness.container)/development/public/subscriptions/list?ckAPIToken=t")
        #expect(answer.status == 500)
        let reason = try #require(answer.json["reason"] as? String)
        #expect(reason.contains("can't be read (subscription broad can't be read: "))
        #expect(reason.contains("RESEMBLES"))
        #expect(try Data(contentsOf: damaged) == file)
        await harness.close()
    }

    @Test func aDamagedSchemaFileIsAnErrorNotAnEmptySchema() async throws {
        let (harness, directory, damaged) = try Self.dataDirectory(holding: "schema.ckdb", Data([0xFF, 0xFE, 0x00]))
        defer { try? FileManager.default.removeItem(at: directory) }
        let answer = try await harness.send("GET", "/emulator/v1/schema?container=\(harness.container)")
        #expect(answer.status == 500)
        #expect(answer.json["serverErrorCode"] as? String == "INTERNAL_ERROR")
        let reason = try #require(answer.json["reason"] as? String)
        #expect(reason.hasPrefix("the schema of \(harness.container) in development can't be read ("))
        #expect(!reason.contains(directory.path))
        // A save that would grow the schema is refused too, and leaves the file as it was.
        let alice = await EmulatorRouterHarness.Session(harness, user: "alice")
        let save = try await alice.call(
            "records/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordType": "Note", "recordName": "n",
                            "fields": ["title": ["value": "a", "type": "STRING"]],
                        ],
                    ]
                ]
            ])
        #expect(save.text.contains("the schema of \(harness.container) in development can't be read"))
        #expect(try Data(contentsOf: damaged) == Data([0xFF, 0xFE, 0x00]))
        await harness.close()
    }

    /// An emulator over a new data directory that already holds a file of the test container's development
    /// environment, as an earlier run (or a damaged disk) left it.
    private static func dataDirectory(holding name: String, _ contents: Data) throws -> (
        harness: EmulatorRouterHarness, directory: URL, file: URL
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-data-\(UUID().uuidString)")
        let harness = EmulatorRouterHarness(EmulatorConfiguration(storage: .directory(directory.path)))
        let folder = directory.appendingPathComponent(harness.container).appendingPathComponent("development")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(name)
        try contents.write(to: file)
        return (harness, directory, file)
    }
}
