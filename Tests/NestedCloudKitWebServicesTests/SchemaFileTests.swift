import AsyncHTTPClient
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// The schema of every example's and the benchmarks' models, as each prints it (`--print-schema`): it reads back,
/// and the emulator, started on it with `--schema`, serves production on it and exports it unchanged.
@Suite("Schema files of the examples and benchmarks", .timeLimit(.minutes(2)))
struct SchemaFileTests {
    @Test(arguments: [
        ("Example", ["Book", "Person", "School"]),
        ("SyncExample", ["Item", "ShoppingList"]),
        ("SharingExample", ["Item", "ShoppingList"]),
        (
            "Benchmarks",
            // The mapped models write the records of the plain ones, and agree on every field's type.
            ["Campus", "Flat", "StoreFile", "StoreFolder", "StoreNote", "Student", "TreeNode", "Volume"]
        ),
    ])
    func theModelsSchemaReadsBackAndTheEmulatorServesIt(tool: String, recordTypes: [String]) async throws {
        let (status, text, errors) = try await Self.run(tool, ["--print-schema"])
        #expect(status == 0, "\(errors)")
        let schema = try CloudSchema(parsing: text)
        #expect(schema.recordTypes.keys.sorted() == (recordTypes + ["Users"]).sorted())
        #expect(schema.text == text)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(tool)-\(UUID()).ckdb")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let emulator = try await EmulatorProcess.start(["--schema", file.path])
        do {
            let container = "iCloud.com.example.\(tool)"
            let exported = try await Self.get(emulator.url, "emulator/v1/schema?container=\(container)")
            #expect(exported.status == 200)
            #expect(exported.body == text)
            let health = try await Self.get(emulator.url, "emulator/v1/health")
            #expect(health.body.contains("\"environment\":\"production\""), "\(health.body)")
        } catch {
            await emulator.terminate()
            throw error
        }
        await emulator.terminate()
    }

    @Test func aSchemaFileThatIsntOneStopsTheEmulatorWithItsLine() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID()).ckdb")
        try "DEFINE SCHEMA\n  RECORD TYPE Note (\n    title STRNG\n  );\n".write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, _, errors) = try await Self.run("cloudkit-emulator", ["--schema", file.path, "--port", "0"])
        #expect(status != 0)
        #expect(errors.contains("isn't a schema: expected a field type"), "\(errors)")
        #expect(errors.contains("line 3"), "\(errors)")
        let missing = try await Self.run("cloudkit-emulator", ["--schema", "/nonexistent/schema.ckdb", "--port", "0"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("can't read the schema /nonexistent/schema.ckdb"), "\(missing.error)")
    }

    /// A GET of the emulator's admin API.
    static func get(_ base: URL, _ path: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: base.appendingPathComponent("").absoluteString + path), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, String(buffer: body))
    }

    /// Runs one of the package's executables to its end.
    static func run(_ tool: String, _ arguments: [String]) async throws -> (
        status: Int32, output: String, error: String
    ) {
        let result = try await ChildProcess.run(try CKWSToolTests.toolURL(tool), arguments: arguments)
        return (result.termination.exitStatus ?? -1, result.output, result.error)
    }
}
