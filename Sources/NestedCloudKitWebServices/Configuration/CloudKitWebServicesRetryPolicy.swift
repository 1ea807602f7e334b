import Foundation

/// When a ``CloudKitWebServicesDatabase`` tries a request again.
///
/// As the documentation asks, only a request whose error says when to retry (`retryAfter`, with `THROTTLED`,
/// `TRY_AGAIN_LATER` and some `INTERNAL_ERROR`s) is retried, after at least that long. Each retry also waits at
/// least twice as long as the one before, so a server that keeps answering "retry now" isn't hammered. Waiting
/// is cancellable: cancelling the task ends it with `CancellationError`.
public struct CloudKitWebServicesRetryPolicy: Sendable, Hashable {
    /// How many times one request is sent at most; 1 never retries.
    public var maximumAttempts: Int
    /// The wait before the first retry when the server asks for less.
    public var initialBackoff: Duration
    /// The longest wait accepted; a server asking for longer gets its error thrown at once.
    public var maximumDelay: Duration

    /// Creates a policy.
    public init(maximumAttempts: Int, initialBackoff: Duration, maximumDelay: Duration) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.maximumDelay = maximumDelay
    }

    /// Four attempts, backing off from half a second, waiting at most a minute.
    public static let `default` = CloudKitWebServicesRetryPolicy(
        maximumAttempts: 4, initialBackoff: .milliseconds(500), maximumDelay: .seconds(60)
    )

    /// Never retry: every error reaches the caller at once.
    public static let never = CloudKitWebServicesRetryPolicy(maximumAttempts: 1, initialBackoff: .zero, maximumDelay: .zero)

    /// How long to wait before retry number `retry` (1 for the first) when the server said `retryAfter`
    /// seconds, or `nil` when not to retry.
    func delay(beforeRetry retry: Int, retryAfter: Double?) -> Duration? {
        // A year bounds the conversion to milliseconds below; no policy waits that long.
        guard let retryAfter, retryAfter.isFinite, (0...31_536_000).contains(retryAfter), retry < maximumAttempts else {
            return nil
        }
        let backoff = initialBackoff * (1 << min(retry - 1, 20))
        let delay = max(Duration.milliseconds(Int64((retryAfter * 1000).rounded(.up))), backoff)
        return delay <= maximumDelay ? delay : nil
    }
}
