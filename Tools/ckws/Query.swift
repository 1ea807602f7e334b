import ArgumentParser
import Foundation
import NestedCloudKitCodable

/// `ckws query TYPE`: the records of a type, filtered and sorted.
struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Find the records of a type.")

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "The record type.")
    var recordType: String

    @Option(help: "field=value: only records whose field equals the value (an integer, a number, or else a string). Repeatable.")
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
    }

    func run() async throws {
        let zoneID = ConnectionOptions.zoneID(zone, owner: owner)
        var predicates: [CloudQuery.Predicate] = []
        for condition in filter {
            let (field, text) = try Self.split(condition, option: "--filter")
            let value: CloudValue = Int64(text).map(CloudValue.int64) ?? Double(text).map(CloudValue.double) ?? .string(text)
            predicates.append(.equals(field: field, value: value))
        }
        for condition in references {
            let (field, name) = try Self.split(condition, option: "--references")
            predicates.append(.references(CloudRecord.ID(recordName: name, zoneID: zoneID), in: field))
        }
        let query = CloudQuery(
            recordType: recordType, predicate: predicates.isEmpty ? .all : .and(predicates),
            sortDescriptors: sort.map { CloudQuery.SortDescriptor(field: $0, ascending: !descending) }
        )
        let database = try connection.makeDatabase()
        var records: [CloudRecord] = []
        var page = try await database.records(matching: query, inZoneWith: zoneID, desiredKeys: nil, resultsLimit: min(limit, 200))
        while true {
            for (id, result) in page.matchResults {
                switch result {
                case .success(let record): records.append(record)
                case .failure(let error): FileHandle.standardError.write(Data("\(id.recordName): \(error)\n".utf8))
                }
            }
            guard records.count < limit, let cursor = page.queryCursor else { break }
            page = try await database.records(continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: min(limit - records.count, 200))
        }
        try RecordOutput.print(Array(records.prefix(limit)), json: connection.json)
    }

    private static func split(_ condition: String, option: String) throws -> (String, String) {
        guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
            throw ValidationError("\(option) takes field=value; \(condition) has no field.")
        }
        return (String(condition[..<equals]), String(condition[condition.index(after: equals)...]))
    }
}
