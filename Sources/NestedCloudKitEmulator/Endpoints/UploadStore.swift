import Foundation
import NIOConcurrencyHelpers

/// Assets between their upload and the save that names them: the upload URLs handed out, and the bytes posted
/// to them by receipt. An upload URL works for 15 minutes of the emulator's clock, as CloudKit's do.
final class UploadStore: Sendable {
    static let urlLifetime: TimeInterval = 15 * 60
    /// The largest asset: 50 MB, as the property metrics page says (another page says 15 MB).
    static let maximumSize = 50 * 1024 * 1024

    private struct State {
        var urls: [String: Date] = [:]
        var receipts: [String: Data] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let clock: EmulatorClock

    init(clock: EmulatorClock) {
        self.clock = clock
    }

    /// A new upload ID, for the URL `assets/upload` answers with.
    func newUpload() -> String {
        let id = UUID().uuidString
        let now = clock.now()
        state.withLockedValue { state in
            state.urls = state.urls.filter { now.timeIntervalSince($0.value) <= Self.urlLifetime }
            state.urls[id] = now
        }
        return id
    }

    /// Takes the bytes posted to an upload URL, and answers with the receipt a save names them by.
    func receive(_ data: Data, upload id: String) throws(ServerError) -> String {
        let now = clock.now()
        let result = state.withLockedValue { state -> Result<String, ServerError> in
            guard let issued = state.urls[id] else {
                return .failure(ServerError(.notFound, "no upload URL \(id): ask assets/upload for one"))
            }
            guard now.timeIntervalSince(issued) <= Self.urlLifetime else {
                state.urls[id] = nil
                return .failure(
                    ServerError(.accessDenied, "the upload URL expired 15 minutes after assets/upload gave it"))
            }
            guard data.count <= Self.maximumSize else {
                return .failure(.badRequest("an asset holds at most 50 MB; this one is \(data.count) bytes"))
            }
            state.urls[id] = nil
            state.receipts[id] = data
            return .success(id)
        }
        return try result.get()
    }

    func data(receipt: String) -> Data? {
        state.withLockedValue { $0.receipts[receipt] }
    }

    func reset() {
        state.withLockedValue { $0 = State() }
    }
}
