/// A set of linked records: every record a root record reaches through its references, in dependency order.
///
/// ``CKRecordEncoder/encodeGraph(_:)`` returns one. ``records`` lists each record after the records it
/// references, with the ``root`` last; the subscript finds a record by its ID.
public struct CloudRecordGraph: Sendable, Hashable {
    /// The records, each after the records it references, the root last.
    public let records: [CloudRecord]

    /// Each record's position in ``records``: a decode of the graph takes it as its index, hashing no ID again.
    let positions: [CloudRecord.ID: Int]

    /// Creates a graph from records already in dependency order, the root last. `records` is never empty.
    init(dependencyOrderedRecords records: [CloudRecord]) {
        self.records = records
        var positions: [CloudRecord.ID: Int] = [:]
        positions.reserveCapacity(records.count)
        for (position, record) in records.enumerated() { positions[record.id] = position }
        self.positions = positions
    }

    /// The root record: the record of the value that was encoded.
    public var root: CloudRecord {
        // The encoder always finishes the root's record, so `records` is never empty.
        records[records.count - 1]
    }

    /// The record with the given ID, or `nil` if the graph has none.
    public subscript(id: CloudRecord.ID) -> CloudRecord? {
        positions[id].map { records[$0] }
    }

    /// Whether both hold the same records in the same order.
    public static func == (lhs: CloudRecordGraph, rhs: CloudRecordGraph) -> Bool {
        lhs.records == rhs.records
    }

    /// Hashes the records in order, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(records)
    }
}
