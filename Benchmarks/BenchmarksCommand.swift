import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync
import ToolSupport

/// Measures the encoder, the decoder, reference resolution and the SQLite database against the baselines a user
/// would compare them with, in one run, and prints the ratios.
@main
struct BenchmarksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "Benchmarks",
        abstract:
            "Measures NestedCloudKitCodable against Foundation's JSON coders, hand-written mapping and plain GRDB.",
        discussion: """
            Each figure is the median of several repetitions after a warm-up; a ratio below 1 means we are faster than \
            the baseline. Run it in release: swift run -c release Benchmarks
            """
    )

    @Flag(
        help: """
            Print one JSON object per line instead of a table; a ratio or target that isn't a finite number (a \
            baseline too fast to measure, no target) is null.
            """)
    var json = false

    @Flag(help: "Run small workloads, in seconds, to show that everything runs (targets aren't checked).")
    var quick = false

    @Option(help: "Run only the workloads whose name starts with this, for example encode or sqlite.")
    var only: String?

    @Flag(help: "Print the CloudKit schema the workloads' records need, in CloudKit's schema language, and exit.")
    var printSchema = false

    @OptionGroup var logging: LogLevelOption

    func run() async throws {
        // Standard output is the table or the JSON lines: the library's log goes to standard error, and its lines
        // below the level cost a level check each.
        logging.bootstrap()
        if printSchema {
            print(try Self.schema().text, terminator: "")
            return
        }
        let sizes = quick ? Sizes.quick : Sizes.full
        let workloads = Workloads(
            sizes: sizes, harness: Harness(repetitions: quick ? 3 : 7, warmups: 1, minimumSeconds: quick ? 0 : 1))
        var results: [BenchmarkResult] = []
        func wanted(_ name: String) -> Bool { only.map { name.hasPrefix($0) } ?? true }

        // Memory first, before other workloads raise the process's footprint.
        if wanted("memory") { results += try workloads.graphMemory() }
        if wanted("encode.flat") { results += try workloads.encodeFlat() }
        if wanted("decode.flat") { results += try workloads.decodeFlat() }
        if wanted("encode.graph") { results += try workloads.encodeGraph() }
        if wanted("decode.graph") { results += try workloads.decodeGraph() }
        if wanted("encode.flat.mapped") { results += try workloads.encodeFlatMapped() }
        if wanted("decode.flat.mapped") { results += try workloads.decodeFlatMapped() }
        if wanted("encode.graph.mapped") { results += try workloads.encodeGraphMapped() }
        if wanted("decode.graph.mapped") { results += try workloads.decodeGraphMapped() }
        if wanted("resolve.chain") { results.append(try await workloads.resolveChain()) }
        if wanted("resolve.wide") { results.append(try await workloads.resolveWide()) }
        if wanted("sqlite") { results += try await workloads.sqlite() }
        if wanted("sqlite.shared-save") { results += try await workloads.sharedSave() }
        if wanted("changes") { results += try await workloads.changes() }
        if wanted("sync") || only?.hasPrefix("sync.") == true {
            results += try await workloads.sync { name in only.map { name.hasPrefix($0) || $0.hasPrefix(name) } ?? true
            }
        }
        if wanted("store") || only?.hasPrefix("store.") == true {
            results += try await workloads.store { name in only.map { name.hasPrefix($0) || $0.hasPrefix(name) } ?? true
            }
        }
        if wanted("webservices") { results += try workloads.webServices() }
        if wanted("emulator.load") { results.append(try await workloads.emulatorLoad(checksFloor: !quick)) }

        let failed = results.filter { $0.failure != nil }
        let missed = results.filter { !$0.met }
        if json {
            for result in results { print(result.json) }
        } else {
            print(Report.table(results))
            print(
                quick
                    ? "\nQuick run: every result checked; targets are checked on the full run only."
                    : missed.isEmpty ? "\nEvery target met." : "\n\(missed.count) targets missed.")
        }
        // A wrong result (thrown before timing) or a failed check ends the run with a non-zero status, quick or
        // full; a missed target does on a full run.
        if !failed.isEmpty {
            printError(failed.map { "\($0.name): \($0.failure ?? "")" }.joined(separator: "\n"))
            throw ExitCode(1)
        }
        if !quick && !missed.isEmpty { throw ExitCode(2) }
    }
}

/// Writes a line to standard error, where a script reading the report's standard output doesn't take it for a row.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

extension BenchmarksCommand {
    /// The schema of every workload's records, the store's indexes included.
    static func schema() throws -> CloudSchema {
        try CloudSchema(
            syncing: [
                Flat.self, Campus.self, TreeNode.self, MappedFlat.self, MappedCampus.self, StoreNote.self,
                StoreFolder.self, MappedStoreNote.self, MappedStoreFolder.self,
            ],
            indexes: StoreNote.storeIndexes)
    }
}
