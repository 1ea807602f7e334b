import Foundation
import NestedCloudKitCodable

/// One `filterBy` entry of `records/query` or of a query subscription: a comparator applied to a field or a system
/// field, read from the wire into a ``CloudQuery/Predicate``, which every backend evaluates alike.
struct QueryFilter: Sendable {
    /// The field filtered.
    var field: QueryField
    /// The comparator; `nil` for `NEAR`, which is a predicate of its own.
    var comparator: CloudQuery.Comparator?
    /// The condition, as the record store evaluates it.
    var predicate: CloudQuery.Predicate

    init(_ wire: JSONValue, coding: WireCoding) throws(ServerError) {
        let name = wire["comparator"]?.string
        let comparator = name.flatMap(CloudQuery.Comparator.init(rawValue:))
        guard comparator != nil || name == Self.near else {
            let names = CloudQuery.Comparator.allCases.map(\.rawValue) + [Self.near]
            throw .badRequest(
                "unknown comparator \(wire["comparator"] ?? .null); the reference lists \(names.joined(separator: ", "))"
            )
        }
        field = try QueryField(wire)
        self.comparator = comparator
        guard let item = wire["fieldValue"],
            let value = try coding.fieldValue(item, field: field.name, record: "(query)")
        else { throw .badRequest("filter on \(field.name) needs a fieldValue with a value") }
        if let comparator {
            let (comparator, value) =
                field.isUser
                ? Self.comparingUsers(comparator, field.queryValue(value), coding: coding)
                : (comparator, field.queryValue(value))
            predicate = .compare(field: field.queryName, comparator, value)
        } else {
            guard let distance = wire["distance"]?.double else {
                throw .badRequest("NEAR on \(field.name) needs a distance in metres")
            }
            guard case .location(let location) = value else {
                throw .badRequest("NEAR on \(field.name) needs a LOCATION fieldValue, not \(value.kind)")
            }
            predicate = .near(field: field.queryName, location: location, radius: distance)
        }
    }

    /// The comparator that isn't a ``CloudQuery/Comparator``: `NEAR`, which also takes a distance.
    static let near = "NEAR"

    /// A comparison with the user who created or last saved a record, over the names the store keeps: the wire
    /// shows the database's owner by the owner's record name, where a record holds "the current user" (or the
    /// name the database stamps), so equality with the owner is membership of every name the owner goes by.
    private static func comparingUsers(
        _ comparator: CloudQuery.Comparator, _ value: CloudValue, coding: WireCoding
    ) -> (CloudQuery.Comparator, CloudValue) {
        let names: [String]
        switch value {
        case .string(let name): names = [name]
        case .stringList(let list): names = list
        default: return (comparator, value)
        }
        let ownerNames = [CloudRecord.ZoneID.currentUserOwnerName, coding.databaseUserRecordName].compactMap { $0 }
        let stored = names.flatMap { $0 == coding.ownerRecordName ? [$0] + ownerNames : [$0] }
        guard stored.count > names.count else { return (comparator, value) }
        switch comparator {
        case .equals, .in: return (.in, .stringList(stored))
        case .notEquals, .notIn: return (.notIn, .stringList(stored))
        default: return (comparator, value)
        }
    }

    func matches(_ record: CloudRecord) -> Bool {
        predicate.matches(record)
    }
}
