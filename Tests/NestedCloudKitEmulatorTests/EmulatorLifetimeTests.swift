import Foundation
import NestedCloudKitEmulator
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CloudKitEmulator.stoppingEmulatorsStarted(in:)`: what a test's helpers started stops when the scope ends.
@Suite struct EmulatorLifetimeTests {
    struct Failure: Error, Equatable {}

    /// Whether `url` answers the health check now, through a session of its own: a pooled connection from an
    /// earlier check can't answer for a server that has stopped listening.
    func answersHealth(_ url: URL) async -> Bool {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        guard let (_, response) = try? await session.data(from: url.appending(path: "emulator/v1/health")) else {
            return false
        }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    @Test func emulatorsStartedInTheScopeAndItsChildTasksStopWhenItReturns() async throws {
        let urls = try await CloudKitEmulator.stoppingEmulatorsStarted {
            async let inChildTask = CloudKitEmulator.start()
            let direct = try await CloudKitEmulator.start()
            let urls = [direct.url, try await inChildTask.url]
            for url in urls { #expect(await answersHealth(url)) }
            return urls
        }
        for url in urls { #expect(!(await answersHealth(url))) }
    }

    @Test func emulatorsStopWhenTheScopeThrowsAndTheErrorComesThrough() async throws {
        var started: URL?
        do {
            try await CloudKitEmulator.stoppingEmulatorsStarted {
                started = try await CloudKitEmulator.start().url
                throw Failure()
            }
            Issue.record("the scope's error didn't come through")
        } catch {
            #expect(error as? Failure == Failure())
        }
        let url = try #require(started)
        #expect(!(await answersHealth(url)))
    }

    @Test func anInnerScopeStopsOnlyItsOwnEmulators() async throws {
        try await CloudKitEmulator.stoppingEmulatorsStarted {
            let outer = try await CloudKitEmulator.start()
            let inner = try await CloudKitEmulator.stoppingEmulatorsStarted { try await CloudKitEmulator.start() }
            #expect(!(await answersHealth(inner.url)))
            #expect(await answersHealth(outer.url))
        }
    }

    @Test func anEmulatorStartedOutsideAnyScopeRunsUntilStopped() async throws {
        let emulator = try await CloudKitEmulator.start()
        try await CloudKitEmulator.stoppingEmulatorsStarted { _ = try await CloudKitEmulator.start() }
        #expect(await answersHealth(emulator.url))
        await emulator.stop()
        #expect(!(await answersHealth(emulator.url)))
    }
}
