import Foundation
import NestedCloudKitCodable

// MARK: Pushes without APNs

extension CloudKitWebServicesDatabase {
    /// How many pushes ``notifications(from:pollTimeout:)`` keeps for a reader that hasn't taken them yet.
    public static let bufferedNotifications = 100

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
    public func registerNotificationToken(
        _ apnsToken: String, apnsEnvironment: CloudKitWebServicesConfiguration.Environment? = nil
    ) async throws {
        let environment = apnsEnvironment ?? configuration.environment
        _ = try await transport.post(
            "tokens/register", WireTokenRegisterRequest(apnsEnvironment: environment.rawValue, apnsToken: apnsToken),
            as: WireTokenResponse.self, under: .container)
    }

    /// The pushes delivered to `channel`, read by long-polling its URL: each CloudKit payload, parsed, as it comes.
    ///
    /// A push is a hint (CloudKit coalesces and drops pushes): answer one by fetching the changes since your tokens,
    /// as `SyncEngine.handle(_:)` does. The stream runs until the task reading it is cancelled or stops iterating.
    /// A poll that ends without a push (the server's keepalive, or `pollTimeout`) is polled again; a failed poll is
    /// retried as the configuration's ``CloudKitWebServicesConfiguration/retryPolicy`` allows, counting failures in
    /// a row, and the stream ends with the last error when the policy gives up, or at once when the server no longer
    /// knows the channel (make a new one). A body that isn't a CloudKit payload is skipped.
    ///
    /// Pushes arrive in order; of those a slow reader hasn't taken, the newest ``bufferedNotifications`` are kept.
    ///
    /// - Parameters:
    ///   - channel: What ``createNotificationChannel(apnsEnvironment:)`` made.
    ///   - pollTimeout: How long one poll may wait for a push before it is asked again.
    public func notifications(
        from channel: CloudKitNotificationChannel, pollTimeout: Duration = .seconds(300)
    ) -> AsyncThrowingStream<CloudNotification, any Error> {
        let courier = NotificationCourier(transport: transport, url: channel.webcourierURL, pollTimeout: pollTimeout)
        // Pushes are hints: a reader that falls behind needs the latest, not every one (APNs coalesces too).
        return AsyncThrowingStream(bufferingPolicy: .bufferingNewest(Self.bufferedNotifications)) { continuation in
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
        }
    }
}
