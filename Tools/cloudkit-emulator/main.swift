import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import ServiceLifecycle

/// `swift run cloudkit-emulator`: CloudKit Web Services on loopback, until interrupted.
@main
struct CloudKitEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudkit-emulator",
        abstract: "CloudKit Web Services on loopback, for development, tests and CI.",
        discussion: """
            Prints 'CloudKit emulator listening on http://127.0.0.1:PORT' once ready, serves until SIGINT or \
            SIGTERM, then closes its databases. The admin API is under /emulator/v1/, the dashboard at /. Requests \
            must name 127.0.0.1, localhost or [::1] with the port in their Host header, and the admin API answers \
            no web page of another origin.
            """
    )

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    @Option(help: "A directory for the SQLite databases; what was acknowledged survives a crash.")
    var data: String?

    @Flag(help: "Keep everything in memory (the default without --data).")
    var inMemory = false

    @Option(name: .customLong("server-key"), help: "KEY_ID=PUBLIC_KEY.pem: a server-to-server key. Repeatable.")
    var serverKeys: [String] = []

    @Option(name: .customLong("api-token"), help: "An API token to accept (any, without one). Repeatable.")
    var apiTokens: [String] = []

    @Option(
        help: """
            development or production: production keeps to an imported schema. Development by default; \
            production with --schema.
            """)
    var environment: EmulatorEnvironment?

    @Option(
        help: ArgumentHelp(
            "A schema file (cktool export-schema's text) every container starts with; production by default.",
            discussion: """
                Export production's schema (cktool export-schema --environment production), or write the models' \
                with CloudSchema(models:).text, and the emulator refuses what production would: records of types \
                and fields the schema lacks, values of another type, queries on fields without the index.
                """),
        completion: .file(extensions: ["ckdb"]))
    var schema: String?

    @Option(help: "Seconds a notification poll waits before an empty answer.")
    var notificationPollTimeout = 25

    @Option(
        help: ArgumentHelp(
            "A token every admin API call (/emulator/v1/) must send as 'Authorization: Bearer TOKEN'.",
            discussion: """
                Or set CLOUDKIT_EMULATOR_ADMIN_TOKEN, which other users of the machine can't read in the process \
                list. The dashboard takes it from its address: http://127.0.0.1:PORT/#admin-token=TOKEN.
                """))
    var adminToken: String?

    @Option(
        name: .customLong("allowed-origin"),
        help: """
            A web origin (https://dev.example.com:8443) the sign-in page may hand web auth tokens to, besides \
            loopback ones. Repeatable.
            """)
    var allowedOrigins: [String] = []

    @Flag(help: "Keep the admin API's reads (such as the dashboard's polling) in the request log too.")
    var logAdminReads = false

    @Flag(
        help: """
            Make a web auth token single-use, as Apple's reference documents; by default a used token keeps \
            working, as live CloudKit behaves (FIDELITY.md).
            """)
    var singleUseWebAuthTokens = false

    @Flag(help: "Print FIDELITY.md, as the emulator reports its fidelity, and exit.")
    var printFidelity = false

    func validate() throws {
        if data != nil && inMemory { throw ValidationError("--data and --in-memory exclude each other") }
        if !(0...65535).contains(port) { throw ValidationError("--port takes 0 to 65535") }
        if adminToken?.isEmpty == true { throw ValidationError("--admin-token needs a token; leave it out for none") }
        for origin in allowedOrigins {
            guard let url = URLComponents(string: origin), ["http", "https"].contains(url.scheme ?? ""),
                url.host?.isEmpty == false, url.path.isEmpty || url.path == "/", url.query == nil
            else {
                throw ValidationError(
                    "--allowed-origin takes an origin, scheme://host[:port] (https://dev.example.com:8443), got \(origin)"
                )
            }
        }
    }

    func run() async throws {
        if printFidelity {
            print(FidelityDocument.markdown, terminator: "")
            return
        }
        let environmentToken = ProcessInfo.processInfo.environment["CLOUDKIT_EMULATOR_ADMIN_TOKEN"]
        var configuration = EmulatorConfiguration(
            port: port, storage: data.map { .directory($0) } ?? .inMemory, apiTokens: Set(apiTokens),
            environment: environment, schema: try schema.map(Self.readSchema),
            notificationPollTimeout: .seconds(notificationPollTimeout),
            adminToken: adminToken ?? environmentToken.flatMap { $0.isEmpty ? nil : $0 },
            allowedOrigins: allowedOrigins, logsAdminReads: logAdminReads,
            webAuthTokens: singleUseWebAuthTokens ? .singleUse : .reusable)
        for entry in serverKeys {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw ValidationError("--server-key takes KEY_ID=PUBLIC_KEY.pem, got \(entry)")
            }
            let pem: String
            do {
                pem = try String(contentsOfFile: parts[1], encoding: .utf8)
            } catch {
                throw ValidationError("can't read the public key \(parts[1]): \(error.localizedDescription)")
            }
            do {
                try configuration.addServerKey(id: parts[0], pem: pem)
            } catch {
                throw ValidationError("\(parts[1]) isn't a P-256 public key in PEM (openssl ec -pubout): \(error)")
            }
        }
        let emulator = CloudKitEmulator(configuration: configuration)
        let service = EmulatorService(emulator: emulator)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: .init(label: "cloudkit-emulator")))
        try await group.run()
    }
}

extension CloudKitEmulatorCommand {
    /// The schema file's schema, or the reason it has none, with the line.
    static func readSchema(_ path: String) throws -> CloudSchema {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("can't read the schema \(path): \(error.localizedDescription)")
        }
        do {
            return try CloudSchema(parsing: text)
        } catch {
            throw ValidationError("\(path) isn't a schema: \(error)")
        }
    }
}

/// Runs the emulator under the service group, announcing the address once it listens.
struct EmulatorService: Service {
    let emulator: CloudKitEmulator

    func run() async throws {
        try await emulator.run { url in
            // Written straight to the file descriptor: scripts read this line through a pipe or a file, where
            // `print`'s output would wait in a buffer.
            FileHandle.standardOutput.write(Data("CloudKit emulator listening on \(url.absoluteString)\n".utf8))
        }
    }
}

extension EmulatorEnvironment: ExpressibleByArgument {}
