// Runs the Apple bridge's conversions and its CloudKitDatabase against the CloudKit and Core Location stand-ins
// (Tests/AppleStubs), on Linux. scripts/check-apple-bridge.sh compiles this file together with the library's
// sources (so internal names are visible) and runs it with TMPDIR set to a fresh folder.
import CloudKit
import CoreLocation
import Foundation

var passed = 0
var failures: [String] = []

@MainActor
func check(_ condition: Bool, _ name: String) {
    if condition { passed += 1 } else { failures.append(name) }
}

/// The error a call throws, or `nil`.
@MainActor
func thrownError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// The conversion error making a CloudKit record throws, or `nil`.
func conversionError(_ record: CloudRecord) -> CKRecordConversionError? {
    do {
        _ = try record.ckRecord()
        return nil
    } catch {
        return error as? CKRecordConversionError
    }
}

@MainActor
func roundTrip(_ value: CloudValue) throws -> CloudValue? {
    var record = CloudRecord(
        recordType: "Probe", id: CloudRecord.ID(recordName: "probe", zoneID: CloudRecord.ZoneID(zoneName: "Z")))
    record["field"] = value
    return try CloudRecord(record.ckRecord())["field"]
}

/// The files in the bridge's temporary asset folder.
func temporaryAssetFiles() -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: CKRecordEncoder.temporaryAssetDirectory.path)) ?? []
}

/// The result of saving one record.
@MainActor
func saveResult(
    _ record: CloudRecord, in database: CloudKitDatabase, savePolicy: CloudRecordSavePolicy = .ifServerRecordUnchanged
) async throws -> Result<CloudRecord, CloudDatabaseError>? {
    try await database.modifyRecords(saving: [record], deleting: [], savePolicy: savePolicy, atomically: true)
        .saveResults[record.id]
}

let zone = CloudRecord.ZoneID(zoneName: "Z")
let reference = CloudReference(recordID: CloudRecord.ID(recordName: "target", zoneID: zone), action: .deleteSelf)
let file = FileManager.default.temporaryDirectory.appendingPathComponent("asset.bin")
try Data([7, 7, 7]).write(to: file)
let location = CloudLocation(
    latitude: 1.5, longitude: -2.5, altitude: 3, horizontalAccuracy: 4, verticalAccuracy: 5,
    course: 6, speed: 7, timestamp: Date(timeIntervalSince1970: 8))
let values: [(String, CloudValue)] = [
    ("string", .string("héllo")), ("int64", .int64(.min)), ("double", .double(0.1)),
    ("date", .date(Date(timeIntervalSince1970: 1.5))),
    ("bytes", .bytes(Data([1, 2, 3]))), ("reference", .reference(reference)),
    ("asset", .asset(CloudAsset(fileURL: file))),
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
check(
    (try? roundTrip(.reference(validated))) == .reference(CloudReference(recordID: validated.recordID, action: .none)),
    ".validate becomes .none")

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
check(
    (books?.firstObject as? CKRecord.Reference)?.action == .deleteSelf,
    "1.0's CKRecord.Reference.Action form is honored")
check(records.last?["location"] is CLLocation, "locations become CLLocation")
let portableRecords: [CloudRecord] = try CKRecordEncoder().encode(shelf)
check(portableRecords.count == 2, "the portable form is chosen where [CloudRecord] is asked for")
check(CloudLocation(CLLocation(location)) == location, "CLLocation converts both ways")

// A CloudKit database behind the portable protocol, on the stand-in's server.
let container = CKContainer(identifier: "iCloud.check")
let database = CloudKitDatabase(container.privateCloudDatabase, listFields: ["Person": ["clubs", "tags"]])
_ = try await database.modifyRecordZones(saving: [zone], deleting: [])

// System fields survive through CloudKit's archive, so a record made again is an update.
let note = try await database.save(
    CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "n", zoneID: zone), fields: ["text": .string("hi")]))
check(note.systemFields?.changeTag != nil, "the change tag is read")
check(note.systemFields?.archivedData != nil, "the system fields are archived")
var edited = note
edited["text"] = nil
let rebuilt = try edited.ckRecord()
check(rebuilt.recordChangeTag == note.systemFields?.changeTag, "a record made again keeps its change tag")
check(rebuilt.changedKeys() == ["text"] && rebuilt["text"] == nil, "a cleared field is set to nil")

// MARK: 1. Queries CloudKit runs: == on a single field, CONTAINS on a list field, AND only.

let school = CloudRecord.ID(recordName: "s1", zoneID: zone)
let club = CloudRecord.ID(recordName: "c1", zoneID: zone)
let people = ["clubs", "tags"] as Set<String>
func describe(argument: Any) -> String {
    switch argument {
    case let reference as CKRecord.Reference:
        "ref:\(reference.recordID.recordName):\(reference.action.rawValue)"
    case let string as NSString: "string:\(string)"
    case let number as NSNumber: "number:\(number)"
    case let date as NSDate: "date:\(Int(date.timeIntervalSince1970))"
    case let id as CKRecord.ID: "id:\(id.recordName)@\(id.zoneID.zoneName)"
    case let location as CLLocation: "location:\(location.coordinate.latitude),\(location.coordinate.longitude)"
    case let list as [Any]: "[" + list.map(describe(argument:)).joined(separator: " ") + "]"
    default: "\(type(of: argument))"
    }
}
func describe(_ comparisons: [QueryComparison]) -> [String] {
    comparisons.map { comparison in
        ([comparison.field, comparison.format]
            + ([comparison.argument] + comparison.trailingArguments).map(describe(argument:)))
            .joined(separator: " ")
    }
}
check(
    (try? describe(QueryComparison.comparisons(of: .references(school, in: "school"), listFields: people, zoneID: zone)))
        == [
            "school %K == %@ ref:s1:0"
        ],
    "a reference to a record is == on a single reference field, with a reference that has no action")
check(
    (try? describe(QueryComparison.comparisons(of: .references(club, in: "clubs"), listFields: people, zoneID: zone)))
        == [
            "clubs %K CONTAINS %@ ref:c1:0"
        ],
    "a reference to a record is CONTAINS on a reference list field")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .equals(field: "tags", value: .string("swift")), listFields: people, zoneID: zone)))
        == ["tags %K CONTAINS %@ string:swift"],
    ".equals on a list field tests membership with CONTAINS")
check(
    (try? describe(
        QueryComparison.comparisons(of: .equals(field: "name", value: .string("Ann")), listFields: people, zoneID: zone)
    ))
        == ["name %K == %@ string:Ann"],
    ".equals on a single field is ==")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .equals(field: "school", value: .reference(CloudReference(recordID: school, action: .deleteSelf))),
            listFields: people, zoneID: zone
        ))) == ["school %K == %@ ref:s1:0"], ".equals with a reference matches by record, whatever the action")
let compound = try QueryComparison.comparisons(
    of: .and([.references(school, in: "school"), .all, .and([.equals(field: "grade", value: .int64(3))])]),
    listFields: people, zoneID: zone
)
check(
    describe(compound) == ["school %K == %@ ref:s1:0", "grade %K == %@ number:3"],
    "nested ands flatten into one AND list")
check(compound.allSatisfy { !$0.format.contains("OR") }, "no comparison uses OR, which CKQuery refuses")
check(
    (try? database.ckQuery(
        CloudQuery(
            recordType: "Person", predicate: .and([.references(school, in: "school"), .references(club, in: "clubs")])),
        zoneID: zone))
        .map { ($0.predicate as? NSCompoundPredicate)?.compoundPredicateType == .and } == true,
    "several comparisons are one AND compound")
check(
    (try? database.ckQuery(CloudQuery(recordType: "Person", predicate: .references(school, in: "school")), zoneID: zone))
        .map {
            !($0.predicate is NSCompoundPredicate)
        } == true,
    "one comparison is no compound")
check(
    (await thrownError {
        try await database.records(
            matching: CloudQuery(
                recordType: "Person", predicate: .equals(field: "photo", value: .asset(CloudAsset(data: Data([1]))))))
    })
    .map { if case .invalidArguments? = ($0 as? CloudDatabaseError)?.kind { true } else { false } } == true,
    "a query can't compare an asset")
let personRecord = CloudRecord(
    recordType: "Person", id: CloudRecord.ID(recordName: "p1", zoneID: zone),
    fields: [
        "school": .reference(CloudReference(recordID: school)),
        "clubs": .referenceList([CloudReference(recordID: club)]),
    ])
_ = try await database.save(personRecord)
let found = try await database.records(
    matching: CloudQuery(
        recordType: "Person", predicate: .and([.references(school, in: "school"), .references(club, in: "clubs")])),
    inZoneWith: zone
)
check(found.matchResults.map(\.0.recordName) == ["p1"], "a query with two references runs on CloudKit (AND compound)")

// MARK: 2. A conflict keeps the server's, the client's and the ancestor's records; assets without files convert.

let photo = FileManager.default.temporaryDirectory.appendingPathComponent("photo.bin")
try Data([1, 2, 3, 4]).write(to: photo)
let album = try await database.save(
    CloudRecord(
        recordType: "Album", id: CloudRecord.ID(recordName: "a", zoneID: zone),
        fields: ["title": .string("one"), "cover": .asset(CloudAsset(fileURL: photo))]))
var newer = album
newer["title"] = .string("two")
let albumNow = try await database.save(newer)
var stale = album
stale["title"] = .string("three")
switch try await saveResult(stale, in: database)?.failureKind {
case .serverRecordChanged(let server, let client, _)?:
    check(
        server.systemFields?.changeTag == albumNow.systemFields?.changeTag && server["title"] == .string("two"),
        "a conflict carries the server's record")
    check(
        server["cover"] == .asset(CloudAsset(size: nil, fileChecksum: nil)),
        "the server record's asset, which CloudKit didn't download, is an asset without contents")
    check(client == stale, "a conflict carries the client's record as it was given")
    // Resolving the conflict on the server's record saves the change and keeps the server's asset.
    var resolved = server
    resolved["title"] = .string("three")
    let saved = try await database.save(resolved)
    let fetched = try await database.record(for: saved.id)
    check(fetched["title"] == .string("three"), "a change made on the conflict's server record saves")
    if case .asset(let asset)? = fetched["cover"] {
        check(
            (try? asset.contents()) == Data([1, 2, 3, 4]),
            "saving a record whose asset has no contents keeps the server's asset")
    } else {
        check(false, "the resolved record keeps its asset field")
    }
default:
    check(false, "a stale save is a serverRecordChanged conflict (not internalError)")
}
let undownloaded = CKRecord(recordType: "Album", recordID: CKRecord.ID(recordName: "u"))
undownloaded["cover"] = CKAsset(fileURL: URL(fileURLWithPath: "/nonexistent/cache/file"))
undownloaded["covers"] = NSArray(array: [CKAsset(fileURL: URL(fileURLWithPath: "/nonexistent/cache/other"))])
let undownloadedRecord = try? CloudRecord(undownloaded)
check(
    undownloadedRecord?["cover"] == .asset(CloudAsset(size: nil, fileChecksum: nil))
        && undownloadedRecord?["covers"] == .assetList([CloudAsset(size: nil, fileChecksum: nil)]),
    "an asset whose file is gone converts to an asset without contents")
var newWithEmptyAsset = CloudRecord(recordType: "Album", id: CloudRecord.ID(recordName: "e", zoneID: zone))
newWithEmptyAsset["cover"] = .asset(CloudAsset(size: nil, fileChecksum: nil))
check(
    conversionError(newWithEmptyAsset)
        == CKRecordConversionError(.assetWithoutContents, recordID: newWithEmptyAsset.id, field: "cover"),
    "a new record with an asset without contents is refused, naming record and field")

// MARK: 3. Temporary files for in-memory asset bytes are deleted.

try CKRecordEncoder.removeAllTemporaryAssetFiles()
var thumb = CloudRecord(recordType: "Album", id: CloudRecord.ID(recordName: "t", zoneID: zone))
thumb["cover"] = .asset(CloudAsset(data: Data([9, 9])))
thumb["pages"] = .assetList([CloudAsset(data: Data([8])), CloudAsset(fileURL: photo)])
let savedThumb = try await database.save(thumb)
check(temporaryAssetFiles().isEmpty, "a save deletes the temporary files it wrote")
check(
    savedThumb["cover"] == .asset(CloudAsset(data: Data([9, 9]))) && savedThumb["pages"] == thumb["pages"],
    "a saved record keeps its in-memory assets")
if case .asset(let asset)? = try await database.record(for: thumb.id)["cover"] {
    check((try? asset.contents()) == Data([9, 9]), "CloudKit received the in-memory asset's bytes")
} else {
    check(false, "the saved record has its asset")
}
var lost = thumb
lost.id = CloudRecord.ID(recordName: "t", zoneID: CloudRecord.ZoneID(zoneName: "Nowhere"))
let lostResult = try await saveResult(lost, in: database)
check(
    lostResult == .failure(.zoneNotFound(CloudRecord.ZoneID(zoneName: "Nowhere"))) && temporaryAssetFiles().isEmpty,
    "a failed save deletes its temporary files too")
let ckItemLimit = 400  // "about 400" items: the framework's documented limit, which the stand-in keeps
let tooMany = (0...ckItemLimit).map {
    CloudRecord(
        recordType: "Album", id: CloudRecord.ID(recordName: "m\($0)", zoneID: zone),
        fields: ["cover": .asset(CloudAsset(data: Data([1])))])
}
let bigDatabase = CloudKitDatabase(container.privateCloudDatabase, maximumItemsPerRequest: 10_000)
let tooManyError = await thrownError {
    try await bigDatabase.modifyRecords(
        saving: tooMany, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
}
check(
    tooManyError as? CloudDatabaseError == .limitExceeded(limit: nil, requested: ckItemLimit + 1),
    "limitExceeded keeps the request's size and invents no limit")
check(temporaryAssetFiles().isEmpty, "a request that fails as a whole deletes its temporary files")
let encoded = try thumb.ckRecord()
check(temporaryAssetFiles().count == 2, "ckRecord() writes in-memory bytes to the temporary asset folder")
CKRecordEncoder.removeTemporaryAssetFiles(of: [encoded])
check(
    temporaryAssetFiles().isEmpty && FileManager.default.fileExists(atPath: photo.path),
    "removeTemporaryAssetFiles(of:) deletes the bridge's files and leaves the caller's")
let realTemporaryDirectory = FileManager.default.temporaryDirectory.path
setenv("TMPDIR", file.appendingPathComponent("not-a-folder").path, 1)
let unwritable = await thrownError { try await database.save(thumb, savePolicy: .allKeys) }
setenv("TMPDIR", realTemporaryDirectory, 1)
check(
    {
        if case .internalError(let reason)? = (unwritable as? CloudDatabaseError)?.kind {
            reason.contains("temporary file")
        } else {
            false
        }
    }(),
    "a temporary file that can't be written fails the request with a CloudDatabaseError")

// MARK: 4. System fields without CloudKit's archive, or with another record's.

let current = try await database.record(for: note.id)
var fromSQLite = CloudRecord(
    recordType: "Note", id: note.id, fields: ["text": .string("from SQLite")],
    systemFields: CloudRecord.SystemFields(changeTag: current.systemFields?.changeTag))
let appliedResult = try await saveResult(fromSQLite, in: database)
check(
    { if case .success(let saved)? = appliedResult { saved["text"] == .string("from SQLite") } else { false } }(),
    "a record with the server's change tag but no archive saves as an update")
fromSQLite["text"] = .string("stale")
switch try await saveResult(fromSQLite, in: database)?.failureKind {
case .serverRecordChanged(let server, let client, _)?:
    check(
        server["text"] == .string("from SQLite") && client == fromSQLite,
        "a stale change tag without an archive is a conflict")
default:
    check(false, "a stale change tag without an archive is a conflict")
}
check(
    conversionError(fromSQLite)
        == CKRecordConversionError(
            .changeTagWithoutArchive(changeTag: fromSQLite.systemFields?.changeTag ?? ""), recordID: fromSQLite.id
        ), "ckRecord() refuses a change tag without an archive, saying what to do")
let blindWrite = try await saveResult(fromSQLite, in: database, savePolicy: .changedKeys)
check(
    { if case .success(let saved)? = blindWrite { saved["text"] == .string("stale") } else { false } }(),
    "changedKeys saves a change tag without an archive without comparing tags")
var renamed = try await database.record(for: note.id)
renamed.id = CloudRecord.ID(recordName: "renamed", zoneID: zone)
check(
    try await saveResult(renamed, in: database) == .failure(.unknownItem(renamed.id)),
    "a changed ID doesn't save over the archive's record: the renamed record doesn't exist")
check((try? await database.record(for: note.id))?["text"] == .string("stale"), "the archive's record is left alone")
check(
    conversionError(renamed)?.recordID == renamed.id, "ckRecord() refuses a changed ID instead of keeping the archive's"
)
var retyped = try await database.record(for: note.id)
retyped.recordType = "Memo"
check(
    { if case .invalidArguments(let reason)? = $0?.failureKind { reason.contains("Memo") } else { false } }(
        try await saveResult(retyped, in: database)),
    "a changed type is refused, naming both types")

// MARK: 5. Encrypted fields.

var child = CloudRecord(
    recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: zone), fields: ["name": .string("Milk")])
child.parentID = CloudRecord.ID(recordName: "groceries", zoneID: zone)
let childCK = try child.ckRecord()
check(
    childCK.parent?.recordID.recordName == "groceries" && childCK.parent?.action == CKRecord.Reference.Action.none,
    "a record's parent becomes CKRecord.parent, with no action")
check(try CloudRecord(childCK).parentID == child.parentID, "CKRecord.parent becomes the record's parent")
child.parentID = nil
check(
    try child.ckRecord(onto: childCK, assetFiles: nil).parent == nil, "a record without a parent clears CKRecord.parent"
)

var secret = CloudRecord(
    recordType: "Diary", id: CloudRecord.ID(recordName: "d", zoneID: zone), fields: ["title": .string("public")])
secret[encrypted: "body"] = .string("dear diary")
secret[encrypted: "moods"] = .int64List([1, 2])
let secretCK = try secret.ckRecord()
check(
    (secretCK.encryptedValues.object(forKey: "body") as? NSString) == "dear diary"
        && secretCK.object(forKey: "body") == nil
        && secretCK.encryptedValues.object(forKey: "moods") is NSArray, "encrypted fields go to encryptedValues")
let secretBack = try CloudRecord(secretCK)
check(
    secretBack.encryptedFieldNames == ["body", "moods"] && secretBack[encrypted: "body"] == .string("dear diary")
        && secretBack["title"] == .string("public"), "every key of encryptedValues becomes an encrypted field")
_ = try await database.save(secret)
let secretFetched = try await database.record(for: secret.id)
check(
    secretFetched.encryptedFieldNames == ["body", "moods"] && secretFetched[encrypted: "moods"] == .int64List([1, 2]),
    "encrypted fields survive a save and a fetch")
var badSecret = CloudRecord(recordType: "Diary", id: CloudRecord.ID(recordName: "bad", zoneID: zone))
badSecret[encrypted: "owner"] = .reference(CloudReference(recordID: school))
check(
    conversionError(badSecret)
        == CKRecordConversionError(.unencryptableValue(.reference), recordID: badSecret.id, field: "owner"),
    "an encrypted reference is refused, naming record and field")
var badAsset = CloudRecord(recordType: "Diary", id: CloudRecord.ID(recordName: "bad2", zoneID: zone))
badAsset[encrypted: "scan"] = .assetList([CloudAsset(fileURL: photo)])
check(
    { if case .invalidArguments(let reason)? = $0?.failureKind { reason.contains("scan") } else { false } }(
        try await saveResult(badAsset, in: database)),
    "a database refuses an encrypted asset list in the record's result")
let publicDatabase = CloudKitDatabase(container.publicCloudDatabase)
var publicSecret = CloudRecord(recordType: "Diary", id: CloudRecord.ID(recordName: "d"))
publicSecret[encrypted: "body"] = .string("dear diary")
check(
    { if case .invalidArguments(let reason)? = $0?.failureKind { reason.contains("public") } else { false } }(
        try await saveResult(publicSecret, in: publicDatabase)
    ), "the public database refuses encrypted fields")

// MARK: 6. Errors: the right case, zone and retryability.

let elsewhere = CloudRecord.ZoneID(zoneName: "Elsewhere")
check(
    CloudDatabaseError(CKError(.userDeletedZone), zoneID: elsewhere) == .userDeletedZone(elsewhere),
    "userDeletedZone keeps its code and zone")
check(
    CloudDatabaseError(
        CKError(.zoneNotFound, userInfo: [CKErrorUserDidResetEncryptedDataKey: NSNumber(value: true)]),
        zoneID: elsewhere)
        == .encryptedDataReset(elsewhere), "a zone deleted by an encrypted-data reset is told apart")
check(
    CloudDatabaseError(CKError(.zoneNotFound), zoneID: elsewhere) == .zoneNotFound(elsewhere),
    "zoneNotFound names the request's zone")
check(
    CloudDatabaseError(CKError(.changeTokenExpired), zoneID: elsewhere) == .changeTokenExpired(elsewhere),
    "changeTokenExpired keeps its code")
check(
    CloudDatabaseError(CKError(.serverResponseLost)) == .serverResponseLost
        && CloudDatabaseError.serverResponseLost.isRetryable,
    "serverResponseLost keeps its code and is retryable")
check(
    CloudDatabaseError(CKError(.accountTemporarilyUnavailable)) == .accountTemporarilyUnavailable
        && CloudDatabaseError.accountTemporarilyUnavailable.isRetryable,
    "accountTemporarilyUnavailable keeps its code and is retryable")
check(
    CloudDatabaseError(CKError(.operationCancelled)) == .operationCancelled
        && !CloudDatabaseError.operationCancelled.isRetryable,
    "operationCancelled keeps its code")
check(
    CloudDatabaseError(CKError(.limitExceeded), recordID: note.id) == .limitExceeded(limit: nil, requested: nil),
    "an item's limitExceeded invents no numbers")
check(CloudDatabaseError(CancellationError()) == .operationCancelled, "CancellationError maps to operationCancelled")
check(
    {
        if case .internalError(let reason) = CloudDatabaseError(CocoaError(.fileWriteOutOfSpace)).kind {
            reason.contains("CocoaError")
        } else {
            false
        }
    }(),
    "a foreign error names its type")
check(
    CloudDatabaseError.userDeletedZone(elsewhere).zoneID == elsewhere
        && CloudDatabaseError.unknownItem(note.id).zoneID == zone
        && !CloudDatabaseError.userDeletedZone(elsewhere).isRetryable, "errors name their zone")
let unknownCodes: [(CKError.Code, CloudDatabaseError)] = [
    (.unknownItem, .unknownItem(CloudRecord.ID(recordName: "x"))), (.quotaExceeded, .quotaExceeded),
    (.notAuthenticated, .notAuthenticated), (.zoneNotFound, .zoneNotFound(.default)),
]
for (code, expected) in unknownCodes {
    check(
        CloudDatabaseError(CKError(code), recordID: CloudRecord.ID(recordName: "x")) == expected, "CKError \(code) maps"
    )
}
check(
    CloudDatabaseError(CKError(.requestRateLimited, userInfo: [CKErrorRetryAfterKey: 3.0]))
        == .requestRateLimited(retryAfter: 3),
    "throttling keeps its retry-after")
let gone = CloudRecord.ZoneID(zoneName: "Gone")
check(
    await thrownError { try await database.records(matching: CloudQuery(recordType: "Person"), inZoneWith: gone) }
        as? CloudDatabaseError
        == .zoneNotFound(gone), "a query in a missing zone names that zone")
check(
    await thrownError { try await database.records(for: [CloudRecord.ID(recordName: "x", zoneID: gone)]) }.map { _ in
        false
    } ?? true,
    "a fetch in a missing zone fails per item")
let cancelled = Task { try await database.records(for: [note.id]) }
cancelled.cancel()
check(
    await thrownError { try await cancelled.value } is CancellationError,
    "a cancelled task's request ends with CancellationError")

// MARK: 7. Changes since a token, on a fresh container.

let changesContainer = CKContainer(identifier: "iCloud.changes")
let changes = CloudKitDatabase(changesContainer.privateCloudDatabase, container: changesContainer)
let sync = CloudRecord.ZoneID(zoneName: "Sync")
_ = try await changes.modifyRecordZones(saving: [sync], deleting: [])
func note(_ name: String, in zoneID: CloudRecord.ZoneID = sync) -> CloudRecord {
    CloudRecord(
        recordType: "Note", id: CloudRecord.ID(recordName: name, zoneID: zoneID), fields: ["text": .string(name)])
}
/// The CloudDatabaseError a call throws, or `nil`.
@MainActor
func databaseError<T>(_ body: () async throws -> T) async -> CloudDatabaseError? {
    await thrownError(body) as? CloudDatabaseError
}

_ = try await changes.saveRecords([note("z")])
_ = try await changes.saveRecords([note("b"), note("a")])
let firstPage = try await changes.recordZoneChanges(inZoneWith: sync, since: nil)
check(
    firstPage.modifications.map(\.id.recordName) == ["z", "a", "b"] && !firstPage.moreComing,
    "changed records come by modification date, then by name (a request's records share a date)")
check(
    firstPage.modifications.first?["text"] == .string("z")
        && firstPage.modifications.first?.systemFields?.changeTag != nil,
    "changed records carry their fields and system fields")
let storedToken = try JSONDecoder().decode(CloudChangeToken.self, from: JSONEncoder().encode(firstPage.changeToken))
check(
    storedToken == firstPage.changeToken && (try? CloudKitDatabase.serverChangeToken(storedToken)) != nil,
    "a token is CloudKit's CKServerChangeToken, securely archived, and survives being stored as JSON")
_ = try await changes.saveRecords([note("c")])
try await changes.deleteRecord(withID: note("a").id)
let secondPage = try await changes.recordZoneChanges(inZoneWith: sync, since: storedToken)
check(
    secondPage.modifications.map(\.id.recordName) == ["c"]
        && secondPage.deletions == [CloudRecordDeletion(id: note("a").id, recordType: "Note")],
    "a stored token sees only what changed after it: saves, and deletions with their type")
let systemOnly = try await changes.recordZoneChanges(
    inZoneWith: sync, since: nil, desiredKeys: [], resultsLimit: nil)
check(
    systemOnly.modifications.allSatisfy { $0.fields.isEmpty && $0.systemFields?.changeTag != nil }
        && systemOnly.modifications.count == 3,
    "desiredKeys: [] returns system fields only")
var paged: [String] = []
var pageToken: CloudChangeToken? = nil
var pages = 0
repeat {
    let page = try await changes.recordZoneChanges(
        inZoneWith: sync, since: pageToken, desiredKeys: nil, resultsLimit: 1)
    paged += page.modifications.map(\.id.recordName) + page.deletions.map(\.id.recordName)
    pageToken = page.changeToken
    pages += 1
    if !page.moreComing { break }
} while pages < 10
check(paged == ["z", "b", "c", "a"] && pages == 4, "pages of one change add up to every change, each once")
changesContainer.privateCloudDatabase.standInFailChange(of: note("b").id.ckRecordID)
_ = try await changes.saveRecords([note("b")], savePolicy: .allKeys)
let failedPage = try await changes.recordZoneChanges(inZoneWith: sync, since: pageToken)
check(
    failedPage.modifications.isEmpty && failedPage.modificationFailures.keys.map(\.recordName) == ["b"],
    "a changed record CloudKit couldn't return is a modification failure, keyed by ID")
check(
    await databaseError { try await changes.recordZoneChanges(inZoneWith: .default, since: nil) }
        == CloudDatabaseError.defaultZoneHasNoChanges,
    "the default zone is refused before asking CloudKit, as on every backend")
check(
    {
        if case .invalidArguments(let reason)? = ($0)?.kind { reason.contains("nil") } else { false }
    }(
        await databaseError {
            try await changes.recordZoneChanges(inZoneWith: sync, since: CloudChangeToken(string: "not CloudKit's"))
        }),
    "a token that isn't an archived CKServerChangeToken is invalidArguments, saying to pass nil")
changesContainer.privateCloudDatabase.standInExpireChangeTokens()
check(
    await databaseError { try await changes.recordZoneChanges(inZoneWith: sync, since: pageToken) }
        == .changeTokenExpired(sync),
    "an expired token is changeTokenExpired naming the zone")
let missingZone = CloudRecord.ZoneID(zoneName: "Missing")
check(
    await databaseError { try await changes.recordZoneChanges(inZoneWith: missingZone, since: nil) }
        == .zoneNotFound(missingZone),
    "zone changes in a missing zone are zoneNotFound naming it")

// Database changes: zones created, changed and deleted, with the reason.
let databaseStart = try await changes.databaseChanges(since: nil)
check(
    databaseStart.modifiedZoneIDs == [sync] && databaseStart.deletions.isEmpty,
    "database changes list the zones created or changed, not the default zone")
let purgedZone = CloudRecord.ZoneID(zoneName: "Purged")
let resetZone = CloudRecord.ZoneID(zoneName: "Reset")
let gone2 = CloudRecord.ZoneID(zoneName: "Deleted")
_ = try await changes.modifyRecordZones(saving: [purgedZone, resetZone, gone2], deleting: [])
_ = try await changes.modifyRecordZones(saving: [], deleting: [gone2])
changesContainer.privateCloudDatabase.standInDeleteZone(purgedZone.ckZoneID, reason: .purged)
changesContainer.privateCloudDatabase.standInDeleteZone(resetZone.ckZoneID, reason: .encryptedDataReset)
let databaseNext = try await changes.databaseChanges(since: databaseStart.changeToken)
check(
    databaseNext.deletions == [
        CloudZoneDeletion(zoneID: gone2, reason: .deleted), CloudZoneDeletion(zoneID: purgedZone, reason: .purged),
        CloudZoneDeletion(zoneID: resetZone, reason: .encryptedDataReset),
    ] && databaseNext.modifiedZoneIDs.isEmpty,
    "zone deletions keep CloudKit's reason: deleted, purged, encrypted data reset")
check(
    await databaseError { try await changes.recordZoneChanges(inZoneWith: purgedZone, since: nil) }
        == .userDeletedZone(purgedZone),
    "a zone the user purged is userDeletedZone naming it")
check(
    await databaseError { try await changes.databaseChanges(since: firstPage.changeToken) } != nil,
    "a zone's token isn't taken for the database's")

// The user and the account status, from the container.
let statuses: [(CKAccountStatus, CloudAccountStatus)] = [
    (.available, .available), (.noAccount, .noAccount), (.restricted, .restricted),
    (.couldNotDetermine, .couldNotDetermine), (.temporarilyUnavailable, .temporarilyUnavailable),
]
for (ckStatus, status) in statuses {
    changesContainer.standInSetAccount(ckStatus)
    check(try await changes.accountStatus() == status, "CKAccountStatus \(ckStatus) is \(status)")
}
changesContainer.standInSetAccount(.available, userRecordName: "_ann")
check(try await changes.userRecordName() == "_ann", "the user record name is the container's user record ID's")
changesContainer.standInSetAccount(.noAccount)
check(
    await databaseError { try await changes.userRecordName() } == .notAuthenticated,
    "without an account, the user record name is notAuthenticated")
changesContainer.standInSetAccount(.available)

// Subscriptions.
let databaseSubscription = CloudSubscription(id: "db", kind: .database)
let zoneSubscription = CloudSubscription(id: "zone", kind: .zone(sync), sendsContentAvailable: false)
let savedSubscriptions = try await changes.modifySubscriptions(
    saving: [zoneSubscription, databaseSubscription], deleting: [])
check(
    savedSubscriptions.saveResults["db"] == .success(databaseSubscription)
        && savedSubscriptions.saveResults["zone"] == .success(zoneSubscription),
    "database and zone subscriptions save and come back as they were")
let ckZoneSubscription = zoneSubscription.ckSubscription as? CKRecordZoneSubscription
check(
    ckZoneSubscription?.zoneID == sync.ckZoneID
        && ckZoneSubscription?.notificationInfo?.shouldSendContentAvailable == false
        && databaseSubscription.ckSubscription is CKDatabaseSubscription
        && databaseSubscription.ckSubscription.notificationInfo?.shouldSendContentAvailable == true,
    "a zone subscription is a CKRecordZoneSubscription, a database one a CKDatabaseSubscription, content-available as asked"
)
changesContainer.privateCloudDatabase.standInStore(
    CKQuerySubscription(recordType: "Note", predicate: NSPredicate(value: true), subscriptionID: "query"))
check(
    try await changes.allSubscriptions() == [databaseSubscription, zoneSubscription],
    "all subscriptions come by ID, leaving out query subscriptions")
let subscriptionChanges = try await changes.modifySubscriptions(
    saving: [
        CloudSubscription(id: "default", kind: .zone(.default)),
        CloudSubscription(id: "missing", kind: .zone(missingZone)),
    ],
    deleting: ["db", "nope"])
check(
    {
        if case .invalidArguments? = subscriptionChanges.saveResults["default"]?.failureKind { true } else { false }
    }() && subscriptionChanges.saveResults["missing"] == .failure(.zoneNotFound(missingZone)),
    "a subscription to the default zone is refused, one to a missing zone is zoneNotFound naming it")
check(
    {
        if case .success? = subscriptionChanges.deleteResults["db"] { true } else { false }
    }()
        && {
            if case .invalidArguments(let reason)? = subscriptionChanges.deleteResults["nope"]?.failureKind {
                reason.contains("nope")
            } else {
                false
            }
        }(),
    "deleting a subscription succeeds; deleting a missing one names it")

// Notifications CloudKit parsed.
let databasePush = CloudNotification(
    CKNotification.standInDatabase(subscriptionID: "db", containerIdentifier: "iCloud.changes", scope: .private))
check(
    databasePush
        == CloudNotification(
            kind: .database, subscriptionID: "db", databaseScope: .private, containerIdentifier: "iCloud.changes"),
    "a CKDatabaseNotification is a database push with its subscription, scope and container")
let zonePush = CloudNotification(
    CKNotification.standInZone(
        sync.ckZoneID, subscriptionID: "zone", scope: .shared, owner: CKRecord.ID(recordName: "_ann")))
check(
    zonePush.kind == .recordZone(sync) && zonePush.databaseScope == .shared && zonePush.userRecordName == "_ann",
    "a CKRecordZoneNotification is a zone push, with the subscription owner's record name")
check(
    CloudNotification(CKNotification.standInZone(nil, subscriptionID: nil, scope: .private)).kind == .unknown,
    "a zone push without its zone is unknown")
let queryPush = CloudNotification(
    CKNotification.standInQuery(
        CKRecord.ID(recordName: "n1", zoneID: sync.ckZoneID), reason: .recordUpdated,
        fields: [
            "title": "Hi", "count": NSNumber(value: 3),
            "owner": CKRecord.Reference(
                recordID: CKRecord.ID(recordName: "p1"), action: .none),
            "when": NSDate(),
        ], subscriptionID: "q", scope: .public))
check(
    queryPush.kind
        == .query(
            recordID: CloudRecord.ID(recordName: "n1", zoneID: sync), reason: .recordUpdated,
            fields: ["title": "Hi", "count": "3", "owner": "p1"]) && queryPush.databaseScope == .public,
    "a CKQueryNotification keeps its record, reason and the fields that read as text")
check(
    CloudNotification(CKNotification(standInSubscriptionID: "x", containerIdentifier: nil)).kind == .unknown,
    "another notification is unknown")

// Queries on system fields, as CloudKit's keys.
let since = Date(timeIntervalSince1970: 1_000)
check(
    (try? describe(QueryComparison.comparisons(of: .modified(after: since), listFields: [], zoneID: zone))) == [
        "modificationDate %K > %@ date:1000"
    ],
    "modified(after:) is modificationDate > an NSDate")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .and([
                .compare(field: "creationDate", .lessThanOrEquals, .date(since)),
                .compare(field: "recordID", .greaterThanOrEquals, .string("n5")),
                .equals(field: "recordID", value: .string("n7")),
            ]), listFields: [], zoneID: zone))) == [
            "creationDate %K <= %@ date:1000", "recordID %K >= %@ id:n5@Z", "recordID %K == %@ id:n7@Z",
        ],
    "system fields compare as creationDate and recordID, a record name as a CKRecord.ID in the query's zone")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .and([
                .compare(field: "grade", .notEquals, .int64(3)), .compare(field: "name", .lessThan, .string("M")),
                .compare(field: "tags", .equals, .string("swift")),
            ]), listFields: people, zoneID: zone))) == [
            "grade %K != %@ number:3", "name %K < %@ string:M", "tags %K CONTAINS %@ string:swift",
        ],
    "comparators become CloudKit's operators; equality with a list field is CONTAINS")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .and([
                .compare(field: "grade", .in, .int64List([1, 2])), .compare(field: "grade", .notIn, .int64List([3])),
                .compare(field: "name", .beginsWith, .string("An")),
                .compare(field: "tags", .listContains, .string("swift")),
                .compare(field: "tags", .listContainsAll, .stringList(["a", "b"])),
                .compare(field: "recordID", .in, .stringList(["n1", "n2"])),
                .compare(field: "creatorUserRecordID", .equals, .string("_ada")),
            ]), listFields: people, zoneID: zone))) == [
            "grade %K IN %@ [number:1 number:2]", "grade NOT (%K IN %@) [number:3]", "name %K BEGINSWITH %@ string:An",
            "tags %K CONTAINS %@ string:swift", "tags %K CONTAINS %@ string:a", "tags %K CONTAINS %@ string:b",
            "recordID %K IN %@ [id:n1@Z id:n2@Z]", "creatorUserRecordID %K == %@ id:_ada@_defaultZone",
        ],
    "IN, NOT IN, BEGINSWITH, list membership, every element of a list, record names and users as CKRecord.IDs")
check(
    (try? describe(
        QueryComparison.comparisons(
            of: .near(field: "spot", location: CloudLocation(latitude: 1, longitude: 2), radius: 1_500),
            listFields: [], zoneID: zone))) == [
            "spot distanceToLocation:fromLocation:(%K, %@) <= %@ location:1.0,2.0 number:1.5"
        ],
    "near is CloudKit's distance function, with the radius in kilometres")
let refusedComparisons: [(CloudQuery.Predicate, String)] = [
    (.compare(field: "name", .containsAllTokens, .string("a b")), "a token search in one field"),
    (.compare(field: "name", .notBeginsWith, .string("A")), "NOT around anything but IN"),
    (.compare(field: "tags", .listContainsAny, .stringList(["a"])), "membership of any of several values (an OR)"),
    (.compare(field: "name", .listContains, .string("A")), "a list comparator on a single field"),
    (.compare(field: "grade", .in, .int64(1)), "IN with one value"),
    (.compare(field: "name", .beginsWith, .int64(1)), "BEGINSWITH with a number"),
    (.near(field: "spot", location: CloudLocation(latitude: 1, longitude: 2), radius: -1), "a negative radius"),
    (.compare(field: "school", .lessThan, .reference(CloudReference(recordID: school))), "an order on a reference"),
    (.compare(field: "tags", .notEquals, .string("swift")), "a list field compared other than by membership"),
    (.compare(field: "modificationDate", .greaterThan, .string("yesterday")), "a date system field with a string"),
    (.compare(field: "recordID", .equals, .int64(1)), "the record name with a number"),
    (.compare(field: "grade", .greaterThan, .int64List([1])), "a comparison with a list value"),
]
for (predicate, what) in refusedComparisons {
    check(
        {
            do {
                _ = try QueryComparison.comparisons(of: predicate, listFields: people, zoneID: zone)
                return false
            } catch {
                if case .invalidArguments? = (error as? CloudDatabaseError)?.kind { return true }
                return false
            }
        }(), "\(what) is refused before CloudKit sees it")
}
check(
    (try? changes.ckQuery(
        CloudQuery(
            recordType: "Note", predicate: .modified(after: since),
            sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate, ascending: false)]), zoneID: sync))?
        .sortDescriptors?.map(\.ascending) == [false],
    "a sort on a system field becomes a sort descriptor")

// MARK: Shares

let sharingContainer = CKContainer(identifier: "iCloud.sharing")
let sharing = CloudKitDatabase(sharingContainer.privateCloudDatabase, container: sharingContainer)
let lists = CloudRecord.ZoneID(zoneName: "Lists")
_ = try await sharing.modifyRecordZones(saving: [lists], deleting: [])
let groceries = CloudRecord(
    recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: lists),
    fields: ["name": .string("Groceries")])
var milk = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: lists))
milk.parentID = groceries.id
var listShare = try CloudShare(rootRecord: groceries)
listShare.title = "Groceries"
try listShare.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
try listShare.addParticipant(.init(emailAddress: "carol@example.com", permission: .readOnly))
let sharedSave = try await sharing.modifyRecords(
    saving: [groceries, milk, listShare.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
let savedShare = try? sharedSave.saveResults[listShare.id]?.get()
let savedRoot = try? sharedSave.saveResults[groceries.id]?.get()
check(savedShare != nil, "a new share saves with its root as a CKShare")
check(savedRoot?.systemFields?.shareID == listShare.id, "the root names its new share")
check((try? sharedSave.saveResults[milk.id]?.get())?.parentID == groceries.id, "a child keeps its parent")
let readShare = savedShare.flatMap { try? CloudShare(record: $0) }
check(readShare?.publicPermission == CloudShare.Permission.none, "a share with invited participants is private")
check(readShare?.title == "Groceries", "a share's title is its cloudkit.title field")
check(
    readShare?.participants.map(\.role) == [.owner, .privateUser, .privateUser],
    "the owner comes first, then the invited participants")
check(
    readShare?.participants.first { $0.userRecordName == "_bob" }?.permission == .readWrite,
    "a participant asked of the container by user record ID gets the permission the share gives")
check(
    readShare?.participants.first { $0.emailAddress == "carol@example.com" }?.acceptanceStatus == .pending,
    "a participant asked of the container by email address is invited")
check(readShare?.url != nil && readShare?.shortGUID == readShare?.url?.lastPathComponent, "the URL and its short GUID")

// Saved again from its archive: a participant removed goes, one whose permission changed keeps the change.
if var changed = readShare {
    let carol = changed.participants.first { $0.emailAddress == "carol@example.com" }
    _ = carol.map { changed.removeParticipant($0) }
    try? changed.addParticipant(.init(userRecordName: "_bob", permission: .readOnly))
    let again = try? await saveResult(changed.record, in: sharing)?.get()
    let reread = again.flatMap { try? CloudShare(record: $0) }
    check(reread?.participants.count == 2, "a removed participant leaves the CKShare")
    check(
        reread?.participants.first { $0.userRecordName == "_bob" }?.permission == .readOnly,
        "a changed permission reaches the CKShare")
    check(reread?.url == readShare?.url, "a share keeps its URL")
}

// Made public: the invited participants go while the permission is still `none` (CloudKit raises an exception
// otherwise, as the stand-in does), then the permission is set.
let currentShare = try? await sharing.record(for: listShare.id)
if var publicShare = currentShare.flatMap({ try? CloudShare(record: $0) }) {
    for participant in publicShare.participants where participant.role == .privateUser {
        publicShare.removeParticipant(participant)
    }
    publicShare.publicPermission = .readOnly
    let saved = try? await saveResult(publicShare.record, in: sharing)?.get()
    let reread = saved.flatMap { try? CloudShare(record: $0) }
    check(reread?.publicPermission == .readOnly, "a share's public permission reaches CloudKit and back")
    check(reread?.participants.map(\.role) == [.owner], "a public share keeps no invited participant")
    // And private again: the permission first, then the invitation.
    if var again = reread {
        again.publicPermission = .none
        try? again.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let reprivate = try? await saveResult(again.record, in: sharing)?.get()
        let back = reprivate.flatMap { try? CloudShare(record: $0) }
        check(
            back?.publicPermission == CloudShare.Permission.none && back?.participants.count == 2,
            "a public share made private again invites its participants")
    }
}

// The system's sharing UI takes the CKShare as CloudKit holds it and the container.
if let items = try? await sharing.sharingItems(for: listShare.id) {
    check(items.share.recordID.recordName == listShare.id.recordName, "the sharing UI gets the share CloudKit holds")
    check(items.share.participants.count == 2, "with its participants")
    check(items.container === sharingContainer, "and the database's container")
} else {
    check(false, "the sharing UI gets the share CloudKit holds")
}
let notAShare = await thrownError { try await sharing.sharingItems(for: groceries.id) }
check(
    { if case .invalidArguments? = (notAShare as? CloudDatabaseError)?.kind { true } else { false } }(),
    "a record that isn't a share is refused for the sharing UI")
let missingShare = CloudRecord.ID(recordName: "missing", zoneID: lists)
let noShare = await thrownError { try await sharing.sharingItems(for: missingShare) }
check(noShare as? CloudDatabaseError == .unknownItem(missingShare), "a share CloudKit doesn't have is unknownItem")

// A share both public and with invited participants is refused before CloudKit sees it, as CloudKit refuses it.
var mixed = try CloudShare(
    rootRecord: CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "mixed", zoneID: lists)))
try mixed.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
mixed.publicPermission = .readOnly
let mixedResult = try await saveResult(mixed.record, in: sharing)
check(
    {
        if case .invalidArguments(let reason)? = mixedResult?.failureKind { return reason.contains("doesn't mix") }
        return false
    }(), "a share both public and with invited participants is refused")

// A new share without its root in the request is refused before CloudKit sees it.
let orphanShare = try CloudShare(rootRecordID: CloudRecord.ID(recordName: "elsewhere", zoneID: lists))
let orphan = try await saveResult(orphanShare.record, in: sharing)
check(
    {
        if case .invalidArguments(let reason)? = orphan?.failureKind { return reason.contains("same request") }
        return false
    }(), "a new share of a root not in the request is refused with what to do")

// A zone-wide share.
let zoneShare = try CloudShare(zoneID: lists)
let zoneSaved = try? await saveResult(zoneShare.record, in: sharing)?.get()
check(
    zoneSaved.flatMap { try? CloudShare(record: $0) }?.isZoneWide == true, "a zone-wide share is a CKShare of the zone")

// Accepting from a URL: the metadata, then the share accepted.
let offered = CKShare(recordZoneID: CKRecordZone.ID(zoneName: "Lists", ownerName: "_alice"))
let offeredRoot = CKRecord(
    recordType: "List", recordID: CKRecord.ID(recordName: "groceries", zoneID: offered.recordID.zoneID))
let invitation = try await sharingContainer.shareParticipant(forUserRecordID: CKRecord.ID(recordName: "_stand-in-user"))
offered.addParticipant(invitation)
let offerURL = URL(string: "https://www.icloud.com/share/0123456789abcdef")!
sharingContainer.standInOffer(offered, at: offerURL, rootRecord: offeredRoot)
let metadata = try? await sharing.shareMetadata(for: offerURL)
check(metadata?.participantStatus == .pending, "the metadata says the user is invited")
check(metadata?.participantPermission == .readWrite, "the metadata gives the permission accepting would give")
check(metadata?.rootRecordID?.zoneID.ownerName == "_alice", "the root is in the owner's zone")
check(metadata?.share.shortGUID == "0123456789abcdef", "the share's short GUID comes from its URL")
check(metadata != nil && metadata?.rootRecord == nil, "CloudKit's async call gives no root record")
let withRoot = try? await sharing.shareMetadata(for: offerURL, fetchingRootRecord: true)
check(
    withRoot?.rootRecord?.id.recordName == "groceries" && withRoot?.rootRecordID == withRoot?.rootRecord?.id,
    "asked for, the root record comes with the metadata (CKFetchShareMetadataOperation)")
let unknownMetadata = await thrownError {
    try await sharing.shareMetadata(for: URL(string: "https://www.icloud.com/share/y")!, fetchingRootRecord: true)
}
check(
    {
        if case .invalidArguments(let reason)? = (unknownMetadata as? CloudDatabaseError)?.kind {
            return reason.contains("no share is at")
        }
        return false
    }(), "the operation's unknown URL fails as the async call's does")
let accepted = try? await sharing.acceptShare(at: offerURL)
check(
    accepted?.participants.contains { $0.role == .privateUser && $0.acceptanceStatus == .accepted } == true,
    "accepting from the URL accepts the share")
let unknownURL = await thrownError { try await sharing.acceptShare(at: URL(string: "https://www.icloud.com/share/x")!) }
check(
    {
        if case .invalidArguments(let reason)? = (unknownURL as? CloudDatabaseError)?.kind {
            return reason.contains("no share is at")
        }
        return false
    }(), "a URL no share has fails saying to check the URL")

// The shared database is a CloudKitDatabase like any other.
let sharedDatabase = CloudKitDatabase(sharingContainer.sharedCloudDatabase, container: sharingContainer)
check(sharedDatabase.database.databaseScope == .shared, "the shared database wraps as any other")

try? FileManager.default.removeItem(at: file)
for failure in failures { print("FAILED: \(failure)") }
print("Apple bridge: \(passed) passed, \(failures.count) failed")
exit(failures.isEmpty ? 0 : 1)
