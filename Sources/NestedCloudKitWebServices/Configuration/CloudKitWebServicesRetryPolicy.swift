import Foundation

/// When a ``CloudKitWebServicesDatabase`` tries a request again.
///
/// As the documentation asks, only a request whose error says when to retry (`retryAfter`, with `THROTTLED`,
/// `TRY_AGAIN_LATER` and some `INTERNAL_ERROR`s) is retried, after at least that long. Each retry also waits at
/// least twice as long as the one before, so a server that keeps answering "retry now" isn't hammered. Retries
/// stop after ``maximumAttempts``, and once ``maximumTotalTime`` would pass: the caller then gets the last error.
/// Waiting is cancellable: cancelling the task ends it with `CancellationError`.
public struct CloudKitWebServicesRetryPolicy: Sendable, Hashable {
    /// How many times one request is sent at most; 1 never retries.
    public var maximumAttempts: Int
    /// The wait before the first retry when the server asks for less.
    public var initialBackoff: Duration
    /// The longest wait accepted; a server asking for longer gets its error thrown at once.
    public var maximumDelay: Duration
    /// The longest a request may go on retrying, from the start of its first attempt: a retry whose wait would end
    /// later isn't made, and the last error is thrown instead.
    ///
    /// It bounds the time spent on one call of the database whatever the server keeps asking for, so a server
    /// handling its own client's request can answer it in time.
    public var maximumTotalTime: Duration

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maximumAttempts: How many times one request is sent at most; 1 never retries.
    ///   - initialBackoff: The wait before the first retry when the server asks for less.
    ///   - maximumDelay: The longest wait accepted before one retry.
    ///   - maximumTotalTime: The longest a request may go on retrying, from the start of its first attempt.
    public init(
        maximumAttempts: Int, initialBackoff: Duration, maximumDelay: Duration,
        maximumTotalTime: Duration = .seconds(120)
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.maximumDelay = maximumDelay
        self.maximumTotalTime = maximumTotalTime
    }

    /// Four attempts, backing off from half a second, waiting at most a minute at a time and two minutes in all.
    public static let `default` = CloudKitWebServicesRetryPolicy(
        maximumAttempts: 4, initialBackoff: .milliseconds(500), maximumDelay: .seconds(60),
        maximumTotalTime: .seconds(120)
    )

    /// Never retry: every error reaches the caller at once.
    public static let never = CloudKitWebServicesRetryPolicy(
        maximumAttempts: 1, initialBackoff: .zero, maximumDelay: .zero, maximumTotalTime: .zero
    )

    /// How long to wait before retry number `retry` (1 for the first) when the server said `retryAfter`
    /// seconds and `elapsed` has passed since the first attempt started, or `nil` when not to retry.
    func delay(beforeRetry retry: Int, retryAfter: Double?, elapsed: Duration = .zero) -> Duration? {
        // A year bounds the conversion to milliseconds below; no policy waits that long.
        guard let retryAfter, retryAfter.isFinite, (0...31_536_000).contains(retryAfter), retry < maximumAttempts else {
            return nil
        }
        let backoff = initialBackoff * (1 << min(retry - 1, 20))
        let delay = max(Duration.milliseconds(Int64((retryAfter * 1000).rounded(.up))), backoff)
        return delay <= maximumDelay && elapsed + delay <= maximumTotalTime ? delay : nil
    }
}
