import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitWebServices

/// `ckws query TYPE`: the records of a type, filtered and sorted.
struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Find the records of a type.")

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "The record type.")
    var recordType: String

    @Option(
        help: ArgumentHelp(
            "Only records whose field equals the value. Repeatable.",
            discussion: """
                TYPE is STRING, INT64, DOUBLE or TIMESTAMP (an ISO 8601 date, or milliseconds since 1970). Without it, \
                the value takes the type the field has in a record of this type (ckws asks for a few records first), \
                and is a STRING when none has the field: zip=02134 stays the string "02134".
                """,
            valueName: "field[:TYPE]=value"
        ))
    var filter: [String] = []

    @Option(help: "field=recordName: only records whose reference field points to the record. Repeatable.")
    var references: [String] = []

    @Option(help: "A field to sort by. Repeatable.")
    var sort: [String] = []

    @Flag(help: "Sort in descending order.")
    var descending = false

    @Option(help: "The most records to print.")
    var limit: Int = 100

    @Option(help: "The zone; the default zone unless given.")
    var zone: String?

    @Option(help: "The zone owner's record name, for a zone shared by another user.")
    var owner: String?

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be positive.") }
        let filters = try filter.map(FieldFilter.init(parsing:))
        // A value that can't have the type given fails before any request.
        for filter in filters { if let type = filter.type { _ = try filter.value(as: type) } }
        for condition in references { _ = try Self.split(condition, option: "--references") }
    }

    func run() async throws {
        try await connection.withDatabase { database in
            try await run(database)
        }
    }

    private func run(_ database: CloudKitWebServicesDatabase) async throws {
        let zoneID = ConnectionOptions.zoneID(zone, owner: owner)
        let filters = try filter.map(FieldFilter.init(parsing:))
        let types = try await fieldTypes(
            of: filters.filter { $0.type == nil }.map(\.field), in: zoneID, database: database)
        var predicates: [CloudQuery.Predicate] = []
        for filter in filters {
            let value = try filter.value(as: filter.type ?? types[filter.field] ?? .string)
            predicates.append(.equals(field: filter.field, value: value))
        }
        for condition in references {
            let (field, name) = try Self.split(condition, option: "--references")
            predicates.append(.references(CloudRecord.ID(recordName: name, zoneID: zoneID), in: field))
        }
        let query = CloudQuery(
            recordType: recordType, predicate: predicates.isEmpty ? .all : .and(predicates),
            sortDescriptors: sort.map { CloudQuery.SortDescriptor(field: $0, ascending: !descending) }
        )
        var records: [CloudRecord] = []
        var page = try await database.records(
            matching: query, inZoneWith: zoneID, desiredKeys: nil, resultsLimit: min(limit, 200))
        while true {
            for (id, result) in page.matchResults {
                switch result {
                case .success(let record): records.append(record)
                case .failure(let error): FileHandle.standardError.write(Data("\(id.recordName): \(error)\n".utf8))
                }
            }
            guard records.count < limit, let cursor = page.queryCursor else { break }
            page = try await database.records(
                continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: min(limit - records.count, 200))
        }
        try RecordOutput.print(Array(records.prefix(limit)), json: connection.json)
    }

    /// The types the fields have in the first records of the type that have them, read with one small query
    /// that asks for those fields only. A field no record has is left out.
    private func fieldTypes(
        of fields: [String], in zoneID: CloudRecord.ZoneID, database: CloudKitWebServicesDatabase
    ) async throws -> [String: FieldFilter.ValueType] {
        guard !fields.isEmpty else { return [:] }
        let page = try await database.records(
            matching: CloudQuery(recordType: recordType), inZoneWith: zoneID, desiredKeys: fields,
            resultsLimit: Self.schemaSampleSize
        )
        var types: [String: FieldFilter.ValueType] = [:]
        for case (_, .success(let record)) in page.matchResults {
            for field in fields where types[field] == nil {
                guard let kind = record[field]?.kind else { continue }
                guard let type = FieldFilter.ValueType(fieldKind: kind) else {
                    let hint =
                        kind == .reference || kind == .referenceList ? "; use --references \(field)=recordName" : ""
                    throw ValidationError(
                        "--filter \(field): the field holds \(kind.rawValue) values, which ckws can't filter by\(hint)."
                    )
                }
                types[field] = type
            }
        }
        return types
    }

    /// How many records the schema of filtered fields is read from.
    private static let schemaSampleSize = 20

    private static func split(_ condition: String, option: String) throws -> (String, String) {
        guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
            throw ValidationError("\(option) takes field=value; \(condition) has no field.")
        }
        return (String(condition[..<equals]), String(condition[condition.index(after: equals)...]))
    }
}
