#if canImport(CloudKit)
import Foundation

/// The Foundation calls CloudKit queries need that only Apple's Foundation has: predicates from format strings
/// and sort descriptors by key (CloudKit accepts no other kind).
///
/// On Linux, where the bridge is type-checked against a stand-in for CloudKit, swift-corelibs-foundation marks
/// both unavailable; the second branch exists only so that the rest of the bridge type-checks there. These lines
/// are the only ones of the bridge that CI can't run: the comparisons they receive are checked instead.
enum QueryFormat {
    /// The predicate of comparisons that must all hold: `TRUEPREDICATE` for none, the comparison itself for one,
    /// an `AND` compound for more (the only compound `CKQuery` accepts).
    static func predicate(_ comparisons: [QueryComparison]) -> NSPredicate {
        switch comparisons.count {
        case 0: NSPredicate(value: true)
        case 1: predicate(comparisons[0])
        default: NSCompoundPredicate(andPredicateWithSubpredicates: comparisons.map(predicate))
        }
    }

    private static func predicate(_ comparison: QueryComparison) -> NSPredicate {
        #if canImport(Darwin)
        NSPredicate(format: comparison.format, argumentArray: comparison.arguments)
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
