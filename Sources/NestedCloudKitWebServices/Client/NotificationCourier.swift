import AsyncHTTPClient
import Foundation
import NIOCore
import NestedCloudKitCodable

/// Long-polls a notification URL (`webcourierURL`): one GET at a time, each answered with a push's payload or, when
/// none came in time, an empty body.
///
/// The URL is the credential (it names the token), so polls carry no API token or signature; it may be on another
/// host than the database, as CloudKit's courier is.
struct NotificationCourier: Sendable {
    let transport: WebServicesTransport
    let url: URL
    /// The longest one poll may take, its body included; then it is asked again.
    let pollTimeout: Duration
    /// The least time between the starts of two polls after one that brought no push: a server (or a proxy) that
    /// answers at once must not be polled in a tight loop.
    let quietPollSpacing: Duration

    /// What one poll brought.
    enum Outcome: Equatable {
        case payload(Data)
        /// No push within the poll: the keepalive, or our own deadline.
        case quiet
        case failed(CloudDatabaseError, retryAfter: Double?, final: Bool)
    }

    /// Polls until the task is cancelled, handing each CloudKit payload to `deliver`; throws when polls keep
    /// failing past the retry policy, or at once when the server no longer knows the URL or refuses the poll.
    func run(delivering deliver: (CloudNotification) -> Void) async throws {
        var failures = 0
        var failingSince: ContinuousClock.Instant?
        while true {
            try Task.checkCancellation()
            let started = ContinuousClock.now
            let outcome = try await poll()
            switch outcome {
            case .payload(let body):
                failures = 0
                failingSince = nil
                guard let notification = CloudNotification(jsonData: body) else {
                    // Not a CloudKit payload: skipped, and spaced like a quiet poll.
                    try await Task.sleep(until: started + quietPollSpacing, clock: .continuous)
                    continue
                }
                deliver(notification)
            case .quiet:
                failures = 0
                failingSince = nil
                try await Task.sleep(until: started + quietPollSpacing, clock: .continuous)
            case .failed(let error, let retryAfter, let final):
                if final { throw error }
                failures += 1
                let since = failingSince ?? started
                failingSince = since
                // A failure without retryAfter (a dropped connection, a busy server) waits the policy's backoff: the
                // courier has nothing else to do, and giving up at once would end the pushes.
                guard
                    let delay = transport.configuration.retryPolicy.delay(
                        beforeRetry: failures, retryAfter: retryAfter ?? 0, elapsed: ContinuousClock.now - since)
                else { throw error }
                transport.logger.debug(
                    "Notification poll failed; polling again",
                    metadata: ["failures": "\(failures)", "delay": "\(delay)", "error": "\(error)"])
                try await Task.sleep(for: delay)
            }
        }
    }

    /// One poll, bounded by `pollTimeout` as a whole: AsyncHTTPClient's deadline covers the response's head only,
    /// and a courier that sent the head and then held the body would stall the stream.
    func poll() async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome?.self) { group in
            group.addTask { try await exchange() }
            group.addTask {
                try await Task.sleep(for: pollTimeout)
                return nil
            }
            defer { group.cancelAll() }
            // The first to finish: the exchange's outcome, or `nil` when the time ran out first.
            let first = try await group.next() ?? nil
            return first ?? .quiet
        }
    }

    private func exchange() async throws -> Outcome {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        do {
            return try await transport.mappingNetworkErrors("polling the notification URL", server: url) {
                let response: HTTPClientResponse
                do {
                    response = try await transport.httpClient.execute(
                        request, timeout: WebServicesTransport.timeAmount(pollTimeout))
                } catch let error as HTTPClientError where error == .deadlineExceeded {
                    return .quiet
                }
                let body = Data(
                    try await response.body.collect(upTo: transport.configuration.maximumResponseSize)
                        .readableBytesView)
                return Self.outcome(status: Int(response.status.code), body: body)
            }
        } catch let error as CloudDatabaseError {
            return .failed(error, retryAfter: nil, final: false)
        }
    }

    /// What an answer means: a 2xx with a body is a push, an empty one the keepalive; 404 and 410 say the server
    /// forgot the URL; 429 and 5xx are retried; anything else (a refused or malformed poll) ends the pushes.
    static func outcome(status: Int, body: Data) -> Outcome {
        switch status {
        case 200...299:
            let isBlank = body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
            return isBlank ? .quiet : .payload(body)
        case 404, 410:
            return .failed(
                .invalidArguments(
                    "the server no longer knows this notification URL (HTTP \(status)): make a new channel with createNotificationChannel()"
                ), retryAfter: nil, final: true)
        default:
            let serverError = try? JSONDecoder().decode(WireServerError.self, from: body)
            let error =
                serverError?.databaseError(recordID: nil, zoneID: .default)
                ?? WireServerError.databaseError(status: status, body: String(decoding: body, as: UTF8.self))
            let retriable = status == 429 || (500...599).contains(status)
            return .failed(error, retryAfter: serverError?.retryAfter, final: !retriable)
        }
    }
}
