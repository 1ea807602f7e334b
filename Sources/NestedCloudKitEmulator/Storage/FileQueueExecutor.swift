import Dispatch

/// The executor of an emulator's actors that own files: the database registry, the subscription stores and the
/// schema registry. Their work runs on a serial dispatch queue of its own, so that what blocks in it (GRDB opening
/// and checkpointing a SQLite file, a directory scan, a subscription or schema file read or written whole) holds
/// that queue's thread, never one of the cooperative pool's, which every request of the emulator shares (one per
/// core). Being actors still serializes each one's state; sharing one queue keeps an emulator's file work to one
/// thread.
final class FileQueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String = "NestedCloudKitEmulator.files") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.marker, value: ObjectIdentifier(self))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Whether the caller runs on this executor's queue: what the tests check an actor's file work against.
    func isCurrent() -> Bool {
        // `dispatchPrecondition` would trap; this asks the same question without stopping the program.
        DispatchQueue.getSpecific(key: Self.marker) == ObjectIdentifier(self)
    }

    private static let marker = DispatchSpecificKey<ObjectIdentifier>()
}
