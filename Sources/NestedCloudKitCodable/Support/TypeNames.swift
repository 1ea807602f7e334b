import Foundation

/// Type names, computed once per type: `String(describing:)` on a type demangles its name, which costs more than
/// encoding a small record, and the default record type asks for it for every record.
enum TypeNames {
    private static let cache = Locked<[ObjectIdentifier: String]>([:])

    static func name(of type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = cache.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        cache.withLock { $0[key] = name }
        return name
    }
}
