/// What happens to a web auth token once a request used it. Either way each answer carries a new token
/// (`X-Apple-CloudKit-Web-Auth-Token`), and a token unused for 30 minutes of the emulator's clock expires.
public enum WebAuthTokenPolicy: String, Sendable, Hashable, CaseIterable {
    /// As live CloudKit behaves (FIDELITY.md): the used token keeps working alongside the new one. MistKit #462
    /// reports live CloudKit accepting a token reused eight times in a row, shared by six concurrent requests,
    /// and 25 hours old, so code that keeps one token works against CloudKit and must against the emulator. The
    /// default.
    case reusable
    /// As Apple's reference documents it ("Once the response is received, the previous token is no longer
    /// valid"): a token answers one request. For a client's authors, to check that it always takes the newest.
    case singleUse
}
