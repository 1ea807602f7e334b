import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run as a child process, started with `posix_spawn` instead of Foundation's `Process`.
///
/// swift-corelibs-foundation's `Process.run()` (Swift 6.3.1 and earlier) copies the whole 256-byte `d_name` of each
/// `/proc/self/fd` entry while it looks for descriptors to close, reading past glibc's buffer: the suite crashed in
/// `memcpy` about one full run in six ("Bad pointer dereference"; fixed upstream in swift-corelibs-foundation#5472).
/// This spawns the program itself and has the child close every descriptor above standard error, so one test's
/// pipes never stay open in another test's child.
package final class ChildProcess: @unchecked Sendable {
    /// How the child ended.
    package enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Where the child's standard error goes.
    package enum StandardError: Sendable {
        /// To ``errorOutput``, which the test must drain (or the child blocks on a full pipe).
        case pipe
        /// Appended to a file.
        case file(URL)
        /// To the test process's own standard error.
        case inherited
    }

    /// The child's process ID.
    package let identifier: pid_t
    /// The read end of the child's standard output.
    package let output: FileHandle
    /// The read end of the child's standard error, when it was asked for as ``StandardError/pipe``.
    package let errorOutput: FileHandle?

    private let lock = NSLock()
    // Guarded by `lock`: set once the child is reaped, after which its ID may belong to another process.
    private var reaped: Termination?

    /// Starts `executable` with `arguments`; with `environment` nil it inherits the test process's environment.
    package init(
        _ executable: URL, arguments: [String], environment: [String: String]? = nil,
        standardError: StandardError = .pipe
    ) throws {
        let outputPipe = try Self.makePipe()
        let errorPipe = try standardError.isPipe ? Self.makePipe() : nil
        defer {
            close(outputPipe.write)
            if let errorPipe { close(errorPipe.write) }
        }

        var actions = Self.makeFileActions()
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe.write, 1)
        switch standardError {
        case .pipe:
            if let errorPipe { posix_spawn_file_actions_adddup2(&actions, errorPipe.write, 2) }
        case .file(let url):
            posix_spawn_file_actions_addopen(&actions, 2, url.path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        case .inherited:
            break
        }
        var attributes = Self.makeAttributes()
        defer { posix_spawnattr_destroy(&attributes) }
        Self.closeOtherDescriptors(&actions, &attributes)

        let argv = ([executable.path] + arguments).map { strdup($0) }
        let environmentLines =
            environment.map { $0.map { "\($0.key)=\($0.value)" } }
            ?? ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let envp = environmentLines.map { strdup($0) }
        defer {
            for string in argv + envp { free(string) }
        }
        var identifier: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                // Never nil: both arrays hold at least their terminating nil.
                guard let argvStart = argvBuffer.baseAddress, let envpStart = envpBuffer.baseAddress else {
                    return EINVAL
                }
                return posix_spawn(&identifier, executable.path, &actions, &attributes, argvStart, envpStart)
            }
        }
        guard status == 0 else {
            close(outputPipe.read)
            if let errorPipe { close(errorPipe.read) }
            throw ChildProcessError(
                message: "couldn't start \(executable.lastPathComponent): \(String(cString: strerror(status)))")
        }
        self.identifier = identifier
        self.output = FileHandle(fileDescriptor: outputPipe.read, closeOnDealloc: true)
        self.errorOutput = errorPipe.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
    }

    /// Sends `signal` to the child, unless it was already reaped (its ID may be another process's by then).
    package func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if reaped == nil { kill(identifier, signal) }
    }

    /// Whether the child has ended (it stays a zombie, so its ID stays its own, until ``waitForExit()`` reaps it).
    package var hasExited: Bool {
        if termination != nil { return true }
        var info = siginfo_t()
        return waitid(P_PID, id_t(identifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && Self.pid(of: info) != 0
    }

    /// How the child ended, once ``waitForExit()`` has seen it.
    package var termination: Termination? {
        lock.lock()
        defer { lock.unlock() }
        return reaped
    }

    /// Blocks until the child ends and returns how. Call it off Swift's cooperative threads.
    @discardableResult
    package func waitForExit() -> Termination {
        // Wait without reaping, so `send(_:)` can't signal a reused ID; then reap under the lock.
        var info = siginfo_t()
        while waitid(P_PID, id_t(identifier), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        lock.lock()
        defer { lock.unlock() }
        if let reaped { return reaped }
        var status: Int32 = 0
        while waitpid(identifier, &status, 0) == -1, errno == EINTR {}
        // The `WIFEXITED` family are macros Swift can't import: the low seven bits are the signal, zero on exit.
        let termination: Termination =
            status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        reaped = termination
        return termination
    }

    struct ChildProcessError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    // MARK: Spawning

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [0, 0]
        // Close-on-exec, so a child another test starts in the moment before its spawn closes them can't keep them
        // open (`pipe2`, which sets it atomically, is a GNU extension Swift's Glibc module doesn't declare).
        let result = pipe(&descriptors)
        if result == 0 {
            for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        guard result == 0 else {
            throw ChildProcessError(message: "couldn't make a pipe: \(String(cString: strerror(errno)))")
        }
        return (descriptors[0], descriptors[1])
    }

    #if canImport(Darwin)
    private static func makeFileActions() -> posix_spawn_file_actions_t {
        var actions: posix_spawn_file_actions_t = nil
        posix_spawn_file_actions_init(&actions)
        return actions
    }

    private static func makeAttributes() -> posix_spawnattr_t {
        var attributes: posix_spawnattr_t = nil
        posix_spawnattr_init(&attributes)
        return attributes
    }

    /// Darwin closes every descriptor the file actions didn't set up when asked to.
    private static func closeOtherDescriptors(
        _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t
    ) {
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
    }

    private static func pid(of info: siginfo_t) -> pid_t { info.si_pid }
    #else
    private static func makeFileActions() -> posix_spawn_file_actions_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        return actions
    }

    private static func makeAttributes() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        return attributes
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34 and later close every descriptor from 3 up in the child; Swift's Glibc module doesn't declare the
    /// call (a GNU extension), so it is looked up by name. Without it, the pipes are still close-on-exec.
    private static func closeOtherDescriptors(
        _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t
    ) {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
    }

    private static func pid(of info: siginfo_t) -> pid_t { info._sifields._sigchld.si_pid }
    #endif
}

extension ChildProcess {
    /// Runs `executable` to its end and returns how it ended and what it wrote. Both outputs are read, and the exit
    /// waited for, on threads of their own: Swift's cooperative threads are as many as the cores, and a loopback
    /// server the child talks to may be running on them.
    package static func run(
        _ executable: URL, arguments: [String], environment: [String: String]? = nil
    ) async throws -> (termination: Termination, output: String, error: String) {
        let child = try ChildProcess(executable, arguments: arguments, environment: environment)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let errorRead = DispatchSemaphore(value: 0)
                let errorData = LockedData()
                Thread.detachNewThread {
                    errorData.set(child.errorOutput?.readAll() ?? Data())
                    errorRead.signal()
                }
                let outputData = child.output.readAll()
                errorRead.wait()
                let termination = child.waitForExit()
                continuation.resume(
                    returning: (
                        termination, String(decoding: outputData, as: UTF8.self),
                        String(decoding: errorData.get(), as: UTF8.self)
                    ))
            }
        }
    }

    /// Waits for the child to end on a thread of its own, off Swift's cooperative threads.
    @discardableResult
    package func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.waitForExit()) }
        }
    }

    /// The next bytes of the child's standard output (empty at its end), read on a thread of its own.
    package func nextOutput() async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.output.nextChunk()) }
        }
    }
}

extension ChildProcess.Termination {
    /// The exit status, or nil when a signal ended the child.
    package var exitStatus: Int32? {
        if case .exited(let status) = self { status } else { nil }
    }
}

/// Bytes one thread writes and another reads once it was signalled.
private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func set(_ value: Data) {
        lock.lock()
        defer { lock.unlock() }
        data = value
    }

    func get() -> Data {
        lock.lock()
        defer { lock.unlock() }
        return data
    }
}

extension ChildProcess.StandardError {
    fileprivate var isPipe: Bool {
        if case .pipe = self { true } else { false }
    }
}
