import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
private let systemRead = Glibc.read
#elseif canImport(Darwin)
private let systemRead = Darwin.read
#endif

extension FileHandle {
    /// The next bytes the pipe or file has, waiting for some; empty at its end. Foundation's `availableData` and
    /// `readDataToEndOfFile()` crash (a `try!` inside swift-corelibs-foundation) when a signal interrupts the read,
    /// as the SIGCHLD of a child process a test killed does: this reads the descriptor itself and reads again after
    /// an interrupted call.
    package func nextChunk() -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything up to the end, read as ``nextChunk()`` reads.
    package func readAll() -> Data {
        var data = Data()
        while true {
            let chunk = nextChunk()
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }
}
