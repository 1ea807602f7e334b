/// A lock for async code: holders take turns, first come first served.
///
/// The emulator's writes to one database go through one of these, so that a request made of several steps (reading
/// the server's records to check change tags, then saving) sees no other request's write in between.
actor AsyncSerialLock {
    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
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
