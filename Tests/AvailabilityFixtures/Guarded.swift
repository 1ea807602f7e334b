// Fixtures of `scripts/check-apple-availability --self-test`: the same uses as Planted.swift, each where it is fine
// (inside `@available` or `#available`, or not reachable), and uses whose newest form an Apple compiler doesn't bind.
// The checker must see each use marked `expect-guarded` (it needs more than macOS 12) and report none of them.
import Foundation
import Synchronization

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func pauseWhenAvailable() async throws {
    try await Task.sleep(for: .seconds(1))  // expect-guarded: 'Task.sleep(for:tolerance:clock:)'
    _ = URL(filePath: "/tmp/file")  // expect-guarded: 'URL.init(filePath:directoryHint:relativeTo:)'
    _ = TimeZone.gmt  // expect-guarded: 'TimeZone.gmt'
}

func pauseIfAvailable() async throws {
    if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        try await Task.sleep(for: .seconds(1))  // expect-guarded: 'Task.sleep(for:tolerance:clock:)'
    }
    if #unavailable(macOS 13, iOS 16, tvOS 16, watchOS 9) {
        print("too old")
    } else {
        _ = ContinuousClock.now  // expect-guarded: 'ContinuousClock.now'
    }
    guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
    _ = Duration.zero  // expect-guarded: 'Duration.zero'
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct GuardedTimings {
    var timeout: Duration  // expect-guarded: 'Duration'
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Timings {
    var doubled: Duration { timeout * 2 }  // expect-guarded: 'Duration.*(_:_:)'
}

struct Defaults {
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    static let timeout: Duration = .seconds(5)  // expect-guarded: 'Duration.seconds(_:)'

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    var timeout: Duration { .seconds(5) }  // expect-guarded: 'Duration.seconds(_:)'
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class Locked: Sendable {
    let count = Mutex(0)  // expect-guarded: 'Mutex.init(_:)'
}

/// `FixedWidthInteger.&*` is macOS 15 as a requirement; the protocol extension's, which an Apple compiler binds, is not.
func wrappingProduct(_ a: UInt64, _ b: UInt64) -> UInt64 {
    a &* b  // expect-guarded: 'FixedWidthInteger.&*(_:_:)'
}

/// `for await` calls `next(isolation:)` (macOS 15) only where it is available, and `next()` elsewhere.
func total(_ numbers: AsyncStream<Int>) async -> Int {
    var sum = 0
    for await number in numbers {  // expect-guarded: 'AsyncStream.Iterator.next(isolation:)'
        sum += number
    }
    return sum
}

@available(*, unavailable)
func neverCalled() -> Duration {
    .zero  // expect-guarded: 'Duration.zero'
}
