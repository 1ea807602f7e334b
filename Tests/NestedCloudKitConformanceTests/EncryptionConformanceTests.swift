import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Fields CloudKit keeps encrypted stay encrypted through every backend that stores them, updates included.
@Suite("Database conformance: encrypted fields", .stopsEmulators)
struct EncryptionConformanceTests {
    static let backends = DatabaseBackend.all.filter(\.keepsEncryptedFields)

    @Test(arguments: backends)
    func encryptedFieldsAreFetchedEncrypted(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var patient = record("Patient", "p", ["name": .string("Ada")])
        patient[encrypted: "diagnosis"] = .string("fine")
        patient[encrypted: "visits"] = .int64List([1, 2])

        let saved = try await database.save(patient)
        let fetched = try await database.record(for: patient.id)

        #expect(saved.encryptedFieldNames == ["diagnosis", "visits"])
        #expect(fetched.encryptedFieldNames == ["diagnosis", "visits"])
        #expect(fetched[encrypted: "diagnosis"] == .string("fine"))
        #expect(fetched[encrypted: "name"] == nil)
    }

    @Test(arguments: backends)
    func anUpdateWithoutTheEncryptedFieldKeepsItEncrypted(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var patient = record("Patient", "p", ["name": .string("Ada")])
        patient[encrypted: "diagnosis"] = .string("fine")
        _ = try await database.save(patient)

        _ = try await database.save(record("Patient", "p", ["name": .string("Ada L.")]), savePolicy: .changedKeys)

        let fetched = try await database.record(for: patient.id)
        #expect(fetched["name"] == .string("Ada L."))
        #expect(fetched[encrypted: "diagnosis"] == .string("fine"))
    }
}
