import Foundation

/// The body of `tokens/create`: the APNs environment the token is for.
struct WireTokenCreateRequest: Codable, Hashable, Sendable {
    var apnsEnvironment: String
}

/// The body of `tokens/register`: a token made elsewhere, and its APNs environment.
struct WireTokenRegisterRequest: Codable, Hashable, Sendable {
    var apnsEnvironment: String
    var apnsToken: String
}

/// The response of `tokens/create` (and `tokens/register`, which the reference gives no response for): the
/// token, the environment, and for `tokens/create` the URL to long-poll for pushes.
struct WireTokenResponse: Codable, Hashable, Sendable {
    var apnsEnvironment: String?
    var apnsToken: String?
    var webcourierURL: String?
}

/// A response whose contents the client doesn't use: any JSON, or an empty body (the reference documents no response
/// for `tokens/register`).
struct WireIgnoredResponse: Decodable, Sendable {
    init() {}
    init(from decoder: any Decoder) throws {}
}
