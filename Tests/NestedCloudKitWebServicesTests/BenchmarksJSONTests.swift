import Foundation
import Testing

/// `Benchmarks --json` is read by scripts: every line must be JSON.
@Suite struct BenchmarksJSONTests {
    @Test func everyLineOfTheJSONReportParses() async throws {
        let process = Process()
        process.executableURL = try CKWSToolTests.toolURL("Benchmarks")
        // The memory workloads: one has no target, the other a baseline that can be too small to measure, which
        // gave `inf`.
        process.arguments = ["--quick", "--json", "--only", "memory"]
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let (outputData, errorData) = await CKWSToolTests.finish(process, output: output, error: error)
        #expect(process.terminationStatus == 0, "\(String(decoding: errorData, as: UTF8.self))")

        let lines = String(decoding: outputData, as: UTF8.self).split(separator: "\n")
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
