import Foundation

extension CKRecordDecoder {
    /// Reads the records with some IDs, handing each to `receive`: how ``decodeAll(_:from:fetch:)`` reads a level.
    ///
    /// `receive` takes a record asked for and not handed before, and says so; it drops any other record and
    /// returns `false`. So a store may hand more than it was asked for (every record the last level references,
    /// read together) and count what was taken to know whether anything asked for is left to read.
    package typealias RecordFetch = (_ ids: [CloudRecord.ID], _ receive: (consuming CloudRecord) -> Bool) throws
        -> Void

    /// Decodes many values of one type from their root records, reading the records they reference through
    /// `fetch`, synchronously: how a local store decodes the result of a query inside one read transaction.
    ///
    /// The roots' graphs are resolved together, one level at a time, so a level of every root costs one call of
    /// `fetch` (which the store answers with a few indexed statements) and a record several roots reference is
    /// read and decoded once. ``maximumRecordCount`` bounds the records read beyond the roots.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - roots: The values' records, in the order of the result.
    ///   - fetch: Reads the records with these IDs, handing each to `receive` as it is read (no array of them is
    ///     built and copied from); an ID it hands no record for is a missing record. See ``RecordFetch``.
    /// - Returns: The values, in the order of `roots`.
    /// - Throws: ``CKCodableError``, with the coding path, record and field of the failure.
    package func decodeAll<Value: CKDecodable>(
        _ type: Value.Type, from roots: [CloudRecord], fetch: RecordFetch
    ) throws -> [Value] {
        guard let first = roots.first else { return [] }
        // The roots that reference others are the session's records too: the limit counts the records beyond them.
        let referencing = roots.map(\.hasReferences)
        let (limit, overflow) = maximumRecordCount.addingReportingOverflow(referencing.count(where: { $0 }))
        let options = self.options.changing { $0.maximumRecordCount = overflow ? Int.max : limit }
        let session = DecodingSession(options: options, rootAlone: [first])
        do {
            try session.resolveSynchronously(
                from: session.addRoots(roots, referencing: referencing, as: Value.self), fetch: fetch)
            // As for one root: a model that decodes different fields in different records can reach records that
            // resolving didn't fetch.
            for _ in 0...maximumDepth {
                do {
                    let values = try session.materializeRoots(Value.self, roots: roots, referencing: referencing)
                    if session.unresolved.isEmpty { return values }
                } catch {
                    if session.unresolved.isEmpty { throw error }
                }
                try session.resolveUnresolvedSynchronously(fetch: fetch)
            }
        } catch {
            throw CKCodableError.atEntryPoint(error, rootID: first.id)
        }
        throw CKCodableError.depthLimitExceeded(
            maximumDepth, at: DecodingLocation(path: .root, recordID: first.id, field: nil))
    }

    /// The names of the fields a model type decodes from its record: the keys its `init(from:)` asks its
    /// top-level container for, found by running it once on placeholder values. `nil` if the initializer
    /// rejects placeholders before it asked for every key (the names seen so far may not be all of them).
    ///
    /// How a store checks a field name given as a string before it runs a query with it.
    package static func fieldNames(decodedBy type: any CKDecodable.Type) -> Set<String>? {
        let recorder = FieldNameRecorder()
        do {
            _ = try type.init(from: FieldNameProbe(recorder: recorder))
        } catch {
            return nil
        }
        return recorder.names
    }
}
