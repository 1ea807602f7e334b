import Foundation
import NestedCloudKitCodable
import Testing

/// Encodes a value and returns its records, root last.
func records<Value: CKEncodable>(
    of value: Value, with encoder: CKRecordEncoder = CKRecordEncoder()
) throws -> [CloudRecord] {
    try encoder.encode(value)
}

/// Encodes a value and checks that it gives exactly the expected records, in order, with fields in order.
func expectRecords<Value: CKEncodable>(
    of value: Value,
    with encoder: CKRecordEncoder = CKRecordEncoder(),
    equal expected: [CloudRecord],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let actual = try encoder.encode(value)
    #expect(actual == expected, sourceLocation: sourceLocation)
    #expect(actual.map(\.fields.names) == expected.map(\.fields.names), "field order", sourceLocation: sourceLocation)
}

/// Encodes a value and checks that its root record holds exactly the expected fields, in order.
func expectFields<Value: CKEncodable>(
    of value: Value,
    with encoder: CKRecordEncoder = CKRecordEncoder(),
    equal expected: CloudRecord.Fields,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let root = try #require(try encoder.encode(value).last, sourceLocation: sourceLocation)
    #expect(root.fields == expected, sourceLocation: sourceLocation)
    #expect(root.fields.names == expected.names, "field order", sourceLocation: sourceLocation)
}

/// Encodes a value that must fail, and returns the error.
func encodingError<Value: CKEncodable>(
    of value: Value,
    with encoder: CKRecordEncoder = CKRecordEncoder(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> CKCodableError {
    try #require(throws: CKCodableError.self, sourceLocation: sourceLocation) { try encoder.encode(value) }
}

extension CKCodableError {
    /// The coding path as strings, for comparing in tests.
    var path: [String] { codingPath.map(\.stringValue) }
}

/// A record in the default zone, for building expectations.
func record(_ type: String, _ name: String, _ fields: CloudRecord.Fields, zone: CloudRecord.ZoneID = .default)
    -> CloudRecord
{
    CloudRecord(recordType: type, id: CloudRecord.ID(recordName: name, zoneID: zone), fields: fields)
}

/// A reference to a record in the default zone.
func reference(_ name: String, _ action: CloudReference.Action = .none, zone: CloudRecord.ZoneID = .default)
    -> CloudValue
{
    .reference(CloudReference(recordID: CloudRecord.ID(recordName: name, zoneID: zone), action: action))
}

extension Date {
    /// A date from whole milliseconds since 1970, as CloudKit stores it.
    static func milliseconds(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

/// Encodes a value, checks its records against the expected ones when given, saves them to a fresh in-memory
/// database, decodes the root back through the database, and returns the decoded value and the database.
@discardableResult
func roundTrip<Value: CKCodable>(
    _ value: Value,
    encoder: CKRecordEncoder = CKRecordEncoder(),
    decoder: CKRecordDecoder = CKRecordDecoder(),
    expecting expected: [CloudRecord]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> (value: Value, database: InMemoryCloudDatabase) {
    let records = try encoder.encode(value)
    if let expected {
        #expect(records == expected, sourceLocation: sourceLocation)
        #expect(
            records.map(\.fields.names) == expected.map(\.fields.names), "field order", sourceLocation: sourceLocation)
    }
    let database = InMemoryCloudDatabase()
    if encoder.zoneID != .default {
        _ = try await database.modifyRecordZones(saving: [encoder.zoneID], deleting: [])
    }
    let saved = try await database.saveRecords(records)
    let root = try #require(saved.last, sourceLocation: sourceLocation)
    await database.resetStatistics()
    let decoded = try await decoder.decode(Value.self, from: root, referenceDatabase: database)
    return (decoded, database)
}
