import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// CloudKit's rules for assets, checked against every backend: the database keeps a copy of the contents from
/// the moment of the save, refuses a file it can't read, and keeps an asset's contents as long as its field
/// holds it, whatever a later save leaves out.
@Suite("Database conformance: assets", .stopsEmulators)
struct AssetConformanceTests {
    private let photo = Data("the photo's bytes".utf8)

    /// A file of its own holding `data`, removed when the test process's temporary folder is.
    private func assetFile(_ data: Data) throws -> URL {
        let file = URL(fileURLWithPath: temporaryDatabasePath("asset"))
        try data.write(to: file)
        return file
    }

    /// The contents of the named asset field of the stored record.
    private func storedContents(of id: CloudRecord.ID, field: String, in database: any CloudDatabase) async throws
        -> Data
    {
        let stored = try await database.record(for: id)
        guard case .asset(let asset)? = stored[field] else {
            Issue.record("\(field) holds \(String(describing: stored[field])), not an asset")
            return Data()
        }
        return try asset.contents()
    }

    @Test(arguments: DatabaseBackend.all)
    func anAssetsFileIsCopiedWhenSavedSoLaterChangesToTheFileDontReachIt(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let file = try assetFile(photo)
        let saved = try await database.save(record("Album", "a", ["cover": .asset(CloudAsset(fileURL: file))]))

        try Data("overwritten".utf8).write(to: file)
        #expect(try await storedContents(of: saved.id, field: "cover", in: database) == photo)
        try FileManager.default.removeItem(at: file)
        #expect(try await storedContents(of: saved.id, field: "cover", in: database) == photo)
    }

    @Test(arguments: DatabaseBackend.all)
    func anAssetWhoseFileDoesntExistIsRefusedWithInvalidArguments(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let missing = URL(fileURLWithPath: temporaryDatabasePath("never-written"))
        let album = record("Album", "a", ["cover": .asset(CloudAsset(fileURL: missing))])

        let results = try await database.modifyRecords(
            saving: [album], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        guard case .invalidArguments(let reason)? = results.saveResults[album.id]?.failureKind else {
            Issue.record("expected invalidArguments, got \(String(describing: results.saveResults[album.id]))")
            return
        }
        #expect(reason.contains("cover"))
        let fetched = try await database.records(for: [album.id])
        #expect(
            fetched[album.id].map { $0.failureKind.map { if case .unknownItem = $0 { true } else { false } } ?? false }
                == true)
    }

    /// A save that doesn't carry the asset's field: a model that decodes only some fields and is saved again, a
    /// bare record saved with `changedKeys`.
    enum PartialSave: String, CaseIterable, CustomTestStringConvertible {
        case fetchedRecordWithoutTheField, bareRecordWithChangedKeys
        var testDescription: String { rawValue }
    }

    @Test(arguments: DatabaseBackend.all, PartialSave.allCases)
    func aSaveThatDoesntCarryTheAssetsFieldKeepsItsContents(backend: DatabaseBackend, save: PartialSave) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(
            record("Album", "a", ["title": .string("Summer"), "cover": .asset(CloudAsset(data: photo))]))

        switch save {
        case .fetchedRecordWithoutTheField:
            var update = CloudRecord(recordType: "Album", id: saved.id, systemFields: saved.systemFields)
            update["title"] = .string("Summer 2026")
            _ = try await database.save(update)
        case .bareRecordWithChangedKeys:
            _ = try await database.save(
                record("Album", "a", ["title": .string("Summer 2026")]), savePolicy: .changedKeys)
        }

        #expect(try await database.record(for: saved.id)["title"] == .string("Summer 2026"))
        #expect(try await storedContents(of: saved.id, field: "cover", in: database) == photo)
    }

    @Test(arguments: DatabaseBackend.all)
    func aSavedRecordSentBackAsFetchedKeepsItsAssetsContents(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(
            record("Album", "a", ["title": .string("Summer"), "cover": .asset(CloudAsset(data: photo))]))

        var fetched = try await database.record(for: saved.id)
        fetched["title"] = .string("Summer 2026")
        _ = try await database.save(fetched)

        #expect(try await storedContents(of: saved.id, field: "cover", in: database) == photo)
    }

    @Test(arguments: DatabaseBackend.all)
    func aNewAssetReplacesTheContentsAndAClearedAssetIsGone(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(
            record(
                "Album", "a",
                [
                    "cover": .asset(CloudAsset(data: photo)), "back": .asset(CloudAsset(data: photo)),
                ]))
        let replacement = Data("another photo".utf8)

        var update = try await database.record(for: saved.id)
        update["cover"] = .asset(CloudAsset(data: replacement))
        update["back"] = nil
        _ = try await database.save(update)

        #expect(try await storedContents(of: saved.id, field: "cover", in: database) == replacement)
        #expect(try await database.record(for: saved.id)["back"] == nil)
    }
}
