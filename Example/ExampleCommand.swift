import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import ToolSupport

/// The School example: encode a graph of records, save it, fetch the root, decode the whole graph back.
@main
struct ExampleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "Example",
        abstract: "Saves the 1.0 School example to a database and decodes it back.",
        discussion: """
            The first run saves a school with its director, students and books; later runs find it, update it \
            without a conflict (the models keep their records' system fields), and decode it again.
            """
    )

    @Option(name: .customLong("database"), help: "The SQLite file to use.")
    var databasePath = "School.sqlite"

    @Flag(name: .customLong("in-memory"), help: "Use an in-memory database instead of a file.")
    var inMemory = false

    @Flag(help: "Print the CloudKit schema the example's records need, in CloudKit's schema language, and exit.")
    var printSchema = false

    func run() async throws {
        if printSchema {
            print(try CloudSchema(models: [School.self]).text, terminator: "")
            return
        }
        let base: any CloudDatabase = inMemory ? InMemoryCloudDatabase() : try SQLiteCloudDatabase(path: databasePath)
        let database = RequestCountingDatabase(base)
        print("NestedCloudKitCodable: the School example")
        print(inMemory ? "Database: in memory" : "Database: SQLite file \(databasePath)")
        print("")

        let schoolID = CloudRecord.ID(recordName: School.exampleID)
        let saved: School
        if let existing = try await database.records(for: [schoolID])[schoolID].flatMap({ try? $0.get() }) {
            saved = try await update(existing, in: database)
        } else {
            saved = try await saveFirstTime(in: database)
        }

        await database.resetCounts()
        let root = try await database.record(for: schoolID)
        let decoded = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: database)
        let requests = await database.fetchRequests
        let fetched = await database.recordsFetched
        print("Fetched the school by its ID, then decoded the whole graph:")
        print(
            "  \(requests - 1) fetch request\(requests == 2 ? "" : "s") for \(fetched - 1) referenced records (the graph is one level deep)"
        )
        print("")

        let graph = try CKRecordEncoder().encodeGraph(decoded)
        let stored = try await base.fetchRecords(graph.records.map(\.id)).compactMapValues { try? $0.get() }
        for line in RecordTreePrinter(records: stored).lines(for: root) { print("  " + line) }
        print("")

        let same = try Self.sameContent(decoded, saved)
        print(
            same
                ? "The decoded school equals the school that was saved."
                : "The decoded school differs from the school that was saved!")
        if !inMemory { print("Run the example again: it finds this school and updates it without a conflict.") }
        if !same { throw ExitCode.failure }
    }

    /// Saves the example school: every record after the records it references.
    private func saveFirstTime(in database: RequestCountingDatabase) async throws -> School {
        print("No school saved yet: this is the first run.")
        let records = try CKRecordEncoder().encodeRecords(School.example)
        let types = Dictionary(grouping: records, by: \.recordType).map { "\($0.value.count) \($0.key)" }.sorted()
        print("Encoded the school into \(records.count) records (\(types.joined(separator: ", "))), the school last.")
        await database.resetCounts()
        try await database.saveRecords(records)
        let requests = await database.modifyRequests
        print("Saved them in \(requests) request\(requests == 1 ? "" : "s").")
        print("")
        return School.example
    }

    /// Decodes the saved school, changes it, and saves it back: the kept system fields make this an update.
    private func update(_ record: CloudRecord, in database: RequestCountingDatabase) async throws -> School {
        var school = try await CKRecordDecoder().decode(School.self, from: record, referenceDatabase: database)
        let oldTag = school.systemFields?.changeTag ?? "none"
        print(
            "Found the school an earlier run saved (change tag \(oldTag), \(school.visits) visit\(school.visits == 1 ? "" : "s"))."
        )
        school.visits += 1
        school.books[0].available.toggle()
        let saved = try await database.saveRecords(try CKRecordEncoder().encodeRecords(school))
        let newTag = saved.last?.systemFields?.changeTag ?? "none"
        print(
            "Counted a visit and lent a book, then saved it back: updated without a conflict (change tag \(oldTag) → \(newTag))."
        )
        print("")
        return school
    }

    /// Whether two schools store the same fields, whatever their system fields.
    private static func sameContent(_ lhs: School, _ rhs: School) throws -> Bool {
        let encoder = CKRecordEncoder()
        func content(_ school: School) throws -> [[String]] {
            try encoder.encodeRecords(school).map { record in
                [record.recordType, record.id.recordName] + record.fields.map { "\($0.name)=\($0.value)" }.sorted()
            }
        }
        return try content(lhs) == content(rhs)
    }
}
