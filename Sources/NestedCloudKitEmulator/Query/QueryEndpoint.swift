import Crypto
import Foundation
import NestedCloudKitCodable

/// `records/query`: filters and sorts the records of a type, a page at a time.
///
/// The emulator evaluates every documented comparator itself, over the records of the type in the zone. A
/// continuation marker holds the query and the sort position of the page's last record, not an offset, so a page
/// continues after that record however the records changed since: nothing is skipped or repeated that didn't move
/// across the position.
enum QueryEndpoint {
    private struct Position: Codable {
        var values: [JSONValue]
        var distance: Double?
        var zoneName: String
        var recordName: String
        var queryDigest: String
    }

    private struct Sort: Sendable {
        var field: QueryField?
        var ascending: Bool
        /// Sorting by distance from this location (`relativeLocation`).
        var origin: CloudLocation?
    }

    /// Where a record falls in a query's order: its sort fields' values (`nil` for a sort by distance), its
    /// distance from the sort's location, and its zone and name, which break ties.
    private struct SortPosition {
        var key: [CloudValue?]
        var distance: Double?
        var zone: String
        var name: String
    }

    /// A record that matched the filters, and its place in the order.
    private struct Match {
        var record: CloudRecord
        var position: SortPosition
    }

    /// The query's `sortBy`: what each record's position holds, and which of two positions comes first.
    private struct Order {
        var sorts: [Sort]

        func position(of record: CloudRecord) -> SortPosition {
            let distance = sorts.first(where: { $0.origin != nil }).flatMap { sort -> Double? in
                guard case .location(let here)? = sort.field?.value(of: record), let origin = sort.origin else {
                    return nil
                }
                return here.metres(to: origin)
            }
            return SortPosition(
                key: sorts.map { $0.origin == nil ? $0.field?.value(of: record) : nil }, distance: distance,
                zone: record.id.zoneID.zoneName, name: record.id.recordName)
        }

        func precedes(_ a: SortPosition, _ b: SortPosition) -> Bool {
            for (index, sort) in sorts.enumerated() {
                let order =
                    sort.origin != nil
                    ? QueryEndpoint.compare(a.distance, b.distance)
                    : QueryEndpoint.compare(a.key[index], b.key[index])
                if order != .orderedSame {
                    return sort.ascending ? order == .orderedAscending : order == .orderedDescending
                }
            }
            return (a.zone, a.name) < (b.zone, b.name)
        }
    }

    static func query(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard let wireQuery = context.body["query"], let recordType = wireQuery["recordType"]?.string,
            !recordType.isEmpty
        else { throw .badRequest("records/query needs a query with a recordType") }
        // Without resultsLimit, "the maximum number of records in a response": 200 (FIDELITY.md).
        let limit = try context.resultsLimit(context.body["resultsLimit"], default: DatabaseRequest.maximumItems)
        let coding = context.coding
        let filters = try (wireQuery["filterBy"]?.array ?? []).map { (filter) throws(ServerError) in
            try QueryFilter(filter, coding: coding)
        }
        let order = Order(sorts: try sorts(wireQuery, coding: coding))
        let query = CloudQuery(
            recordType: recordType, predicate: filters.isEmpty ? .all : .and(filters.map(\.predicate)),
            sortDescriptors: order.sorts.compactMap(\.field).map { CloudQuery.SortDescriptor(field: $0.queryName) })
        try await context.state.schema.checkQuery(query, key: context.key)

        let zoneWide = context.body["zoneWide"]?.bool ?? false
        let zones: [CloudRecord.ZoneID] =
            zoneWide
            ? try await RecordsEndpoint.call { try await context.database.allRecordZones() }
            : [try coding.zoneID(context.body["zoneID"])]
        var matches: [Match] = []
        for zone in zones {
            for record in try await allRecords(ofType: recordType, in: zone, context: context)
            where filters.allSatisfy({ $0.matches(record) }) {
                matches.append(Match(record: record, position: order.position(of: record)))
            }
        }
        matches.sort { order.precedes($0.position, $1.position) }
        let digest = queryDigest(wireQuery, zoneWide: zoneWide, zone: context.body["zoneID"])
        if let marker = context.body["continuationMarker"]?.string {
            let position = try position(marker, digest: digest, coding: coding)
            let after = SortPosition(
                key: position.values.map { try? coding.fieldValue($0, field: "", record: "") }.map { $0 ?? nil },
                distance: position.distance, zone: position.zoneName, name: position.recordName)
            matches.removeAll { !order.precedes(after, $0.position) }
        }
        return page(of: matches, limit: limit, digest: digest, context: context)
    }

    /// The query's `sortBy`, each a field (or a distance from `relativeLocation`) and a direction.
    private static func sorts(_ wireQuery: JSONValue, coding: WireCoding) throws(ServerError) -> [Sort] {
        try (wireQuery["sortBy"]?.array ?? []).map { (wire) throws(ServerError) -> Sort in
            let origin: CloudLocation? =
                if let location = wire["relativeLocation"],
                    case .location(let point)? = try coding.fieldValue(
                        location, field: "relativeLocation", record: "(query)")
                { point } else { nil }
            return Sort(field: try QueryField(wire), ascending: wire["ascending"]?.bool ?? true, origin: origin)
        }
    }

    /// The first `limit` matches, and a continuation marker after the last of them when more follow.
    private static func page(of matches: [Match], limit: Int, digest: String, context: DatabaseRequest) -> JSONValue {
        let coding = context.coding
        let desiredKeys = context.desiredKeys(context.body["desiredKeys"])
        let page = matches.prefix(limit)
        var response: [String: JSONValue] = [
            "records": .array(page.map { coding.json($0.record, desiredKeys: desiredKeys) })
        ]
        if matches.count > limit, let last = page.last {
            let position = Position(
                values: last.position.key.map { value in
                    value.map { coding.json($0, recordID: last.record.id, field: "") } ?? .null
                },
                distance: last.position.distance, zoneName: last.position.zone, recordName: last.position.name,
                queryDigest: digest)
            response["continuationMarker"] = .string(encode(position))
        }
        return .object(response)
    }

    /// Every record of a type in a zone, read from the database a page at a time.
    private static func allRecords(ofType type: String, in zone: CloudRecord.ZoneID, context: DatabaseRequest)
        async throws(ServerError) -> [CloudRecord]
    {
        var records: [CloudRecord] = []
        var page = try await RecordsEndpoint.call {
            try await context.database.records(
                matching: CloudQuery(recordType: type), inZoneWith: zone, desiredKeys: nil,
                resultsLimit: EmulatorState.internalReadPage)
        }
        while true {
            for (_, result) in page.matchResults { if case .success(let record) = result { records.append(record) } }
            guard let cursor = page.queryCursor else { return records }
            page = try await RecordsEndpoint.call {
                try await context.database.records(
                    continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: EmulatorState.internalReadPage)
            }
        }
    }

    /// Missing values sort after present ones, as CloudKit puts records without the field last.
    private static func compare(_ a: CloudValue?, _ b: CloudValue?) -> ComparisonResult {
        switch (a, b) {
        case (nil, nil): .orderedSame
        case (nil, _): .orderedDescending
        case (_, nil): .orderedAscending
        case (let a?, let b?): a.queryOrder(b) ?? .orderedSame
        }
    }

    private static func compare(_ a: Double?, _ b: Double?) -> ComparisonResult {
        switch (a, b) {
        case (nil, nil): .orderedSame
        case (nil, _): .orderedDescending
        case (_, nil): .orderedAscending
        case (let a?, let b?): a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
    }

    private static func queryDigest(_ query: JSONValue, zoneWide: Bool, zone: JSONValue?) -> String {
        let document: JSONValue = ["query": query, "zoneWide": .bool(zoneWide), "zoneID": zone ?? .null]
        return Data(SHA256.hash(data: document.encoded()).prefix(12)).base64EncodedString()
    }

    private static func encode(_ position: Position) -> String {
        let data = (try? JSONEncoder().encode(position)) ?? Data()
        return data.base64EncodedString()
    }

    private static func position(_ marker: String, digest: String, coding: WireCoding) throws(ServerError) -> Position {
        guard let data = Data(base64Encoded: marker),
            let position = try? JSONDecoder().decode(Position.self, from: data)
        else { throw .badRequest("the continuationMarker isn't one this emulator gave") }
        guard position.queryDigest == digest else {
            throw .badRequest("the continuationMarker belongs to another query: send the query it came with")
        }
        return position
    }
}
