import GRDB
import NestedCloudKitCodable

/// `ncs_now()`: the store's clock in SQL, in seconds since 1970, on every connection the store opens. A change
/// queued by any of the store's statements records when (``PendingChange/queuedAt``) by the clock the store was
/// given, a test's virtual one included, without each caller passing the time.
enum StoreClockFunction {
    /// The function's name in SQL.
    static let name = "ncs_now"

    /// A configuration whose connections have the function, over `base`.
    static func configuration(_ base: Configuration, clock: any CloudClock) -> Configuration {
        var configuration = base
        configuration.prepareDatabase { db in
            db.add(
                function: DatabaseFunction(name, argumentCount: 0, pure: false) { _ in
                    clock.now().timeIntervalSince1970
                })
        }
        return configuration
    }
}
