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
    let pollTimeout: Duration

    /// What one poll brought.
    private enum Outcome {
        case payload(Data)
        /// No push within the poll: the keepalive, or our own deadline.
        case quiet
        case failed(CloudDatabaseError, retryAfter: Double?, final: Bool)
    }

    /// Polls until the task is cancelled, handing each CloudKit payload to `deliver`; throws when polls keep
    /// failing past the retry policy, or when the server no longer knows the URL.
    func run(delivering deliver: (CloudNotification) -> Void) async throws {
        var failures = 0
        var failingSince: ContinuousClock.Instant?
        while true {
            try Task.checkCancellation()
            switch try await poll() {
            case .payload(let body):
                failures = 0
                failingSince = nil
                if let notification = CloudNotification(jsonData: body) { deliver(notification) }
            case .quiet:
                failures = 0
                failingSince = nil
            case .failed(let error, let retryAfter, let final):
                if final { throw error }
                failures += 1
                let since = failingSince ?? .now
                failingSince = since
                // A failure without retryAfter (a dropped connection, a restarting server) waits the policy's
                // backoff: the courier has nothing else to do, and giving up at once would end the pushes.
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

    private func poll() async throws -> Outcome {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        let context = "polling the notification URL"
        do {
            return try await transport.mappingNetworkErrors(context, server: url) {
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
                return outcome(status: Int(response.status.code), body: body)
            }
        } catch let error as CloudDatabaseError {
            return .failed(error, retryAfter: nil, final: false)
        }
    }

    private func outcome(status: Int, body: Data) -> Outcome {
        switch status {
        case 200:
            return body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? .quiet : .payload(body)
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
