import Foundation

// Models see Swift's standard errors; callers see ours.
//
// A model's `init(from:)` may catch `DecodingError.keyNotFound` to fall back to a default, as it would with
// `JSONDecoder`, so the containers the model calls throw `DecodingError`s, each carrying the library's
// `CKCodableError` (with the record, field and coding path) as its underlying error. The decoder's entry points
// unwrap it again, and wrap whatever else a model throws, so callers always get a `CKCodableError`.

extension CKCodableError {
    /// This error as the `DecodingError` of the same kind, carrying this error as its underlying error.
    var decodingError: DecodingError {
        let context = { (path: [any CodingKey]) in
            DecodingError.Context(codingPath: path, debugDescription: self.description, underlyingError: self)
        }
        switch code {
        case .missingField:
            let name = missingKey ?? codingPath.last?.stringValue ?? ""
            // Swift's key-not-found context is the path of the container the key is missing from.
            let containerPath = codingPath.last?.stringValue == name ? Array(codingPath.dropLast()) : codingPath
            return .keyNotFound(NamedKey(name), context(containerPath))
        case .typeMismatch:
            return .typeMismatch(Any.self, context(codingPath))
        case .missingRecord:
            return .valueNotFound(Any.self, context(codingPath))
        default:
            return .dataCorrupted(context(codingPath))
        }
    }

    /// The library's error inside a `DecodingError` that a container threw, or `nil` for a model's own error.
    init?(unwrapping error: DecodingError) {
        let context: DecodingError.Context? =
            switch error {
            case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
                .dataCorrupted(let context):
                context
            @unknown default: nil
            }
        guard let ours = context?.underlyingError as? CKCodableError else { return nil }
        self = ours
    }

    /// What an error thrown while a model decoded the record `recordID` (at `recordPath`) means to a caller:
    /// the library's own error, unwrapped; or the model's error, wrapped with the record, field and path.
    /// The decoder's own signals and cancellation pass through unchanged.
    static func fromModel(_ error: any Error, recordID: CloudRecord.ID, recordPath: CodingPath) -> any Error {
        switch error {
        case let ours as CKCodableError:
            return ours
        case let decodingError as DecodingError:
            if let ours = CKCodableError(unwrapping: decodingError) { return ours }
            let path = decodingError.codingPath
            return rejectedByModel(
                error, description: decodingError.summary,
                at: location(path, recordID: recordID, recordPath: recordPath))
        case is DecodingSession.NeedsMoreRecords, is CancellationError:
            return error
        default:
            return rejectedByModel(
                error, description: "\(error)",
                at: location(recordPath.keys, recordID: recordID, recordPath: recordPath))
        }
    }

    /// Where a model's error happened: the field is the first key below the record's own path.
    private static func location(_ path: [any CodingKey], recordID: CloudRecord.ID, recordPath: CodingPath)
        -> DecodingLocation
    {
        let depth = recordPath.keys.count
        let field = path.count > depth ? path[depth].stringValue : nil
        return DecodingLocation(path: CodingPath(keys: path), recordID: recordID, field: field)
    }

    /// Any error at a public entry point of the decoder, as the `CKCodableError` the entry point promises.
    /// `CancellationError` stays itself, as async Swift APIs report cancellation, unless `wrappingCancellation`
    /// asks for ``Code/cancelled`` (the completion-handler form, which reports `CKCodableError`s only).
    static func atEntryPoint(_ error: any Error, rootID: CloudRecord.ID, wrappingCancellation: Bool = false)
        -> any Error
    {
        switch error {
        case let ours as CKCodableError: return ours
        case let decodingError as DecodingError:
            return CKCodableError(unwrapping: decodingError)
                ?? rejectedByModel(
                    error, description: decodingError.summary,
                    at: DecodingLocation(path: CodingPath(keys: decodingError.codingPath), recordID: rootID, field: nil)
                )
        case is CancellationError where !wrappingCancellation: return error
        case is CancellationError: return cancelled(rootID)
        case let databaseError as CloudDatabaseError:
            return CKCodableError.databaseError(
                databaseError, at: DecodingLocation(path: .root, recordID: rootID, field: nil))
        default:
            return rejectedByModel(
                error, description: "\(error)", at: DecodingLocation(path: .root, recordID: rootID, field: nil))
        }
    }
}

extension DecodingError {
    /// The coding path of the error's context.
    var codingPath: [any CodingKey] {
        switch self {
        case .keyNotFound(let key, let context): context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath
        @unknown default: []
        }
    }

    /// What the error says, without Swift's boilerplate.
    var summary: String {
        switch self {
        case .keyNotFound(let key, let context): "no value for \"\(key.stringValue)\" (\(context.debugDescription))"
        case .typeMismatch(let type, let context): "a value of another type than \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context): "no \(type) value (\(context.debugDescription))"
        case .dataCorrupted(let context): context.debugDescription
        @unknown default: "\(self)"
        }
    }
}

/// Runs a container method that a model's `init(from:)` called, so the library's errors reach the model as
/// Swift's `DecodingError` (see ``CKCodableError``'s `decodingError`); the model's own errors pass unchanged.
@inline(__always)
func throwingDecodingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CKCodableError {
        throw error.decodingError
    }
}
