#if canImport(CloudKit)
import Foundation

/// The two Foundation calls CloudKit queries need that only Apple's Foundation has: predicates from format strings
/// and sort descriptors by key (CloudKit accepts no other kind).
///
/// On Linux, where the bridge is type-checked against a stand-in for CloudKit, swift-corelibs-foundation marks
/// both unavailable; the second branch exists only so that the rest of the bridge type-checks there. These lines
/// are the only ones of the bridge that CI can't check.
enum QueryFormat {
    static func predicate(_ format: String, _ arguments: [Any]) -> NSPredicate {
        #if canImport(Darwin)
        NSPredicate(format: format, argumentArray: arguments)
        #else
        NSPredicate(value: true)
        #endif
    }

    static func sortDescriptor(field: String, ascending: Bool) -> NSSortDescriptor {
        #if canImport(Darwin)
        NSSortDescriptor(key: field, ascending: ascending)
        #else
        NSSortDescriptor(keyPath: \NSString.length, ascending: ascending)
        #endif
    }
}
#endif
