import Foundation

/// Type names, computed once per type: `String(describing:)` on a type demangles its name, which costs more than
/// encoding a small record, and the default record type asks for it for every record.
enum TypeNames {
    private static let cache = LockedDictionary<ObjectIdentifier, String>()

    static func name(of type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = cache[key] { return name }
        let name = String(describing: type)
        cache[key] = name
        return name
    }
}

/// A dictionary shared across threads, behind a lock.
///
/// `@unchecked Sendable` is sound: the only stored state is `storage`, and every access to it holds `lock`.
/// (`Mutex` would say so to the compiler, but needs macOS 15 and iOS 18; this library supports earlier releases.)
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private var storage: [Key: Value] = [:]
    private let lock = NSLock()

    subscript(key: Key) -> Value? {
        get { lock.withLock { storage[key] } }
        set { lock.withLock { storage[key] = newValue } }
    }
}
