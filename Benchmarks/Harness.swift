import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Times work as the median of several repetitions after a warm-up: single timings on a shared machine are
/// noise, medians taken in the same run, interleaved, are not.
// The async `median` is the synchronous one's twin; a caller's closure picks the right one by its own effects.
// swift-format-ignore: AmbiguousTrailingClosureOverload
struct Harness {
    let repetitions: Int
    let warmups: Int
    /// The least time a set of interleaved synchronous bodies is timed for, in all: bodies that take milliseconds get
    /// more repetitions than ``repetitions``, as seven medians of a 10 ms body swing by a fifth with the machine.
    /// (The async rows' bodies take seconds: they keep ``repetitions``.)
    var minimumSeconds: Double = 0
    /// The most repetitions ``minimumSeconds`` may ask for.
    static let maximumRepetitions = 61

    func median(_ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<warmups { try body() }
        var times: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try body()
            times.append((ContinuousClock.now - start).seconds)
        }
        return times.sorted()[times.count / 2]
    }

    func median(_ body: () async throws -> Void) async rethrows -> Double {
        for _ in 0..<warmups { try await body() }
        var times: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try await body()
            times.append((ContinuousClock.now - start).seconds)
        }
        return times.sorted()[times.count / 2]
    }

    /// Times several bodies interleaved, one repetition of each in turn, and returns each one's median in the
    /// order given. This machine has slow spells of seconds: timed one after another, a baseline can land in one
    /// and the row it is compared with outside it, and their ratio swings by half. Interleaved, a spell falls on
    /// every body alike.
    func interleavedMedians(_ bodies: [() throws -> Void]) throws -> [Double] {
        let warmupStart = ContinuousClock.now
        for _ in 0..<warmups { for body in bodies { try body() } }
        let round = (ContinuousClock.now - warmupStart).seconds / Double(max(warmups, 1))
        var times = Array(repeating: [Double](), count: bodies.count)
        for repetition in 0..<repetitions(forRoundsOf: round) {
            // Each repetition starts with a different body, so none always runs on caches another warmed.
            for offset in bodies.indices {
                let index = (repetition + offset) % bodies.count
                let start = ContinuousClock.now
                try bodies[index]()
                times[index].append((ContinuousClock.now - start).seconds)
            }
        }
        return times.map { $0.sorted()[$0.count / 2] }
    }

    /// How many repetitions give ``minimumSeconds`` when one round of the bodies takes `round` seconds: an odd
    /// number, so the median is one of the times.
    private func repetitions(forRoundsOf round: Double) -> Int {
        guard minimumSeconds > 0, round > 0, round * Double(repetitions) < minimumSeconds else { return repetitions }
        // Capped before it becomes an `Int`: a round too fast for the clock would give a quotient no `Int` holds.
        let wanted = min((minimumSeconds / round).rounded(.up), Double(Self.maximumRepetitions))
        return Int(wanted) | 1
    }

    /// The async twin of the one above.
    func interleavedMedians(_ bodies: [() async throws -> Void]) async throws -> [Double] {
        for _ in 0..<warmups { for body in bodies { try await body() } }
        var times = Array(repeating: [Double](), count: bodies.count)
        for repetition in 0..<repetitions {
            for offset in bodies.indices {
                let index = (repetition + offset) % bodies.count
                let start = ContinuousClock.now
                try await bodies[index]()
                times[index].append((ContinuousClock.now - start).seconds)
            }
        }
        return times.map { $0.sorted()[$0.count / 2] }
    }

    /// As above, for bodies that time themselves (the seconds each returns), such as a latency summed over rounds.
    func interleavedSelfTimedMedians(_ bodies: [() async throws -> Double]) async throws -> [Double] {
        for _ in 0..<warmups { for body in bodies { _ = try await body() } }
        var times = Array(repeating: [Double](), count: bodies.count)
        for repetition in 0..<repetitions {
            for offset in bodies.indices {
                let index = (repetition + offset) % bodies.count
                times[index].append(try await bodies[index]())
            }
        }
        return times.map { $0.sorted()[$0.count / 2] }
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// The resident set size of this process, and its peak since the last ``resetPeak()``, from Linux's `/proc`.
enum ResidentMemory {
    static func current() -> Int? { value(of: "VmRSS") }
    static func peak() -> Int? { value(of: "VmHWM") }

    /// Gives the pages of freed memory back to the system, so that the next growth is measured from a heap with
    /// no free pages to reuse: after a warm-up, the body's allocations fit in what the warm-up freed, and its
    /// growth read as nothing.
    static func releaseFreedPages() {
        #if canImport(Glibc)
        // glibc's `malloc_trim`, which its module doesn't export (it is declared in `malloc.h`).
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Resets the peak to the current size (`/proc/self/clear_refs`, Linux 4.0 and later).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    private static func value(of field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
