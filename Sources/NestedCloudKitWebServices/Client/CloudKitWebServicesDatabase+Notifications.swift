import Foundation
import NestedCloudKitCodable

// MARK: Pushes without APNs

extension CloudKitWebServicesDatabase {
    /// How many pushes ``notifications(from:pollTimeout:)`` keeps for a reader that hasn't taken them yet.
    package static let bufferedNotifications = 100

    /// Makes a channel for the signed-in user's pushes with `tokens/create`: a token CloudKit delivers the user's
    /// subscriptions to, and the URL to long-poll for them.
    ///
    /// ```swift
    /// let channel = try await database.createNotificationChannel()
    /// for try await notification in database.notifications(from: channel) {
    ///     try await engine.handle(notification)
    /// }
    /// ```
    ///
    /// - Parameter apnsEnvironment: The APNs environment of the token: by default the container's environment.
    /// - Throws: `CloudDatabaseError.notAuthenticated` without a signed-in user (tokens belong to a user), and what
    ///   any request throws.
    public func createNotificationChannel(
        apnsEnvironment: CloudKitWebServicesConfiguration.Environment? = nil
    ) async throws -> CloudKitNotificationChannel {
        let environment = apnsEnvironment ?? configuration.environment
        let response = try await transport.post(
            "tokens/create", WireTokenCreateRequest(apnsEnvironment: environment.rawValue), as: WireTokenResponse.self,
            under: .container)
        guard let token = response.apnsToken, !token.isEmpty else {
            throw CloudDatabaseError.internalError("CloudKit's response to tokens/create has no apnsToken")
        }
        guard let address = response.webcourierURL, let url = URL(string: address), url.scheme != nil else {
            throw CloudDatabaseError.internalError(
                "CloudKit's response to tokens/create has no webcourierURL to long-poll: \(response.webcourierURL ?? "none")"
            )
        }
        return CloudKitNotificationChannel(apnsToken: token, webcourierURL: url, apnsEnvironment: environment)
    }

    /// Registers a push token made elsewhere (an app's APNs device token) for the signed-in user, with
    /// `tokens/register`, so that the user's subscriptions are pushed to it.
    ///
    /// - Parameters:
    ///   - apnsToken: The token, as APNs gave it.
    ///   - apnsEnvironment: Its APNs environment: by default the container's environment.
    /// - Throws: `CloudDatabaseError.notAuthenticated` without a signed-in user, and what any request throws.
    public func registerNotificationToken(
        _ apnsToken: String, apnsEnvironment: CloudKitWebServicesConfiguration.Environment? = nil
    ) async throws {
        let environment = apnsEnvironment ?? configuration.environment
        _ = try await transport.post(
            "tokens/register", WireTokenRegisterRequest(apnsEnvironment: environment.rawValue, apnsToken: apnsToken),
            as: WireIgnoredResponse.self, under: .container)
    }

    /// The pushes delivered to `channel`, read by long-polling its URL: each CloudKit payload, parsed, as it comes.
    ///
    /// A push is a hint: answer one by fetching the changes since your tokens, as `SyncEngine.handle(_:)` does. The
    /// stream polls until the task reading it is cancelled or stops iterating; <doc:ReceivingPushesWithoutAPNs> says
    /// what it does with each kind of answer and when it ends with an error. Of the pushes a slow reader hasn't taken,
    /// the newest 100 are kept.
    ///
    /// - Parameters:
    ///   - channel: What ``createNotificationChannel(apnsEnvironment:)`` made.
    ///   - pollTimeout: The longest one poll may take before it is asked again: above zero, at most a day.
    public func notifications(
        from channel: CloudKitNotificationChannel, pollTimeout: Duration = .seconds(300)
    ) -> AsyncThrowingStream<CloudNotification, any Error> {
        notifications(from: channel, pollTimeout: pollTimeout, quietPollSpacing: .seconds(1))
    }

    /// ``notifications(from:pollTimeout:)`` with the least time between polls that bring no push (tests shorten it).
    func notifications(
        from channel: CloudKitNotificationChannel, pollTimeout: Duration, quietPollSpacing: Duration
    ) -> AsyncThrowingStream<CloudNotification, any Error> {
        // Pushes are hints: a reader that falls behind needs the latest, not every one (APNs coalesces too).
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: CloudNotification.self, bufferingPolicy: .bufferingNewest(Self.bufferedNotifications))
        guard pollTimeout > .zero, pollTimeout <= .seconds(86_400) else {
            continuation.finish(
                throwing: CloudDatabaseError.invalidArguments(
                    "a poll timeout of \(pollTimeout) can't work: give one above zero and at most a day, such as the default 300 s"
                ))
            return stream
        }
        let courier = NotificationCourier(
            transport: transport, url: channel.webcourierURL, pollTimeout: pollTimeout,
            quietPollSpacing: quietPollSpacing)
        let polling = Task {
            do {
                try await courier.run { continuation.yield($0) }
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in polling.cancel() }
        return stream
    }
}
