/// A lock for async code: holders take turns, first come first served, and a holder may suspend (read a file,
/// wait for a database) without blocking a thread.
///
/// Work made of several storage steps that mustn't interleave with another of its kind goes through one: the shared
/// copies' refreshes, and the emulator's writes to one database (a request that reads the server's records to check
/// change tags, then saves, sees no other request's write in between). A thread lock held across those steps would
/// block one of the few cooperative threads for as long as the storage takes.
package actor AsyncSerialLock {
    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init() {}

    /// Runs `body` once every earlier holder is done; the next waits until it returns or throws.
    package func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        guard isHeld else {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            isHeld = false
        } else {
            // The turn passes straight to the next holder, so `isHeld` stays true.
            waiting.removeFirst().resume()
        }
    }
}
