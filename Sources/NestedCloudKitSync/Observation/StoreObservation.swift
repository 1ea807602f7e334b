import Foundation
import GRDB
import NestedCloudKitCodable

/// The results of a read of the store, as they change: the current result at once, then a new one after each
/// committed transaction that changed what the read reads (the app's saves and deletes, each page a sync
/// fetched, a reset).
///
/// ```swift
/// for try await notes in store.observe(ModelQuery(Note.self).sorted(by: .descending(.creationDate))) {
///     render(notes)
/// }
/// ```
///
/// A read of models is woken only by a change to the records of the types it read (a query's type; for a graph,
/// whose references may name records of any type, a change to any), and reads again in the iterating task, after
/// the commit: a save never waits for an observer's read, and a save of one type wakes no observer of another. The
/// observations' reads take turns, a few at once (half the cores), so that hundreds of observers never take the
/// cores the app's saves need.
/// Results come in the order of the transactions, never an older one after a newer; a reader slower than the
/// changes gets the newest result, not every one in between; an equal result isn't delivered twice when the model
/// is `Equatable` (the overloads for `Equatable` models pass `==`). Cancelling the task that iterates stops the
/// observation. Each iteration starts an observation of its own.
public struct StoreObservation<Element>: AsyncSequence, Sendable {
    /// What ending the sequence with an error throws: a ``SyncError``, or a `CKCodableError` for a record that
    /// can't be decoded.
    public typealias Failure = any Error

    private enum Source: Sendable {
        /// A read of the engine's tables, which GRDB's `ValueObservation` follows.
        case tables(@Sendable () -> AsyncValueObservation<Transfer<Element>>)
        /// A read of records, which ``RecordTypeChanges`` wakes.
        case records(
            StoreConnection,
            read: @Sendable (StoreConnection, ReadRecorder) async throws -> Transfer<Element>)
    }

    private let source: Source
    private let isDuplicate: (@Sendable (Element, Element) -> Bool)?

    /// An observation of the engine's tables (the queue, the state): GRDB's, woken by a change to any table read.
    init(
        writer: any DatabaseWriter, removingDuplicates isDuplicate: (@Sendable (Element, Element) -> Bool)?,
        fetch: @escaping @Sendable (Database) throws -> Element
    ) {
        self.isDuplicate = isDuplicate
        source = .tables {
            ValueObservation.tracking { db in Transfer(value: try fetch(db)) }
                .values(in: writer, bufferingPolicy: .bufferingNewest(1))
        }
    }

    /// An observation of records: `fetch` says what it read through ``ReadRecorder/current``.
    init(
        records connection: StoreConnection,
        removingDuplicates isDuplicate: (@Sendable (Element, Element) -> Bool)?,
        fetch: @escaping @Sendable (Database) throws -> Element
    ) {
        self.isDuplicate = isDuplicate
        source = .records(connection) { connection, recorder in
            try await connection.observationReads.run {
                try await connection.read { db in
                    try ReadRecorder.$current.withValue(recorder) { Transfer(value: try fetch(db)) }
                }
            }
        }
    }

    /// Starts an observation of its own: the current result first, then one after each change.
    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case .tables(let start):
            AsyncIterator(base: .tables(start().makeAsyncIterator()), isDuplicate: isDuplicate)
        case .records(let connection, let read):
            AsyncIterator(
                base: .records(
                    RecordReads(connection: connection, subscription: connection.recordChanges.subscribe(), read: read)),
                isDuplicate: isDuplicate)
        }
    }

    /// The reads of a records observation: the first at once, each next one after a change to what the last read.
    struct RecordReads {
        let connection: StoreConnection
        let subscription: RecordTypeChanges.Subscription
        let read: @Sendable (StoreConnection, ReadRecorder) async throws -> Transfer<Element>
        var signals: AsyncStream<Void>.Iterator
        var started = false

        init(
            connection: StoreConnection, subscription: RecordTypeChanges.Subscription,
            read: @escaping @Sendable (StoreConnection, ReadRecorder) async throws -> Transfer<Element>
        ) {
            self.connection = connection
            self.subscription = subscription
            self.read = read
            signals = subscription.signals.makeAsyncIterator()
        }

        mutating func next() async throws -> Transfer<Element>? {
            if started {
                guard await signals.next() != nil, !Task.isCancelled else { return nil }
            }
            started = true
            // Woken by any change while it reads, so none between the read's snapshot and the narrowing is missed.
            subscription.watch(nil)
            let recorder = ReadRecorder()
            let result: Transfer<Element>
            do {
                result = try await read(connection, recorder)
            } catch  where Task.isCancelled {
                return nil
            }
            subscription.watch(recorder.recordTypes)
            return result
        }
    }

    /// Gives the results one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        enum Base {
            case tables(AsyncValueObservation<Transfer<Element>>.Iterator)
            case records(RecordReads)

            mutating func next() async throws -> Transfer<Element>? {
                switch self {
                case .tables(var iterator):
                    defer { self = .tables(iterator) }
                    return try await iterator.next()
                case .records(var reads):
                    defer { self = .records(reads) }
                    return try await reads.next()
                }
            }
        }

        var base: Base
        let isDuplicate: (@Sendable (Element, Element) -> Bool)?
        /// The last result given, to skip an equal one. Compared here, in the task that iterates, never on the
        /// database's queue: a result handed out is the caller's alone.
        var last: Element?

        init(base: Base, isDuplicate: (@Sendable (Element, Element) -> Bool)?) {
            self.base = base
            self.isDuplicate = isDuplicate
        }

        /// The next result; `nil` once the observing task is cancelled.
        /// - Throws: ``SyncError/store(_:)`` if the store can't be read (it was closed, or is damaged);
        ///   `CKCodableError` if a record can't be decoded; ``SyncError/invalidQuery(_:)`` for a query that can't
        ///   run.
        public mutating func next() async throws -> Element? {
            do {
                while let result = try await base.next()?.value {
                    if let isDuplicate, let last, isDuplicate(last, result) { continue }
                    if isDuplicate != nil { last = result }
                    return result
                }
                return nil
            } catch let error as SyncError {
                throw error
            } catch let error as CKCodableError {
                throw error
            } catch is CancellationError {
                return nil
            } catch {
                throw SyncError.store("observing the store failed: \(error)", underlying: error)
            }
        }
    }
}

extension SyncStore {
    /// The models a query matches, now and after every change to what it reads.
    ///
    /// Every result is delivered: for an `Equatable` model the overload that skips equal results is chosen where
    /// the model's type is known to be `Equatable`.
    public func observe<Model: QueryableModel>(_ query: ModelQuery<Model>) -> StoreObservation<[Model]> {
        observe(query, removingDuplicates: nil)
    }

    /// The models a query matches, now and after every change to them; a change that leaves the result equal
    /// delivers nothing.
    public func observe<Model: QueryableModel & Equatable>(_ query: ModelQuery<Model>) -> StoreObservation<[Model]> {
        observe(query, removingDuplicates: { $0 == $1 })
    }

    func observe<Model: QueryableModel>(
        _ query: ModelQuery<Model>, removingDuplicates isDuplicate: (@Sendable ([Model], [Model]) -> Bool)?
    ) -> StoreObservation<[Model]> {
        let zone = zoneID
        let recordType = StoreSQL.recordType(of: query)
        return StoreObservation(records: connection, removingDuplicates: isDuplicate) { db in
            ReadRecorder.current?.read(recordType)
            return try Self.fetch(query, storeZone: zone, in: db)
        }
    }

    /// How many models a query matches (its limit and offset apply), now and after every change that changes the
    /// count, counted in SQLite without decoding any.
    public func observeCount<Model: QueryableModel>(_ query: ModelQuery<Model>) -> StoreObservation<Int> {
        let zone = zoneID
        let recordType = StoreSQL.recordType(of: query)
        return StoreObservation(records: connection, removingDuplicates: { $0 == $1 }) { db in
            ReadRecorder.current?.read(recordType)
            return try Self.count(query, storeZone: zone, in: db)
        }
    }

    /// The records a query matches, now and after every change to them; an equal result delivers nothing.
    public func observeRecords<Model: QueryableModel>(matching query: ModelQuery<Model>)
        -> StoreObservation<[CloudRecord]>
    {
        let zone = zoneID
        let recordType = StoreSQL.recordType(of: query)
        return StoreObservation(records: connection, removingDuplicates: { $0 == $1 }) { db in
            ReadRecorder.current?.read(recordType)
            return try Self.records(matching: query, storeZone: zone, in: db)
        }
    }

    /// One model, by identifier, now and after every change to what it reads: `nil` while the store doesn't have
    /// it. Every result is delivered; see the `Equatable` overload.
    public func observe<Model: CKDecodable & Identifiable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) -> StoreObservation<Model?> {
        observe(type, id: id, in: zoneID, removingDuplicates: nil)
    }

    /// One model, by identifier, now and after every change to it: `nil` while the store doesn't have it. A change
    /// that leaves it equal delivers nothing.
    public func observe<Model: CKDecodable & Identifiable & Equatable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) -> StoreObservation<Model?> {
        observe(type, id: id, in: zoneID, removingDuplicates: { $0 == $1 })
    }

    func observe<Model: CKDecodable & Identifiable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID?,
        removingDuplicates isDuplicate: (@Sendable (Model?, Model?) -> Bool)?
    ) -> StoreObservation<Model?> {
        let recordID = CloudRecord.ID(
            recordName: NestedCloudKitCodable.recordName(describing: id), zoneID: zoneID ?? self.zoneID)
        return StoreObservation(records: connection, removingDuplicates: isDuplicate) { db in
            // A record that isn't there may come as any type.
            guard let record = try StoreTables.records([recordID], in: db).first else {
                ReadRecorder.current?.readEveryType()
                return nil
            }
            ReadRecorder.current?.read(record.recordType)
            return try Self.decode(Model.self, from: [record], in: db).first
        }
    }
}
