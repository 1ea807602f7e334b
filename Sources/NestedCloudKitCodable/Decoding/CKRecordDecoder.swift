import Foundation

/// Decodes a `CKDecodable` value from its record, fetching every record it references from a database.
///
/// ```swift
/// let school = try await CKRecordDecoder().decode(School.self, from: schoolRecord, referenceDatabase: database)
/// ```
///
/// Decoding has two phases, because `Decoder` is synchronous and fetching is not:
/// 1. **Resolve**: starting from the root record, find the records the model needs, one level of the graph at a
///    time. Every record of a level is fetched in one round trip (split at the database's per-request limit, the
///    parts in flight together), so a graph `d` levels deep costs `d` round trips; each record is fetched once, and
///    a cycle is never fetched again. Only the references the model decodes are followed: a
///    ``CloudLazyReference`` property keeps its target (and everything below it) from being fetched.
/// 2. **Materialize**: build the value from the records in hand, each record once, deepest first.
///
/// To find what a record's model needs, the decoder runs its `init(from:)` once with placeholder values standing
/// in for the records not fetched yet (zero values, or the first case of a `CaseIterable` enum), so `init(from:)`
/// may run more than once per record; it should have no side effects. When a placeholder can't be built (an
/// initializer rejects it), the decoder follows every reference of that record instead.
///
/// Records already in hand, such as an encoder's output, decode without a database:
/// ```swift
/// let school = try CKRecordDecoder().decode(School.self, from: try CKRecordEncoder().encodeGraph(school))
/// ```
///
/// Every failure is a ``CKCodableError`` with the coding path, the record and the field; nothing crashes on bad
/// data, and ``maximumDepth`` and ``maximumRecordCount`` bound what corrupt or hostile data can make it fetch.
public struct CKRecordDecoder: Sendable {
    /// How deep the graph may go below the root; deeper references throw
    /// ``CKCodableError/Code/depthLimitExceeded``. Defaults to 256.
    public var maximumDepth: Int {
        get { options.maximumDepth }
        set { options = options.changing { $0.maximumDepth = newValue } }
    }

    /// How many records one decode may read, the root included; more throws
    /// ``CKCodableError/Code/recordLimitExceeded``. Defaults to 100,000.
    public var maximumRecordCount: Int {
        get { options.maximumRecordCount }
        set { options = options.changing { $0.maximumRecordCount = newValue } }
    }

    /// What a reference to a record that doesn't exist becomes. Defaults to `nil` for optional properties.
    public var missingReferenceStrategy: MissingReferenceStrategy {
        get { options.missingReferenceStrategy }
        set { options = options.changing { $0.missingReferenceStrategy = newValue } }
    }

    /// How nested values that aren't records were stored; must match the encoder's
    /// ``CKRecordEncoder/nestedValueEncodingStrategy``. Defaults to ``NestedValueDecodingStrategy/json``.
    public var nestedValueDecodingStrategy: NestedValueDecodingStrategy {
        get { options.nestedValueDecodingStrategy }
        set { options = options.changing { $0.nestedValueDecodingStrategy = newValue } }
    }

    /// Which strings stand for NaN and infinity, matching the encoder's
    /// ``CKRecordEncoder/nonFiniteFloatEncodingStrategy``. Defaults to none.
    public var nonFiniteFloatDecodingStrategy: NonFiniteFloatDecodingStrategy {
        get { options.nonFiniteFloatDecodingStrategy }
        set { options = options.changing { $0.nonFiniteFloatDecodingStrategy = newValue } }
    }

    /// How `CloudLocation` values are read. Defaults to Location fields only.
    public var locationDecodingStrategy: LocationDecodingStrategy {
        get { options.locationDecodingStrategy }
        set { options = options.changing { $0.locationDecodingStrategy = newValue } }
    }

    /// Values for the `userInfo` of the `Decoder` that models' `init(from:)` implementations see.
    public var userInfo: [CodingUserInfoKey: any Sendable] {
        get { options.userInfo }
        set { options = options.changing { $0.userInfo = newValue } }
    }

    /// The settings, shared by every decode and every copy of the decoder until one of them changes a setting.
    private(set) var options = DecodingOptions.defaults

    /// Creates a decoder with the default settings.
    public init() {}

    /// Decodes a value from its record, fetching the records it references from a database.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - record: The root record.
    ///   - database: Where the referenced records are.
    /// - Returns: The value, with everything nested in it.
    /// - Throws: ``CKCodableError``, with the coding path, record and field of the failure; a database failure
    ///   comes as ``CKCodableError/Code/databaseError``. `CancellationError` if the task is cancelled.
    public func decode<Value: CKDecodable>(
        _ type: Value.Type, from record: CloudRecord, referenceDatabase database: some CloudDatabase
    ) async throws -> Value {
        do {
            return try await resolveAndDecode(type, from: record, referenceDatabase: database)
        } catch {
            throw CKCodableError.atEntryPoint(error, rootID: record.id)
        }
    }

    private func resolveAndDecode<Value: CKDecodable>(
        _ type: Value.Type, from record: CloudRecord, referenceDatabase database: some CloudDatabase
    ) async throws -> Value {
        let session = DecodingSession(options: options, rootAlone: [record])
        try await session.resolve(Value.self, from: database)
        // A model that decodes different fields in different records can reach records that resolving, which
        // learns each type's fields from one record, didn't fetch: fetch those and build the value again.
        for _ in 0...maximumDepth {
            do {
                let value = try session.materialize(Value.self)
                if session.unresolved.isEmpty { return value }
            } catch {
                if session.unresolved.isEmpty { throw error }
            }
            try await session.resolveUnresolved(from: database)
        }
        throw CKCodableError.depthLimitExceeded(
            maximumDepth, at: DecodingLocation(path: .root, recordID: record.id, field: nil))
    }

    /// Fetches the record of a value by its record name, then decodes the value and everything it references.
    ///
    /// ```swift
    /// let school = try await CKRecordDecoder().decode(School.self, recordName: "school-1", from: database)
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - recordName: The record name of the value's record (its ``CKRecordRepresentable/cloudKitIdentifier``).
    ///   - zoneID: The zone of the record; CloudKit's default zone if omitted.
    ///   - database: Where the records are.
    /// - Throws: ``CKCodableError``; ``CKCodableError/Code/missingRecord`` if the record doesn't exist.
    public func decode<Value: CKDecodable>(
        _ type: Value.Type, recordName: String, zoneID: CloudRecord.ZoneID = .default, from database: some CloudDatabase
    ) async throws -> Value {
        let id = CloudRecord.ID(recordName: recordName, zoneID: zoneID)
        let location = DecodingLocation(path: .root, recordID: id, field: nil)
        let record: CloudRecord
        do {
            record = try await database.record(for: id)
        } catch let error as CloudDatabaseError where error.code == .unknownItem {
            throw CKCodableError.missingRecord(id, at: location)
        } catch {
            throw CKCodableError.atEntryPoint(error, rootID: id)
        }
        return try await decode(type, from: record, referenceDatabase: database)
    }

    /// Fetches the record of a value by the value's identifier, then decodes the value and everything it
    /// references: the record name is the identifier as ``CKRecordRepresentable/cloudKitIdentifier`` makes it
    /// (a `UUID`'s `uuidString`, an integer's digits, a raw value).
    ///
    /// ```swift
    /// let school = try await CKRecordDecoder().decode(School.self, id: schoolID, from: database)
    /// ```
    public func decode<Value: CKDecodable & Identifiable>(
        _ type: Value.Type, id: Value.ID, zoneID: CloudRecord.ZoneID = .default, from database: some CloudDatabase
    ) async throws -> Value {
        try await decode(
            type, recordName: NestedCloudKitCodable.recordName(describing: id), zoneID: zoneID, from: database)
    }

    /// Decodes a value from its record, fetching the records it references from a database, and calls back
    /// exactly once with the value or the error: the form of version 1.0.
    ///
    /// The decode runs in a task of its own, which the model's conformance allows: it isn't isolated to an actor
    /// (`CKDecodable` refines `SendableMetatype`).
    public func decode<Value: CKDecodable>(
        _ type: Value.Type,
        from record: CloudRecord,
        referenceDatabase database: any CloudDatabase,
        completion: @escaping @Sendable (_ value: Value?, _ error: CKCodableError?) -> Void
    ) {
        Task { await deliver(Value.self, from: record, referenceDatabase: database, to: completion) }
    }

    /// Decodes and calls `completion` exactly once, whatever happens.
    private func deliver<Value: CKDecodable>(
        _ type: Value.Type, from record: CloudRecord, referenceDatabase database: any CloudDatabase,
        to completion: @Sendable (_ value: Value?, _ error: CKCodableError?) -> Void
    ) async {
        do {
            completion(try await decode(type, from: record, referenceDatabase: database), nil)
        } catch {
            // Every error is a CKCodableError once cancellation is one too.
            let error = CKCodableError.atEntryPoint(error, rootID: record.id, wrappingCancellation: true)
            completion(nil, error as? CKCodableError ?? .cancelled(record.id))
        }
    }

    /// Decodes a value from records already in hand, such as an encoder's output, with no database.
    ///
    /// A reference to a record that isn't in the graph is a missing record (see ``missingReferenceStrategy``).
    public func decode<Value: CKDecodable>(_ type: Value.Type, from graph: CloudRecordGraph) throws -> Value {
        do {
            return try DecodingSession(options: options, graph: graph).materializeInHand(Value.self)
        } catch {
            throw CKCodableError.atEntryPoint(error, rootID: graph.root.id)
        }
    }

    /// Decodes a value from one record in hand that references no other record (or whose references may be
    /// missing, by ``missingReferenceStrategy``).
    public func decode<Value: CKDecodable>(_ type: Value.Type, from record: CloudRecord) throws -> Value {
        try decode(type, from: record, records: [])
    }

    /// Decodes a value from its root record and the other records it references, all in hand.
    public func decode<Value: CKDecodable>(
        _ type: Value.Type, from root: CloudRecord, records: some Sequence<CloudRecord>
    ) throws -> Value {
        do {
            let recordsInHand = Array(records)
            let session =
                recordsInHand.isEmpty
                ? DecodingSession(options: options, rootAlone: [root])
                : DecodingSession(options: options, root: root, recordsInHand: recordsInHand)
            return try session.materializeInHand(Value.self)
        } catch {
            throw CKCodableError.atEntryPoint(error, rootID: root.id)
        }
    }

}
