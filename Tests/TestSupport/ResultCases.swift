extension Result {
    /// The error of a failed result; `nil` for a success.
    package var failureOrNil: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }

    /// Whether the result is a success.
    package var succeeded: Bool {
        if case .success = self { true } else { false }
    }
}
