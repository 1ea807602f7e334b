import CloudKitTestServer
import Crypto
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

@Suite struct RequestSigningTests {
    @Test func theBodyHashIsTheBase64SHA256OfTheBody() {
        #expect(RequestSignature.bodyHash(Data("test".utf8)) == "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=")
        #expect(RequestSignature.bodyHash(Data()) == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
    }

    @Test func theDateIsISO8601InWholeSeconds() {
        #expect(RequestSignature.format(Date(timeIntervalSince1970: 1_453_760_143.789)) == "2016-01-25T22:15:43Z")
    }

    @Test func theSignatureOfDateBodyHashAndSubpathVerifiesWithThePublicKey() throws {
        let key = try TestKeys.serverToServerKey()
        let body = Data(#"{"records":[{"recordName":"ada"}]}"#.utf8)
        let subpath = "/database/1/iCloud.com.example.School/development/public/records/lookup"
        let signature = try RequestSignature(
            key: key, date: Date(timeIntervalSince1970: 1_453_760_143.5), body: body, subpath: subpath)
        #expect(signature.date == "2016-01-25T22:15:43Z")
        #expect(signature.keyID == TestKeys.keyID)
        let message = "2016-01-25T22:15:43Z:\(RequestSignature.bodyHash(body)):\(subpath)"
        let der = try #require(Data(base64Encoded: signature.signature))
        let ecdsa = try P256.Signing.ECDSASignature(derRepresentation: der)
        #expect(try TestKeys.publicKey().isValidSignature(ecdsa, for: Data(message.utf8)))
        #expect(try !TestKeys.publicKey().isValidSignature(ecdsa, for: Data((message + "x").utf8)))
        #expect(
            signature.headers.map(\.name) == [
                "X-Apple-CloudKit-Request-KeyID", "X-Apple-CloudKit-Request-ISO8601Date",
                "X-Apple-CloudKit-Request-SignatureV1",
            ])
    }

    @Test func keysLoadFromSEC1AndPKCS8PEM() throws {
        let sec1 = try TestKeys.serverToServerKey()
        #expect(sec1.publicKeyPEMRepresentation == TestKeys.publicKeyPEM)
        let pkcs8 = try ServerToServerKey(keyID: "k", pemRepresentation: P256.Signing.PrivateKey().pemRepresentation)
        #expect(pkcs8.keyID == "k")
    }

    @Test func keysLoadFromAFileAndSayWhyTheyDont() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("eckey.pem")
        try TestKeys.privateKeyPEM.write(to: file, atomically: true, encoding: .utf8)
        #expect(try ServerToServerKey(keyID: TestKeys.keyID, pemFile: file).keyID == TestKeys.keyID)

        #expect(throws: ServerToServerKey.LoadingError.noPrivateKey) {
            try ServerToServerKey(keyID: "k", pemRepresentation: TestKeys.publicKeyPEM)
        }
        #expect(throws: ServerToServerKey.LoadingError.emptyKeyID) {
            try ServerToServerKey(keyID: "", pemRepresentation: TestKeys.privateKeyPEM)
        }
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        #expect(throws: ServerToServerKey.LoadingError.notP256Key) {
            try ServerToServerKey(keyID: "k", pemRepresentation: p384)
        }
        do {
            _ = try ServerToServerKey(keyID: "k", pemFile: directory.appendingPathComponent("missing.pem"))
            Issue.record("a missing file loaded")
        } catch {
            guard error.code == .unreadableFile, let path = error.path else { Issue.record("\(error)"); return }
            #expect(path.hasSuffix("missing.pem"))
            #expect(error.underlyingError != nil)
        }
    }

    @Test func secretsStayOutOfDescriptionsAndDumps() throws {
        let key = try TestKeys.serverToServerKey()
        var dumped = ""
        dump(key, to: &dumped)
        let token = CloudKitWebServicesAuthentication.apiToken("api-secret", webAuthToken: "web-secret")
        dump(token, to: &dumped)
        let texts = [dumped, "\(key)", String(reflecting: key), "\(token)", String(reflecting: token)]
        for text in texts {
            #expect(!text.contains("api-secret") && !text.contains("web-secret") && !text.contains("MHcCAQEE"))
        }
        #expect("\(key)".contains(TestKeys.keyID))
    }

    @Test func configurationsThatCantWorkAreRefusedUpFront() throws {
        let key = try TestKeys.serverToServerKey()
        let privateWithKey = CloudKitWebServicesConfiguration(
            containerIdentifier: "iCloud.a", environment: .production, database: .private,
            authentication: .serverToServerKey(key)
        )
        #expect(throws: CloudDatabaseError.self) { try CloudKitWebServicesDatabase(configuration: privateWithKey) }
        let privateWithoutUser = CloudKitWebServicesConfiguration(
            containerIdentifier: "iCloud.a", environment: .production, database: .private,
            authentication: .apiToken("t", webAuthToken: nil)
        )
        #expect(throws: CloudDatabaseError.self) { try CloudKitWebServicesDatabase(configuration: privateWithoutUser) }
        #expect(privateWithKey.databasePath == "/database/1/iCloud.a/production/private")
    }
}
