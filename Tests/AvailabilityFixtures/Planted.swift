// Fixtures of `scripts/check-apple-availability --self-test`, which checks them against macOS 12 / iOS 15 / tvOS 15 /
// watchOS 8 / visionOS 1. Each use here is newer than that, and its line says what the checker must report on it;
// the self-test fails if it misses one, or reports a line that says nothing. No target builds these files.
import Foundation
import Observation
import RegexBuilder
import Synchronization

/// A type used only in a stored property's type is a use too.
struct Timings {
    var timeout: Duration  // expect-availability: 'Duration'
}

func pause() async throws {
    try await Task.sleep(for: .seconds(1))  // expect-availability: 'Task.sleep(for:tolerance:clock:)'
}

func now() -> ContinuousClock.Instant {  // expect-availability: 'ContinuousClock.Instant'
    ContinuousClock.now  // expect-availability: 'ContinuousClock.now'
}

final class Counter: Sendable {
    let count = Mutex(0)  // expect-availability: 'Mutex'
}

func temporaryFile() -> URL {
    URL(filePath: "/tmp/file")  // expect-availability: 'URL.init(filePath:directoryHint:relativeTo:)'
}

func utc() -> TimeZone {
    .gmt  // expect-availability: 'TimeZone.gmt'
}

func trimmed(_ text: String) -> Substring {
    text.trimmingPrefix("a")  // expect-availability: 'Collection.trimmingPrefix(_:)'
}

/// `String.regex` has no `@available` of its own: it has its extension's (RegexBuilder's interface).
func component() -> Regex<Substring> {  // expect-availability: 'Regex'
    "abc".regex  // expect-availability: 'String.regex'
}

/// What the macro expands to (the registrar, the tracked properties' accessors) is reported on the declaration it is
/// attached to.
@Observable  // expect-availability: '@Observable'
final class Model {  // expect-availability: 'ObservationRegistrar.init()', 'Observable'
    var name = ""  // expect-availability: 'ObservationRegistrar.willSet(_:keyPath:)'
}

/// An iOS-only `@available` doesn't raise macOS.
@available(iOS 16, *)
func iOSOnly() -> Duration {  // expect-availability: 'Duration'
    .zero  // expect-availability: 'Duration.zero'
}

/// Not compiled for macOS, but for iOS 15 it is.
@available(macOS, unavailable)
func notOnMac() -> Duration {  // expect-availability: 'Duration'
    .zero  // expect-availability: 'Duration.zero'
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct Limits {
    var timeout: Duration
    /// Fine in a type that is available from macOS 13, but not this one: Mutex is macOS 15.
    func lock() -> Mutex<Int> {  // expect-availability: 'Mutex'
        Mutex(0)  // expect-availability: 'Mutex'
    }
}

struct Settings {
    /// An Apple compiler refuses `@available` on a stored property (it would change the type's layout).
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    var timeout: Duration  // expect-availability: 'a stored property with @available'
}
