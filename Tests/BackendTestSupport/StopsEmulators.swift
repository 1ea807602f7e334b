import NestedCloudKitEmulator
import Testing

/// Stops the emulators each test started, in its helpers and factories too, when the test ends: without it, a test
/// run keeps an idle server (a port, connections, storage) for every test that made one.
package struct StopsEmulators: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await CloudKitEmulator.stoppingEmulatorsStarted(in: function)
    }
}

extension Trait where Self == StopsEmulators {
    /// Stops the emulators each test started when it ends.
    package static var stopsEmulators: Self { StopsEmulators() }
}
