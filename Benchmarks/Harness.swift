import Foundation

/// Times work as the median of several repetitions after a warm-up: single timings on a shared machine are
/// noise, medians of ratios taken in the same run are not.
// The async `median` is the synchronous one's twin; a caller's closure picks the right one by its own effects.
// swift-format-ignore: AmbiguousTrailingClosureOverload
struct Harness {
    let repetitions: Int
    let warmups: Int

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
