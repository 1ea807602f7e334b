// Part of the libFuzzer target (see FuzzTarget.swift); built by scripts/fuzz.sh.
import Foundation

/// Runs an async operation to its end on the calling thread, with every job it makes: its own, its child tasks'
/// (they inherit the executor preference) and those of the default actors it calls, which run on the preferred
/// executor of the task that calls them (SE-0417).
///
/// Why the fuzz target needs it: libFuzzer counts mallocs and frees around each input and asks LeakSanitizer
/// about inputs that seem to keep memory. A task on the global pool that has signalled a semaphore still holds
/// what it captured (the input's records) until its thread gets to release it. If libFuzzer looked in between,
/// LeakSanitizer reported those records' `Data` as leaked: they were alive, but a `Data` keeps its storage
/// pointer with tag bits in the top byte, which LeakSanitizer can't follow. That happened only when the pool
/// thread was slow: a flaky CI failure. With every job on the calling thread, all an input allocates is released
/// before the input returns, and every run of an input makes the same allocations.
final class CallingThreadExecutor: TaskExecutor, @unchecked Sendable {
    // Unchecked Sendable: `jobs` and `finished` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    /// Runs `operation` and returns when it, and every job it made, has run to its end.
    static func run(_ operation: @escaping @Sendable () async -> Void) {
        let executor = CallingThreadExecutor()
        let runner = pthread_self()
        let task = Task(executorPreference: executor) {
            await operation()
            // The harness's own guarantee, not something data can break: if the last job ran elsewhere, the
            // leak checks would be flaky again, so say so at once.
            if pthread_equal(pthread_self(), runner) == 0 {
                let message = "CallingThreadExecutor: the operation ended on another thread\n"
                FileHandle.standardError.write(Data(message.utf8))
                abort()
            }
            executor.finish()
        }
        executor.runJobs()
        withExtendedLifetime(task) {}
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func finish() {
        condition.lock()
        finished = true
        condition.unlock()
    }

    /// Runs jobs as they come until the operation has finished and no job is left. The job that finishes the
    /// operation also releases what it captured, and it runs here, so that is done before this returns.
    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
