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
/// Built on GRDB's `ValueObservation`: results come in the order of the transactions, never an older one after a
/// newer; a reader slower than the changes gets the newest result, not every one in between; an equal result
/// isn't delivered twice when the model is `Equatable` (the overloads for `Equatable` models pass `==`).
/// Cancelling the task that iterates stops the observation. Each iteration starts an observation of its own.
public struct StoreObservation<Element>: AsyncSequence, Sendable {
    /// What ending the sequence with an error throws: a ``SyncError``, or a `CKCodableError` for a record that
    /// can't be decoded.
    public typealias Failure = any Error

    private let start: @Sendable () -> AsyncValueObservation<Transfer<Element>>
    private let isDuplicate: (@Sendable (Element, Element) -> Bool)?

    init(
        writer: any DatabaseWriter, removingDuplicates isDuplicate: (@Sendable (Element, Element) -> Bool)?,
        fetch: @escaping @Sendable (Database) throws -> Element
    ) {
        self.isDuplicate = isDuplicate
        start = {
            ValueObservation.tracking { db in Transfer(value: try fetch(db)) }
                .values(in: writer, bufferingPolicy: .bufferingNewest(1))
        }
    }

    /// Starts an observation of its own: the current result first, then one after each change.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: start().makeAsyncIterator(), isDuplicate: isDuplicate)
    }

    /// Gives the results one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Transfer<Element>>.Iterator
        let isDuplicate: (@Sendable (Element, Element) -> Bool)?
        /// The last result given, to skip an equal one. Compared here, in the task that iterates, never on the
        /// database's queue: a result handed out is the caller's alone.
        var last: Element?

        init(
            base: AsyncValueObservation<Transfer<Element>>.Iterator,
            isDuplicate: (@Sendable (Element, Element) -> Bool)?
        ) {
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
                throw SyncError.store("observing the store failed: \(error)")
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
        return StoreObservation(writer: writer, removingDuplicates: isDuplicate) { db in
            try Self.fetch(query, storeZone: zone, in: db)
        }
    }

    /// How many models a query matches (its limit and offset apply), now and after every change that changes the
    /// count, counted in SQLite without decoding any.
    public func observeCount<Model: QueryableModel>(_ query: ModelQuery<Model>) -> StoreObservation<Int> {
        let zone = zoneID
        return StoreObservation(writer: writer, removingDuplicates: { $0 == $1 }) { db in
            try Self.count(query, storeZone: zone, in: db)
        }
    }

    /// The records a query matches, now and after every change to them; an equal result delivers nothing.
    public func observeRecords<Model: QueryableModel>(matching query: ModelQuery<Model>)
        -> StoreObservation<[CloudRecord]>
    {
        let zone = zoneID
        return StoreObservation(writer: writer, removingDuplicates: { $0 == $1 }) { db in
            try Self.records(matching: query, storeZone: zone, in: db)
        }
    }

    /// One model, by identifier, now and after every change to what it reads: `nil` while the store doesn't have
    /// it. Every result is delivered; see the `Equatable` overload.
    public func observe<Model: StoreDecodable & Identifiable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) -> StoreObservation<Model?> {
        observe(type, id: id, in: zoneID, removingDuplicates: nil)
    }

    /// One model, by identifier, now and after every change to it: `nil` while the store doesn't have it. A change
    /// that leaves it equal delivers nothing.
    public func observe<Model: StoreDecodable & Identifiable & Equatable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) -> StoreObservation<Model?> {
        observe(type, id: id, in: zoneID, removingDuplicates: { $0 == $1 })
    }

    func observe<Model: StoreDecodable & Identifiable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID?,
        removingDuplicates isDuplicate: (@Sendable (Model?, Model?) -> Bool)?
    ) -> StoreObservation<Model?> {
        let recordID = CloudRecord.ID(
            recordName: NestedCloudKitCodable.recordName(describing: id), zoneID: zoneID ?? self.zoneID)
        return StoreObservation(writer: writer, removingDuplicates: isDuplicate) { db in
            guard let record = try StoreTables.records([recordID], in: db).first else { return nil }
            return try Self.decode(Model.self, from: [record], in: db).first
        }
    }
}
