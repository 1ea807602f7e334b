import Dispatch

/// A dispatch queue for work that blocks on files (GRDB opening a SQLite file, reading an asset's file), awaited
/// without blocking a thread of the cooperative pool, which every request shares (one thread per core).
package struct BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// A serial queue runs one piece of work at a time; a concurrent one lets Dispatch run several, on threads of
    /// its own.
    package init(label: String, concurrent: Bool = false) {
        queue = DispatchQueue(label: label, attributes: concurrent ? .concurrent : [])
    }

    /// Runs `work` on the queue, and waits for it without blocking the caller's thread.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
