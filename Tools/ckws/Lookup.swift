import ArgumentParser
import Foundation
import NestedCloudKitCodable

/// `ckws lookup NAME`: one record by name.
struct Lookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Look up records by name.")

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "The record names.")
    var recordNames: [String]

    @Option(help: "The zone; the default zone unless given.")
    var zone: String?

    @Option(help: "The zone owner's record name, for a zone shared by another user.")
    var owner: String?

    func run() async throws {
        let zoneID = ConnectionOptions.zoneID(zone, owner: owner)
        let ids = recordNames.map { CloudRecord.ID(recordName: $0, zoneID: zoneID) }
        try await connection.withDatabase { database in
            let results = try await database.fetchRecords(ids)
            var records: [CloudRecord] = []
            var failures: [String] = []
            for id in ids {
                switch results[id] {
                case .success(let record)?: records.append(record)
                case .failure(let error)?: failures.append("\(id.recordName): \(error)")
                case nil: failures.append("\(id.recordName): no result")
                }
            }
            try RecordOutput.print(records, json: connection.json)
            guard failures.isEmpty else {
                for failure in failures { FileHandle.standardError.write(Data("\(failure)\n".utf8)) }
                throw ExitCode(1)
            }
        }
    }
}
