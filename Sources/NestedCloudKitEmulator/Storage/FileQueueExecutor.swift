import Dispatch

/// The executor of an emulator actor that blocks on files (the database registry, a subscription store, the schema
/// registry): a serial dispatch queue of its own. What blocks in the actor (GRDB opening or closing a SQLite file, a
/// directory scan, a file read or written whole) holds that queue's thread, never one of the cooperative pool's,
/// which every request of the emulator shares (one per core). Each actor has its own, so that one's slow work
/// (a container's directory scan) doesn't hold up another's (a save's schema check).
final class FileQueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.marker, value: ObjectIdentifier(self))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Whether the caller runs on this executor's queue.
    func isCurrent() -> Bool {
        // `dispatchPrecondition` would trap; this asks the same question without stopping the program.
        DispatchQueue.getSpecific(key: Self.marker) == ObjectIdentifier(self)
    }

    private static let marker = DispatchSpecificKey<ObjectIdentifier>()
}
