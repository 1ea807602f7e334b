import Crypto
import Foundation
import NestedCloudKitCodable

/// `records/query`: filters and sorts the records of a type, a page at a time.
///
/// The filters become a `CloudQuery` predicate, which the database evaluates as every backend does; the order and
/// the continuation are the backends' own (`CloudQueryOrder`), with sorting by distance from a `relativeLocation`
/// and zone-wide queries merged across zones. A continuation marker holds the query's digest and the sort position
/// of the page's last record, not an offset, so a page continues after that record however the records changed
/// since: nothing is skipped or repeated that didn't move across the position.
enum QueryEndpoint {
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
        let sorts = try sorts(wireQuery, coding: coding)
        let order = CloudQueryOrder(sorts.map(\.order))
        let query = CloudQuery(
            recordType: recordType, predicate: filters.isEmpty ? .all : .and(filters.map(\.predicate)),
            sortDescriptors: sorts.map(\.field).map { CloudQuery.SortDescriptor(field: $0.queryName) })
        try await context.state.schema.checkQuery(query, key: context.key)

        let zoneWide = context.body["zoneWide"]?.bool ?? false
        let zones: [CloudRecord.ZoneID] =
            zoneWide
            ? try await RecordsEndpoint.call { try await context.database.allRecordZones() }
            : [try coding.zoneID(context.body["zoneID"])]
        var matches: [CloudRecord] = []
        for zone in zones {
            matches += try await allRecords(matching: query, in: zone, context: context)
        }
        let digest = queryDigest(wireQuery, zoneWide: zoneWide, zone: context.body["zoneID"])
        let after = try context.body["continuationMarker"]?.string.map { (marker) throws(ServerError) in
            try position(marker, digest: digest)
        }
        let page = order.page(of: matches, record: { $0 }, after: after, limit: limit)
        let desiredKeys = context.desiredKeys(context.body["desiredKeys"])
        var response: [String: JSONValue] = [
            "records": .array(await coding.outgoing(page.matches, desiredKeys: desiredKeys).map(coding.json))
        ]
        if page.more, let last = page.last {
            // The query's digest, then the position as every backend's cursor writes it.
            response["continuationMarker"] = .string(digest + "." + last.encoded)
        }
        return .object(response)
    }

    /// The query's `sortBy`, each a field (or a distance from `relativeLocation`) and a direction.
    private static func sorts(_ wireQuery: JSONValue, coding: WireCoding) throws(ServerError)
        -> [(field: QueryField, order: CloudQueryOrder.Sort)]
    {
        try (wireQuery["sortBy"]?.array ?? []).map { (wire) throws(ServerError) in
            let origin: CloudLocation? =
                if let location = wire["relativeLocation"],
                    case .location(let point)? = try coding.fieldValue(
                        location, field: "relativeLocation", record: "(query)")
                { point } else { nil }
            let field = try QueryField(wire)
            return (
                field,
                CloudQueryOrder.Sort(field: field.queryName, ascending: wire["ascending"]?.bool ?? true, origin: origin)
            )
        }
    }

    /// Every record of a zone that matches the query's filters, read from the database a page at a time.
    private static func allRecords(matching query: CloudQuery, in zone: CloudRecord.ZoneID, context: DatabaseRequest)
        async throws(ServerError) -> [CloudRecord]
    {
        let filter = CloudQuery(recordType: query.recordType, predicate: query.predicate)
        var records: [CloudRecord] = []
        var page = try await RecordsEndpoint.call {
            try await context.database.records(
                matching: filter, inZoneWith: zone, desiredKeys: nil, resultsLimit: EmulatorState.internalReadPage)
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

    private static func queryDigest(_ query: JSONValue, zoneWide: Bool, zone: JSONValue?) -> String {
        let document: JSONValue = ["query": query, "zoneWide": .bool(zoneWide), "zoneID": zone ?? .null]
        return Data(SHA256.hash(data: document.encoded()).prefix(12)).base64EncodedString()
    }

    private static func position(_ marker: String, digest: String) throws(ServerError) -> CloudQueryOrder.Position {
        let parts = marker.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let position = CloudQueryOrder.Position(encoded: parts[1]) else {
            throw .badRequest("the continuationMarker isn't one this emulator gave")
        }
        guard parts[0] == digest else {
            throw .badRequest("the continuationMarker belongs to another query: send the query it came with")
        }
        return position
    }
}
