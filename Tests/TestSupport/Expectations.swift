import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

/// Encodes a value and returns its records, root last.
package func records<Value: CKEncodable>(
    of value: Value, with encoder: CKRecordEncoder = CKRecordEncoder()
) throws -> [CloudRecord] {
    try encoder.encode(value)
}

/// Encodes a value and checks that it gives exactly the expected records, in order, with fields in order.
package func expectRecords<Value: CKEncodable>(
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
package func expectFields<Value: CKEncodable>(
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
package func encodingError<Value: CKEncodable>(
    of value: Value,
    with encoder: CKRecordEncoder = CKRecordEncoder(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> CKCodableError {
    try #require(throws: CKCodableError.self, sourceLocation: sourceLocation) { try encoder.encode(value) }
}

extension CKCodableError {
    /// The coding path as strings, for comparing in tests.
    package var path: [String] { codingPath.map(\.stringValue) }
}

/// Encodes a value, checks its records against the expected ones when given, saves them to a fresh in-memory
/// database, decodes the root back through the database, and returns the decoded value and the database.
@discardableResult
package func roundTrip<Value: CKCodable>(
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
    database.network.resetStatistics()
    let decoded = try await decoder.decode(Value.self, from: root, referenceDatabase: database)
    return (decoded, database)
}
