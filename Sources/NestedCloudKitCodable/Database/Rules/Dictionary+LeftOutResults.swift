extension Dictionary {
    /// Fails with ``CloudDatabaseError/internalError(_:)`` each of the items a server's answer left out, so that
    /// every item a request asked for has a result, as ``CloudDatabase`` promises its callers.
    ///
    /// - Parameters:
    ///   - keys: The items the request asked for.
    ///   - answer: The answer that should have held them, for the error: "CloudKit's response to records/lookup".
    package mutating func failLeftOut<Success>(_ keys: some Sequence<Key>, by answer: String)
    where Value == Result<Success, CloudDatabaseError> {
        for key in keys where self[key] == nil {
            self[key] = .failure(.internalError("\(answer) left out \(key)"))
        }
    }
}
