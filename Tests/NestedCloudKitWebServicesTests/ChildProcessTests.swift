import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The process helper the tool and crash tests start programs with, in place of Foundation's `Process`.
@Suite struct ChildProcessTests {
    @Test func aChildsOutputErrorAndExitStatusComeBack() async throws {
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.termination == .exited(3))
        #expect(result.output == "out\n")
        #expect(result.error == "err\n")
    }

    @Test func aKilledChildEndsBySignal() async throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "echo ready; exec sleep 600"])
        #expect(String(decoding: await child.nextOutput(), as: UTF8.self) == "ready\n")
        #expect(!child.hasExited)
        child.send(SIGKILL)
        #expect(await child.exit() == .signalled(SIGKILL))
        #expect(child.hasExited)
    }

    #if canImport(Glibc)
    /// A descriptor the test process holds open (not close-on-exec) doesn't reach the child: another test's pipe
    /// kept open in a child would keep that test's read from ever ending.
    @Test func aChildHoldsOnlyItsStandardDescriptors() async throws {
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        #expect(held > 2)
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/ls"), arguments: ["/proc/self/fd"])
        // 3 is the directory `ls` itself opened to list.
        #expect(result.output.split(separator: "\n").sorted() == ["0", "1", "2", "3"])
    }
    #endif
}
