import Foundation

/// An error dictionary, for a whole request or for one record or zone of it:
/// `{recordName, serverErrorCode, reason, retryAfter, uuid, redirectURL}`.
struct WireServerError: Codable, Hashable, Sendable, Error {
    var recordName: String?
    var zoneID: WireZoneID?
    /// The subscription the error is about, in `subscriptions/modify`'s response.
    var subscriptionID: String?
    var serverErrorCode: String
    var reason: String?
    /// Seconds to wait before trying again; the documentation says to retry only where the server gives it.
    var retryAfter: Double?
    /// The server's identifier for the failure, for Apple's support.
    var uuid: String?
    /// Where to sign the user in, with `AUTHENTICATION_REQUIRED`.
    var redirectURL: String?

    /// ``redirectURL`` as a URL, when it is one.
    var signInURL: URL? {
        redirectURL.flatMap { URL(string: $0) }
    }

    init(
        recordName: String? = nil, zoneID: WireZoneID? = nil, subscriptionID: String? = nil,
        serverErrorCode: String, reason: String? = nil,
        retryAfter: Double? = nil, uuid: String? = nil, redirectURL: String? = nil
    ) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.subscriptionID = subscriptionID
        self.serverErrorCode = serverErrorCode
        self.reason = reason
        self.retryAfter = retryAfter
        self.uuid = uuid
        self.redirectURL = redirectURL
    }
}
