import Foundation

/// Lets a few observations' reads run at once, the rest waiting their turn: after a save, every observation of its
/// type reads again, and on a device of few cores hundreds of them reading together would take the cores the app's
/// next save and its own reads need. Delivery is background work: it takes at most half the cores (one of two),
/// and coalesces while it waits (an observation reads once for all the changes it was woken by).
actor ObservationReadGate {
    private let width: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)) {
        self.width = max(1, width)
    }

    /// Runs `read` when its turn comes.
    func run<T: Sendable>(_ read: @Sendable () async throws -> T) async throws -> T {
        if running < width {
            running += 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
        defer { handOn() }
        return try await read()
    }

    /// Gives the turn to the next read waiting, or frees it.
    private func handOn() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
