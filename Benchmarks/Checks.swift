import Foundation

/// Consumes a timed body's result where the optimizer can't see it go unused: a result dropped with `_ =` lets
/// the compiler skip the work that makes it, for the inlinable baselines first.
@_optimize(none)
@inline(never)
func blackHole<Value>(_ value: Value) {}

/// Checks, before a row is timed, that ours and each baseline compute the same thing: a fast side that computes
/// something else measures nothing. A failed check throws, which ends the run with a non-zero status.
enum BenchmarkCheck {
    static func same<Value: Equatable>(
        _ ours: Value, _ baseline: Value, _ row: String, baseline name: String = "the baseline"
    ) throws {
        guard ours == baseline else {
            throw BenchmarkFailure(
                "\(row): ours and \(name) give different results: \(firstDifference(ours, baseline))")
        }
    }

    /// Where two results first differ, shortly: the first unequal element of two arrays, or both values.
    private static func firstDifference<Value: Equatable>(_ ours: Value, _ baseline: Value) -> String {
        func short(_ value: Any) -> String {
            let text = String(describing: value)
            return text.count > 300 ? text.prefix(300) + "..." : text
        }
        if let ours = ours as? [any Equatable], let baseline = baseline as? [any Equatable] {
            guard ours.count == baseline.count else { return "\(ours.count) results against \(baseline.count)" }
            for (index, (left, right)) in zip(ours, baseline).enumerated() where !isEqual(left, right) {
                return "at \(index), \(short(left)) against \(short(right))"
            }
        }
        return "\(short(ours)) against \(short(baseline))"
    }

    private static func isEqual(_ left: any Equatable, _ right: any Equatable) -> Bool {
        func open<Left: Equatable>(_ left: Left) -> Bool { (right as? Left) == left }
        return open(left)
    }

    /// Checks a count, with what was counted.
    static func count(_ found: Int, _ expected: Int, _ row: String, of what: String) throws {
        guard found == expected else {
            throw BenchmarkFailure("\(row): \(found) \(what), expected \(expected)")
        }
    }
}

/// A workload that didn't do what it measures: its time would mean nothing.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
