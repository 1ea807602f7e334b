/// Lets code that holds a value of unknown type see through an `Optional`.
protocol OptionalProtocol {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrappedValue: Any? { self.map { $0 as Any } }
}
