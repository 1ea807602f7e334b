import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port held by a socket that is bound but never listens: connecting to it is refused, and no other
/// server can take the port while the socket lives. The socket stays open until the test process ends, on
/// purpose: a port handed back could be given to the next server a parallel test starts.
enum ReservedPort {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func make() throws -> UInt16 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw Failure(description: "binding a loopback port failed: errno \(errno)")
        }
        return UInt16(bigEndian: address.sin_port)
    }
}
