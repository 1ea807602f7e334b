import Foundation

/// One line of the report: our time against a baseline's, and the target the ratio must meet.
struct BenchmarkResult {
    var name: String
    var ours: Double
    var baseline: String
    var baselineSeconds: Double
    /// The largest acceptable `ours / baseline`.
    var target: Double
    /// Counts that aren't times: round trips, records, bytes.
    var details: [(String, Int)] = []
    /// A failed check that isn't a ratio (for example round trips above the floor).
    var failure: String?

    var ratio: Double { baselineSeconds > 0 ? ours / baselineSeconds : .infinity }
    var met: Bool { failure == nil && ratio <= target }

    /// The result as one line of JSON. A number JSON can't carry (a ratio over a baseline too fast to measure, no
    /// target) is `null`, and strings are escaped by `JSONSerialization`, so every line parses.
    var json: String {
        var object: [String: Any] = [
            "name": name,
            "ours_s": Self.jsonNumber(ours),
            "baseline": baseline,
            "baseline_s": Self.jsonNumber(baselineSeconds),
            "ratio": Self.jsonNumber(ratio),
            "target": Self.jsonNumber(target),
            "met": met,
        ]
        for (key, value) in details { object[key] = value }
        if let failure { object["failure"] = failure }
        // Sorted keys, so the same results print the same bytes. The objects hold only strings, numbers, booleans
        // and nulls, which JSONSerialization always takes; the fallback is still valid JSON.
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? #"{"error":"unserializable result"}"#
    }

    /// The number, or JSON's `null` where it isn't finite (JSON has no infinity or NaN).
    private static func jsonNumber(_ value: Double) -> Any {
        value.isFinite ? value : NSNull()
    }
}

enum Report {
    static func table(_ results: [BenchmarkResult]) -> String {
        var lines = [
            pad("workload", 18) + pad("ours", 12) + pad("baseline", 28) + pad("baseline time", 15) + pad("ratio", 8)
                + "target"
        ]
        for result in results {
            // Memory rows are in bytes: `memory.encode`, `memory.decode`, `sync.memory`.
            let isTime = !result.name.hasPrefix("memory.") && !result.name.hasSuffix(".memory")
            lines.append(
                pad(result.name, 18) + pad(isTime ? format(result.ours) : bytes(result.ours), 12)
                    + pad(result.baseline, 28)
                    + pad(isTime ? format(result.baselineSeconds) : bytes(result.baselineSeconds), 15)
                    + pad(String(format: "%.2f", result.ratio), 8)
                    + "≤ \(String(format: "%.1f", result.target)) " + (result.met ? "met" : "MISSED")
                    + (result.details.isEmpty
                        ? "" : "  " + result.details.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
                    + (result.failure.map { "  (\($0))" } ?? "")
            )
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private static func format(_ seconds: Double) -> String {
        seconds >= 1 ? String(format: "%.2f s", seconds) : String(format: "%.1f ms", seconds * 1000)
    }

    private static func bytes(_ value: Double) -> String {
        String(format: "%.1f MB", value / 1_000_000)
    }
}
