import Foundation

/// Where CloudKit delivers a user's pushes to a client without APNs: a token `tokens/create` made, and the
/// notification URL (`webcourierURL`) to long-poll, as CloudKit JS does in a browser.
///
/// Make one with ``CloudKitWebServicesDatabase/createNotificationChannel(apnsEnvironment:)`` and read its pushes
/// with ``CloudKitWebServicesDatabase/notifications(from:pollTimeout:)``. The channel belongs to the user whose web
/// auth token made it: their subscriptions (a sync engine's database subscription, say) fire into it.
public struct CloudKitNotificationChannel: Sendable, Hashable, Codable {
    /// The push token CloudKit made (`apnsToken`); subscriptions deliver to it.
    public var apnsToken: String
    /// The URL to long-poll for pushes (`webcourierURL`). It is the channel's only credential: keep it private.
    public var webcourierURL: URL
    /// The APNs environment the token is for.
    public var apnsEnvironment: CloudKitWebServicesConfiguration.Environment

    /// A channel from its parts, such as one kept from an earlier session.
    public init(
        apnsToken: String, webcourierURL: URL, apnsEnvironment: CloudKitWebServicesConfiguration.Environment
    ) {
        self.apnsToken = apnsToken
        self.webcourierURL = webcourierURL
        self.apnsEnvironment = apnsEnvironment
    }
}
