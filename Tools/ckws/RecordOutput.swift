import Foundation
import NestedCloudKitCodable
import NestedCloudKitWebServices
import ToolSupport

/// Prints records as trees, or as CloudKit Web Services JSON.
enum RecordOutput {
    static func print(_ records: [CloudRecord], json: Bool) throws {
        if json {
            let data = try CloudKitWebServicesJSON.data(for: records, prettyPrinted: true)
            Swift.print(String(decoding: data, as: UTF8.self))
            return
        }
        let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let printer = RecordTreePrinter(records: byID)
        for record in records {
            for line in printer.lines(for: record) { Swift.print(line) }
        }
    }
}
