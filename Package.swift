// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NestedCloudKitCodable",
    // The CloudKit async APIs the Apple bridge uses arrived with these releases.
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "NestedCloudKitCodable", targets: ["NestedCloudKitCodable"]),
        .library(name: "NestedCloudKitSQLite", targets: ["NestedCloudKitSQLite"]),
        .executable(name: "Example", targets: ["Example"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // The core depends on Foundation only, so it also ships through CocoaPods and Carthage.
        .target(name: "NestedCloudKitCodable"),
        .target(
            name: "NestedCloudKitSQLite",
            dependencies: ["NestedCloudKitCodable", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .executableTarget(
            name: "Example",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Example"
        ),
        .testTarget(
            name: "NestedCloudKitCodableTests",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitSQLite", "SQLiteCrashWriter",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // Speed against the baselines: swift run -c release Benchmarks. Kept out of the library's dependencies.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "NestedCloudKitCodable", "NestedCloudKitSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
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
