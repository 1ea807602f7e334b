// Saves many records in one atomic request, for a test that kills this process in the middle of the save and
// then checks that the file holds all of the records or none of them.
//
// Usage: SQLiteCrashWriter <database path> <record count>
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
    FileHandle.standardError.write(Data("usage: SQLiteCrashWriter <database path> <record count>\n".utf8))
    exit(2)
}

let database = try SQLiteCloudDatabase(path: arguments[1], maximumItemsPerRequest: count)
let zone = CloudRecord.ZoneID(zoneName: "Crash")
_ = try await database.modifyRecordZones(saving: [zone], deleting: [])
let payload = String(repeating: "x", count: 500)
let records = (0..<count).map { index in
    CloudRecord(
        recordType: "Item", id: CloudRecord.ID(recordName: "item-\(index)", zoneID: zone),
        fields: [
            "index": .int64(Int64(index)), "payload": .string(payload),
        ])
}
// FileHandle writes straight to the descriptor, unbuffered, so the parent sees each line when it is written.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

say("saving")
let results = try await database.modifyRecords(
    saving: records, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
say("saved \(results.saveResults.count)")
