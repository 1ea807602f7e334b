// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NestedCloudKitCodable",
    // The CloudKit async APIs the Apple bridge uses arrived with these releases.
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "NestedCloudKitCodable", targets: ["NestedCloudKitCodable"]),
    ],
    targets: [
        // The core depends on Foundation only, so it also ships through CocoaPods and Carthage.
        .target(name: "NestedCloudKitCodable"),
        .testTarget(
            name: "NestedCloudKitCodableTests",
            dependencies: ["NestedCloudKitCodable"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
