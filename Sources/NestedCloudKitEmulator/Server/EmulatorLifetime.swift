import NIOConcurrencyHelpers

/// The emulators ``CloudKitEmulator/start(_:)`` started inside one call of
/// ``CloudKitEmulator/stoppingEmulatorsStarted(in:)``, which stops them when the call ends.
final class EmulatorLifetime: Sendable {
    /// The innermost lifetime of the current task, if any: a task-local, so emulators started in child tasks and in
    /// tasks created inside the scope belong to it too.
    @TaskLocal static var current: EmulatorLifetime?

    private let started = NIOLockedValueBox<[CloudKitEmulator]>([])

    func adopt(_ emulator: CloudKitEmulator) {
        started.withLockedValue { $0.append(emulator) }
    }

    /// Stops each emulator adopted so far, one after another; an emulator stopped already is passed over.
    func stopAll() async {
        let emulators = started.withLockedValue { started in
            defer { started.removeAll() }
            return started
        }
        for emulator in emulators { await emulator.stop() }
    }
}

extension CloudKitEmulator {
    /// Runs `body`, then stops every emulator that ``start(_:)`` started inside it, whether `body` returned or threw.
    ///
    /// For tests that make emulators in factories and helpers, where no single place could call ``stop()``: a
    /// Swift Testing trait that wraps each test in this call stops the test's emulators when it ends, so a test
    /// process doesn't collect an idle server (a port, its connections, its storage) for every test.
    ///
    /// ```swift
    /// struct StopsEmulators: TestTrait, SuiteTrait, TestScoping {
    ///     var isRecursive: Bool { true }
    ///     func provideScope(
    ///         for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ///     ) async throws {
    ///         try await CloudKitEmulator.stoppingEmulatorsStarted(in: function)
    ///     }
    /// }
    /// ```
    ///
    /// Emulators started in tasks that `body` creates count too; a nested call stops its own when it ends. One that
    /// ``start(_:)`` returned after `body` ended, from a task that outlived it, is not stopped.
    nonisolated(nonsending) public static func stoppingEmulatorsStarted<T>(in body: () async throws -> T) async rethrows
        -> T
    {
        let lifetime = EmulatorLifetime()
        do {
            let result = try await EmulatorLifetime.$current.withValue(lifetime) { try await body() }
            await lifetime.stopAll()
            return result
        } catch {
            await lifetime.stopAll()
            throw error
        }
    }
}
