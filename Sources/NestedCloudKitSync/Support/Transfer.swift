/// A value handed out of a database closure to the task that awaits it.
///
/// `@unchecked Sendable` is sound because of how it is used: the value is made inside the closure, and the closure
/// returns it; nothing else holds it, so it moves from one task to the other and is never shared. It lets models
/// that aren't `Sendable` be read from the store, as they could before reads ran in one transaction.
struct Transfer<Value>: @unchecked Sendable {
    let value: Value
}
