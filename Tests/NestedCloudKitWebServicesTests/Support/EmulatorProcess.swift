import Foundation
import TestSupport
import Testing

/// The `cloudkit-emulator` executable run as a process, as a developer or CI runs it.
final class EmulatorProcess: Sendable {
    let process: ChildProcess
    let url: URL

    private init(process: ChildProcess, url: URL) {
        self.process = process
        self.url = url
    }

    /// Starts the emulator with `arguments` (plus `--port 0`) and returns once it printed the line it is ready.
    static func start(_ arguments: [String]) async throws -> EmulatorProcess {
        // Standard error to a file, read only to explain a failed start: a pipe nobody drains could block it.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("cloudkit-emulator-\(UUID()).err")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let process = try ChildProcess(
            try CKWSToolTests.toolURL("cloudkit-emulator"), arguments: arguments + ["--port", "0"],
            standardError: .file(errorFile))
        let ready = await readyLine(from: process.output)
        let prefix = "CloudKit emulator listening on "
        guard let line = ready, line.hasPrefix(prefix), let url = URL(string: String(line.dropFirst(prefix.count)))
        else {
            let emulator = EmulatorProcess(process: process, url: URL(fileURLWithPath: "/"))
            await emulator.kill()
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw EmulatorProcessError(
                message: "the emulator didn't say it was ready: \(ready ?? "no output"); standard error: \(errors)")
        }
        return EmulatorProcess(process: process, url: url)
    }

    struct EmulatorProcessError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Kills the process with SIGKILL, as a crash would end it (the system's page cache survives, as it does a
    /// crash), and waits until it is gone.
    func kill() async {
        process.send(SIGKILL)
        await process.exit()
    }

    /// Stops the process with SIGTERM and waits until it is gone.
    func terminate() async {
        process.send(SIGTERM)
        await process.exit()
    }

    /// The first line the process writes; then the rest of its output is drained, so it never blocks on a full pipe.
    private static func readyLine(from handle: FileHandle) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var buffer = Data()
                var resumed = false
                while true {
                    let chunk = handle.nextChunk()
                    if chunk.isEmpty { break }
                    guard !resumed else { continue }
                    buffer.append(chunk)
                    if let newline = buffer.firstIndex(of: 0x0A) {
                        resumed = true
                        continuation.resume(returning: String(decoding: buffer[..<newline], as: UTF8.self))
                    }
                }
                if !resumed {
                    continuation.resume(returning: buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self))
                }
            }
        }
    }
}
