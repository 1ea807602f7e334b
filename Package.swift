// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "NestedCloudKitCodable",
    // The releases of Observation (the store's observable objects), of SwiftData and of CKSyncEngine, which apps
    // that sync with CloudKit already require; every API the package uses exists there
    // (scripts/check-apple-availability proves it).
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "NestedCloudKitCodable", targets: ["NestedCloudKitCodable"]),
        .library(name: "NestedCloudKitServer", targets: ["NestedCloudKitServer"]),
        .library(name: "NestedCloudKitSQLite", targets: ["NestedCloudKitSQLite"]),
        .library(name: "NestedCloudKitWebServices", targets: ["NestedCloudKitWebServices"]),
        .library(name: "NestedCloudKitSync", targets: ["NestedCloudKitSync"]),
        .library(name: "NestedCloudKitEmulator", targets: ["NestedCloudKitEmulator"]),
        // @CloudRecord: only apps that import it build swift-syntax.
        .library(name: "NestedCloudKitMacros", targets: ["NestedCloudKitMacros"]),
        .executable(name: "ckws", targets: ["ckws"]),
        .executable(name: "cloudkit-emulator", targets: ["cloudkit-emulator"]),
        .executable(name: "Example", targets: ["Example"]),
        .executable(name: "SyncExample", targets: ["SyncExample"]),
        .executable(name: "SharingExample", targets: ["SharingExample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Both majors of swift-crypto serve us; accepting either keeps us out of users' version conflicts.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // AsyncHTTPClient's types are NIO's; the tests' loopback CloudKit server is built on NIO too.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The emulator's HTTP server, and the signals that stop it cleanly.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // `swift package generate-documentation` (scripts/build-docs.sh); a command plugin, so nothing of it links.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The macro's implementation; any of 600 through 603 serves, so apps keep the one their other macros need.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
    ],
    targets: [
        // The core depends on Foundation only, so it also ships through CocoaPods and Carthage.
        .target(name: "NestedCloudKitCodable"),
        // The rules every backend that keeps records applies to a change, a query and a share (the simulated server,
        // the SQLite database, the sync store, the emulator), Foundation only: `package` API and no product, so the
        // sync store applies them without linking a simulated server.
        .target(name: "NestedCloudKitRules", dependencies: ["NestedCloudKitCodable"]),
        // The simulated server, Foundation only: in memory, over a storage engine another module can supply (SQLite).
        // Apart from the core, so that an app links it only to test with it.
        .target(name: "NestedCloudKitServer", dependencies: ["NestedCloudKitCodable", "NestedCloudKitRules"]),
        // `@CloudRecord`, declared next to the core; its implementation is a compiler plugin of its own, which keeps
        // swift-syntax out of every other product (and lets SwiftPM use a prebuilt swift-syntax where it has one).
        .target(name: "NestedCloudKitMacros", dependencies: ["NestedCloudKitCodable", "NestedCloudKitMacrosPlugin"]),
        .macro(
            name: "NestedCloudKitMacrosPlugin",
            dependencies: [
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitMacrosTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitMacros", "NestedCloudKitMacrosPlugin",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "NestedCloudKitSQLite",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", "NestedCloudKitServer",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NestedCloudKitWebServices",
            dependencies: [
                "NestedCloudKitCodable",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Only to tell a refused connection from other failures, in words.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // A local store of models that syncs with any CloudDatabase: the rules, GRDB for the store, swift-log for its
        // log. No simulated server: an app that syncs links none.
        .target(
            name: "NestedCloudKitSync",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitSyncTests",
            dependencies: [
                // SyncCrashWriter and SyncExample only to have them built: the tests run them as processes (and
                // kill the writer).
                "NestedCloudKitCodable", "NestedCloudKitServer", "NestedCloudKitSync", "NestedCloudKitSQLite",
                "SyncCrashWriter", "SyncExample",
                // The device scenarios run against the emulator too, through the Web Services client.
                "NestedCloudKitEmulator", "NestedCloudKitWebServices", "BackendTestSupport", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // A store file written by the release before the app-database layout, which must open in this one.
            resources: [.copy("Fixtures")]
        ),
        // A process the sync tests start and kill at the moments a sync must survive.
        .executableTarget(
            name: "SyncCrashWriter",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitSQLite", "NestedCloudKitSync",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SyncCrashWriter"
        ),
        // CloudKit Web Services on loopback: the documented HTTP API over the SQLite or in-memory database.
        .target(
            name: "NestedCloudKitEmulator",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", "NestedCloudKitServer", "NestedCloudKitSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Asset files read off the cooperative pool; Hummingbird already builds it.
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ],
            // The dashboard's page, compiled in: no bundle to find at run time.
            resources: [.embedInCode("Dashboard/dashboard.html")]
        ),
        // The emulator as a program: swift run cloudkit-emulator --help.
        .executableTarget(
            name: "cloudkit-emulator",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitEmulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tools/cloudkit-emulator"
        ),
        // What the example and ckws share: printing records as trees.
        .target(
            name: "ToolSupport",
            dependencies: [
                "NestedCloudKitCodable", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/ToolSupport"
        ),
        // Looks at a container from a terminal: swift run ckws --help.
        .executableTarget(
            name: "ckws",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitWebServices", "ToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/ckws"
        ),
        .executableTarget(
            name: "Example",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitMacros", "NestedCloudKitServer", "NestedCloudKitSQLite",
                "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Example"
        ),
        // Two devices, one server, a conflict: swift run SyncExample.
        .executableTarget(
            name: "SyncExample",
            dependencies: [
                // The server's virtual clock: the example's timeline is the same on every run.
                "NestedCloudKitCodable", "NestedCloudKitMacros", "NestedCloudKitServer", "NestedCloudKitSQLite",
                "NestedCloudKitSync", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "SyncExample"
        ),
        // Alice shares a list with bob through Web Services and the emulator: swift run SharingExample.
        .executableTarget(
            name: "SharingExample",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitMacros", "NestedCloudKitServer", "NestedCloudKitSync",
                "NestedCloudKitWebServices", "NestedCloudKitEmulator", "ToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "SharingExample"
        ),
        // An app's code as a new Xcode 26 project compiles it: isolated to the main actor by default, with isolated
        // conformances inferred and nonisolated async functions running on their caller's actor. Its models are
        // declared plainly, as the README declares them, and go through every documented API.
        .testTarget(
            name: "AppTargetTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitServer", "NestedCloudKitSync", "NestedCloudKitMacros",
                "NestedCloudKitSQLite",
            ],
            swiftSettings: [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("InferIsolatedConformances"),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]
        ),
        // A test target per module, each with the products it tests; what they share is in TestSupport and
        // BackendTestSupport.
        .testTarget(
            name: "NestedCloudKitCodableTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitServer", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitServerTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", "NestedCloudKitServer", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitSQLiteTests",
            // SQLiteCrashWriter only to have it built: the tests run it as a process and kill it.
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", "NestedCloudKitServer", "NestedCloudKitSQLite",
                "SQLiteCrashWriter", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitEmulatorTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitEmulator", "NestedCloudKitServer", "BackendTestSupport",
                "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // CloudKit's semantics, checked once against every database backend (BackendTestSupport's DatabaseBackend.all).
        .testTarget(
            name: "NestedCloudKitConformanceTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitRules", "NestedCloudKitServer", "NestedCloudKitSQLite",
                "NestedCloudKitWebServices", "NestedCloudKitEmulator", "BackendTestSupport", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "NestedCloudKitWebServicesTests",
            dependencies: [
                // ckws, Benchmarks and the examples only to have them built: the tests run them as processes.
                "NestedCloudKitCodable", "NestedCloudKitWebServices", "ckws", "Benchmarks", "CloudKitTestServer",
                "Example", "SyncExample", "SharingExample",
                // The round trips run against the emulator, in process and (for the kill -9 test) as a process.
                "NestedCloudKitEmulator", "cloudkit-emulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // What the test targets share: models, record builders and expectations, the generated models of the
        // property tests, and clocks. The core and the simulated server only, so a change to a backend rebuilds none
        // of the core's tests.
        .target(
            name: "TestSupport",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitServer",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/TestSupport"
        ),
        // What the tests of backends share: the backend matrix of the conformance suite, and a trait that stops each
        // test's emulators when it ends.
        .target(
            name: "BackendTestSupport",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitServer", "NestedCloudKitSQLite", "NestedCloudKitWebServices",
                "NestedCloudKitEmulator", "NestedCloudKitSync", "TestSupport",
            ],
            path: "Tests/BackendTestSupport"
        ),
        // A loopback HTTP server that stands in for CloudKit Web Services, checking signatures as CloudKit does.
        .target(
            name: "CloudKitTestServer",
            dependencies: [
                "NestedCloudKitWebServices",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/CloudKitTestServer"
        ),
        // Speed against the baselines: swift run -c release Benchmarks. Kept out of the library's dependencies.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitServer", "NestedCloudKitSQLite", "NestedCloudKitWebServices",
                "NestedCloudKitSync", "NestedCloudKitEmulator",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"), "ToolSupport",
            ],
            path: "Benchmarks"
        ),
        // A process the SQLite tests start and kill in the middle of a save.
        .executableTarget(
            name: "SQLiteCrashWriter",
            dependencies: ["NestedCloudKitCodable", "NestedCloudKitSQLite"],
            path: "Tests/SQLiteCrashWriter"
        ),
    ],
    swiftLanguageModes: [.v6]
)
