import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NestedCloudKitCodable
import ServiceLifecycle

/// CloudKit Web Services on loopback: the documented HTTP API, over SQLite or memory, with CloudKit's rules,
/// authentication, notifications, and an admin API for tests.
///
/// In a test, start one in-process and point a client at ``url``:
///
/// ```swift
/// let emulator = try await CloudKitEmulator.start(EmulatorConfiguration())
/// let token = await emulator.signIn(user: "alice")
/// // ... requests to emulator.url ...
/// await emulator.stop()
/// ```
///
/// From a terminal: `swift run cloudkit-emulator --port 8080 --data ./ck-data`.
public final class CloudKitEmulator: Service, Sendable {
    /// How the emulator was set up.
    public let configuration: EmulatorConfiguration
    let state: EmulatorState
    private let running = NIOLockedValueBox<(Task<Void, any Error>, ServiceGroup)?>(nil)

    /// An emulator that serves once ``run(onReady:)`` runs (as a service of a `ServiceGroup`, say); in a test,
    /// ``start(_:)`` makes one and runs it.
    public init(configuration: EmulatorConfiguration = EmulatorConfiguration()) {
        self.configuration = configuration
        state = EmulatorState(configuration: configuration, clock: EmulatorClock(base: configuration.clock))
    }

    /// Where the emulator listens, once it does.
    public var url: URL {
        URL(string: "http://\(configuration.urlHost):\(state.boundPort ?? configuration.port)")
            ?? URL(fileURLWithPath: "/")
    }

    /// Serves until the task is cancelled or a graceful shutdown is triggered, then closes the databases.
    ///
    /// - Parameter onReady: Called with the URL once the server accepts connections.
    public func run(onReady: @escaping @Sendable (URL) async -> Void) async throws {
        var logger = Logger(label: "cloudkit-emulator")
        logger.logLevel = .warning
        let application = Application(
            router: EmulatorRouter.make(state: state),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "cloudkit-emulator"),
            onServerRunning: { [state] channel in
                let port = channel.localAddress?.port ?? 0
                state.boundPort = port
                await onReady(URL(string: "http://\(self.configuration.urlHost):\(port)") ?? URL(fileURLWithPath: "/"))
            },
            logger: logger
        )
        do {
            try await withGracefulShutdownHandler {
                try await application.run()
            } onGracefulShutdown: { [state] in
                // Long polls would hold the shutdown until their timeout.
                Task { await state.notifications.close() }
            }
        } catch {
            await state.registry.close()
            throw error
        }
        await state.registry.close()
    }

    /// `Service` conformance: serves until a graceful shutdown.
    public func run() async throws {
        try await run(onReady: { _ in })
    }

    /// Starts an emulator in this process and returns once it accepts connections.
    ///
    /// It serves until ``stop()``, or until the end of the enclosing ``stoppingEmulatorsStarted(in:)`` if there is one.
    public static func start(_ configuration: EmulatorConfiguration = EmulatorConfiguration()) async throws
        -> CloudKitEmulator
    {
        let emulator = CloudKitEmulator(configuration: configuration)
        let (ready, readyContinuation) = AsyncStream<Result<URL, any Error>>.makeStream()
        let serving = ReportingReadiness(emulator: emulator) { url in readyContinuation.yield(.success(url)) }
        // In a service group, so that `stop()` shuts the server down gracefully: cancelling it instead makes
        // Hummingbird log the cancellation as an error.
        let group = ServiceGroup(
            services: [serving], logger: Logger(label: "cloudkit-emulator", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task {
            do {
                try await group.run()
                readyContinuation.finish()
            } catch {
                readyContinuation.yield(.failure(error))
                readyContinuation.finish()
                throw error
            }
        }
        emulator.running.withLockedValue { $0 = (task, group) }
        for await result in ready {
            _ = try result.get()
            EmulatorLifetime.current?.adopt(emulator)
            return emulator
        }
        // Cancelled before the server was ready: it mustn't go on running, with its port, unreachable.
        await emulator.stop()
        throw CancellationError()
    }

    /// Stops an emulator that ``start(_:)`` started, gracefully, and waits until its databases are closed.
    public func stop() async {
        guard let (task, group) = running.withLockedValue({ $0 }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    // MARK: For tests

    /// Signs in a test user, as `POST /emulator/v1/sign-in` does, and returns a web auth token.
    ///
    /// - Parameters:
    ///   - user: The test user's name: each name is its own iCloud user, with a private database of their own.
    ///   - identity: Makes the user discoverable by it (`users/discover`, `users/lookup/email`,
    ///     `users/lookup/id`), replacing an identity an earlier sign-in gave; `nil` leaves discoverability as it was
    ///     (a user never made discoverable isn't found).
    public func signIn(user: String, discoverableAs identity: EmulatorUserIdentity? = nil) async -> String {
        if let identity { state.users.publish(user, as: identity) }
        return await state.tokens.issue(for: user)
    }

    /// Forgets everything, as `POST /emulator/v1/reset` does: every database, web auth token, discoverable user,
    /// notification URL,
    /// schema, upload, fault and logged request, and the clock's offset. With a data directory, the folders of each
    /// container's environments are deleted; nothing else in the directory is.
    public func reset() async throws {
        do {
            try await state.reset()
        } catch {
            throw EmulatorError(error)
        }
    }

    /// The user record name a test user has.
    public static func userRecordName(for user: String) -> String {
        Caller.userRecordName(for: user)
    }

    /// Adds a fault; it applies to the requests it matches until used up or removed.
    @discardableResult
    public func inject(_ fault: EmulatorFault) throws -> EmulatorFault {
        do {
            return try state.faults.add(fault)
        } catch {
            throw EmulatorError(error)
        }
    }

    /// Removes every fault.
    public func removeFaults() {
        state.faults.remove()
    }

    /// Moves the emulator's clock, which expires upload URLs and web auth tokens.
    public func advanceClock(by seconds: TimeInterval) {
        state.clock.advance(by: seconds)
    }

    /// Signs a test user out: every web auth token of theirs stops working, so the next request answers 421.
    public func signOut(user: String) async {
        await state.tokens.revoke(user: user)
    }

    /// Deletes a zone of a user's private database as iCloud would: `.purged` when the user deleted the app's
    /// data in Settings, `.encryptedDataReset` after a reset of their keys. Users the zone was shared with lose it.
    public func deleteZone(
        named zoneName: String, ofUser user: String, container: String, reason: CloudZoneDeletion.Reason
    ) async throws {
        let key = DatabaseKey(container: container, environment: configuration.environment, scope: .private, user: user)
        do throws(ServerError) {
            let handle = try await state.registry.handle(for: key)
            try await state.registry.deleteZone(CloudRecord.ZoneID(zoneName: zoneName), of: key, reason: reason)
            handle.noteWrite()
            await state.notifications.zonesChanged(in: handle)
            await state.notifyDatabasesChangedByOthers(after: handle)
        } catch {
            throw EmulatorError(error)
        }
    }

    /// Makes every sync token handed out so far expire, as CloudKit does after a while: the next fetch with one is
    /// refused and must start over.
    public func expireChangeTokens() async {
        await state.registry.expireChangeTokens()
    }

    /// Imports a schema for a container in the served environment, as `cktool import-schema` does.
    public func importSchema(_ schema: CloudSchema, container: String) async throws {
        try await importSchema(schema.text, container: container)
    }

    /// The schema of a container in the served environment, as `cktool export-schema` exports it.
    public func schema(container: String) async throws -> CloudSchema {
        do {
            return try await state.schema.schema(container: container, environment: configuration.environment)
        } catch {
            throw EmulatorError(error)
        }
    }

    /// Imports a schema, in CloudKit's schema language, for a container in the served environment.
    package func importSchema(_ text: String, container: String) async throws {
        do {
            try await state.schema.importSchema(text, container: container, environment: configuration.environment)
        } catch {
            throw EmulatorError(error)
        }
    }
}

/// An error of the emulator's Swift API: what the same request over HTTP would answer.
public struct EmulatorError: Error, Sendable, CustomStringConvertible {
    /// CloudKit Web Services' `serverErrorCode` for the failure, as the HTTP API answers it: `BAD_REQUEST` for
    /// a fault or schema the emulator can't take, `TRY_AGAIN_LATER` during a reset, `INTERNAL_ERROR` for a data
    /// directory it can't read or write.
    public let serverErrorCode: String
    /// What went wrong, and what to do about it.
    public let reason: String
    /// The reason.
    public var description: String { reason }

    init(_ error: ServerError) {
        serverErrorCode = error.code.rawValue
        reason = error.reason
    }
}

/// The emulator as a service that reports when it is ready, for ``CloudKitEmulator/start(_:)``.
private struct ReportingReadiness: Service {
    let emulator: CloudKitEmulator
    let onReady: @Sendable (URL) async -> Void

    func run() async throws {
        try await emulator.run(onReady: onReady)
    }
}
