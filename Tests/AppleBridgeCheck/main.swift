// Runs the Apple bridge's conversions against the CloudKit and Core Location stand-ins (Tests/AppleStubs), on
// Linux. scripts/check-apple-bridge.sh compiles this file together with the library's sources.
import CloudKit
import CoreLocation
import Foundation

var passed = 0
var failures: [String] = []

@MainActor
func check(_ condition: Bool, _ name: String) {
    if condition { passed += 1 } else { failures.append(name) }
}

@MainActor
func roundTrip(_ value: CloudValue) throws -> CloudValue? {
    var record = CloudRecord(recordType: "Probe", id: CloudRecord.ID(recordName: "probe", zoneID: CloudRecord.ZoneID(zoneName: "Z")))
    record["field"] = value
    return try CloudRecord(record.ckRecord())["field"]
}

let zone = CloudRecord.ZoneID(zoneName: "Z")
let reference = CloudReference(recordID: CloudRecord.ID(recordName: "target", zoneID: zone), action: .deleteSelf)
let file = URL(fileURLWithPath: "/tmp/asset.bin")
let location = CloudLocation(latitude: 1.5, longitude: -2.5, altitude: 3, horizontalAccuracy: 4, verticalAccuracy: 5,
                             course: 6, speed: 7, timestamp: Date(timeIntervalSince1970: 8))
let values: [(String, CloudValue)] = [
    ("string", .string("héllo")), ("int64", .int64(.min)), ("double", .double(0.1)), ("date", .date(Date(timeIntervalSince1970: 1.5))),
    ("bytes", .bytes(Data([1, 2, 3]))), ("reference", .reference(reference)), ("asset", .asset(CloudAsset(fileURL: file))),
    ("location", .location(location)), ("stringList", .stringList(["a", "b"])), ("int64List", .int64List([1, -2])),
    ("doubleList", .doubleList([1.5, 2])), ("dateList", .dateList([Date(timeIntervalSince1970: 3)])),
    ("bytesList", .bytesList([Data([4]), Data()])), ("referenceList", .referenceList([reference, reference])),
    ("assetList", .assetList([CloudAsset(fileURL: file)])), ("locationList", .locationList([location, location])),
]
for (name, value) in values {
    check((try? roundTrip(value)) == value, "\(name) round-trips through CKRecord")
}
check(Set(values.map { $0.1.kind }).count == CloudValue.Kind.allCases.count, "every CloudValue kind is covered")

// .validate has no counterpart in the framework: it becomes .none.
let validated = CloudReference(recordID: CloudRecord.ID(recordName: "t", zoneID: zone), action: .validate)
check((try? roundTrip(.reference(validated))) == .reference(CloudReference(recordID: validated.recordID, action: .none)),
      ".validate becomes .none")

// Bytes held in memory become a CKAsset file with the same contents.
if case .asset(let asset)? = try? roundTrip(.asset(CloudAsset(data: Data([9, 9])))), let url = asset.fileURL {
    check((try? Data(contentsOf: url)) == Data([9, 9]), "an in-memory asset is written to a file")
} else {
    check(false, "an in-memory asset becomes a file asset")
}

// System fields survive through CloudKit's archive, so a record made again is an update.
let server = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n", zoneID: CKRecordZone.ID(zoneName: "Z")))
server.recordChangeTag = "tag-42"
server.creationDate = Date(timeIntervalSince1970: 100)
server["text"] = NSString(string: "hi")
let portable = try CloudRecord(server)
check(portable.systemFields?.changeTag == "tag-42", "the change tag is read")
check(portable.systemFields?.archivedData != nil, "the system fields are archived")
var edited = portable
edited["text"] = nil
let rebuilt = try edited.ckRecord()
check(rebuilt.recordChangeTag == "tag-42", "a record made again keeps its change tag")
check(rebuilt.changedKeys() == ["text"] && rebuilt["text"] == nil, "a cleared field is set to nil")

// Version 1.0's spellings.
struct Book: CKCodable, Identifiable { var id: String; var title: String }
struct Shelf: CKCodable, Identifiable {
    var id: String
    var books: [Book]
    var location: CloudLocation
    func cloudKitReferenceActions() -> [String: CKRecord.Reference.Action] { ["books": .deleteSelf] }
}
let shelf = Shelf(id: "shelf", books: [Book(id: "b1", title: "T")], location: location)
let records: [CKRecord] = try CKRecordEncoder(zoneID: nil).encode(shelf)
check(records.map(\.recordID.recordName) == ["b1", "shelf"], "encode gives CKRecords, the root last")
let books = records.last?["books"] as? NSArray
check((books?.firstObject as? CKRecord.Reference)?.action == .deleteSelf, "1.0's CKRecord.Reference.Action form is honored")
check(records.last?["location"] is CLLocation, "locations become CLLocation")
let portableRecords: [CloudRecord] = try CKRecordEncoder().encode(shelf)
check(portableRecords.count == 2, "the portable form is chosen where [CloudRecord] is asked for")
check(CloudLocation(CLLocation(location)) == location, "CLLocation converts both ways")

// Every CloudKit error maps to the portable one.
let mapped: [(CKError.Code, CloudDatabaseError)] = [
    (.unknownItem, .unknownItem(CloudRecord.ID(recordName: "x"))), (.quotaExceeded, .quotaExceeded),
    (.notAuthenticated, .notAuthenticated), (.zoneNotFound, .zoneNotFound(.default)),
]
for (code, expected) in mapped {
    check(CloudDatabaseError(CKError(code), recordID: CloudRecord.ID(recordName: "x")) == expected, "CKError \(code) maps")
}
check(CloudDatabaseError(CKError(.requestRateLimited, userInfo: ["CKRetryAfter": 3.0])) == .requestRateLimited(retryAfter: 3),
      "throttling keeps its retry-after")

for failure in failures { print("FAILED: \(failure)") }
print("Apple bridge: \(passed) passed, \(failures.count) failed")
exit(failures.isEmpty ? 0 : 1)
