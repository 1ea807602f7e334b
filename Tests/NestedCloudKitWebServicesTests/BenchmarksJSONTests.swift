import Foundation
import TestSupport
import Testing

/// `Benchmarks --json` is read by scripts: every line must be JSON.
@Suite struct BenchmarksJSONTests {
    @Test func everyLineOfTheJSONReportParses() async throws {
        // The memory workloads: one has no target, the other a baseline that can be too small to measure, which
        // gave `inf`.
        let result = try await ChildProcess.run(
            try CKWSToolTests.toolURL("Benchmarks"), arguments: ["--quick", "--json", "--only", "memory"])
        #expect(result.termination == .exited(0), "\(result.error)")

        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 2)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            objects.append(try #require(object as? [String: Any], "\(line)"))
        }
        #expect(objects.map { $0["name"] as? String } == ["memory.encode", "memory.decode"])
        // memory.decode has no target: null, where Swift prints `inf`.
        #expect(objects.last?["target"] is NSNull)
    }
}
