import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// The store's copies of asset files: made once, kept while a record, its server copy or a pending change needs
/// them, deleted when nothing does.
@Suite("Sync store: asset files", .stopsEmulators)
struct AssetFileTests {
    /// A file of the app's, outside the store.
    private static func appFile(_ contents: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID().uuidString).jpg")
        try Data(contents.utf8).write(to: url)
        return url
    }

    private static func copies(of store: SyncStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.assetFiles.directory.path)) ?? []).sorted()
    }

    @Test func aFileSavedSyncedFetchedAndSavedAgainIsNeitherCopiedNorQueuedAgain() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        let file = try Self.appFile("pixels")
        try await a.store.save(Photo(id: "p", caption: "beach", image: file))
        try await a.sync()
        let kept = Self.copies(of: a.store)
        #expect(kept.count == 1)
        for _ in 0..<8 {
            let photo = try #require(try await a.store.fetch(Photo.self, id: "p"))
            try await a.store.save(photo)
            #expect(try await a.store.pendingChanges().isEmpty)
        }
        #expect(Self.copies(of: a.store) == kept)
        let photo = try #require(try await a.store.fetch(Photo.self, id: "p"))
        #expect(try Data(contentsOf: photo.image) == Data("pixels".utf8))
    }

    @Test func theAppsOwnFileSavedAgainWithTheSameContentsQueuesNothing() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        let file = try Self.appFile("pixels")
        try await a.store.save(Photo(id: "p", caption: "beach", image: file))
        try await a.sync()
        try await a.store.save(Photo(id: "p", caption: "beach", image: file))
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(Self.copies(of: a.store).count == 1)
    }

    @Test func copiesNoRecordAncestorOrPendingChangeNeedsAreDeleted() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Photo(id: "p", caption: "", image: try Self.appFile("first")))
        try await a.sync()
        try await a.store.save(Photo(id: "p", caption: "", image: try Self.appFile("second")))
        // The first copy is still the server's copy (the ancestor) until the upload is acknowledged.
        #expect(Self.copies(of: a.store).count == 2)
        try await a.sync()
        let kept = Self.copies(of: a.store)
        #expect(kept.count == 1)
        let photo = try #require(try await a.store.fetch(Photo.self, id: "p"))
        #expect(try Data(contentsOf: photo.image) == Data("second".utf8))
        #expect(kept == [photo.image.lastPathComponent])
        try await a.store.delete(photo)
        try await a.sync()
        #expect(Self.copies(of: a.store).isEmpty)
    }

    @Test func aFetchedAssetWithUnchangedContentsKeepsTheLocalCopy() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        try await a.store.save(Photo(id: "p", caption: "one", image: try Self.appFile("pixels")))
        try await a.sync()
        try await b.sync()
        let before = try #require(try await b.store.fetch(Photo.self, id: "p"))
        // Another device changes the caption only: the image's copy the app holds a URL to stays.
        var changed = try #require(try await a.store.fetch(Photo.self, id: "p"))
        changed.caption = "two"
        try await a.store.save(changed)
        try await a.sync()
        try await b.sync()
        let after = try #require(try await b.store.fetch(Photo.self, id: "p"))
        #expect(after.caption == "two")
        #expect(after.image == before.image)
        #expect(Self.copies(of: b.store) == [before.image.lastPathComponent])
    }

    @Test func aModelReadBeforeAnotherDevicesNewImageKeepsTheNewImageWhenSaved() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        try await a.store.save(Photo(id: "p", caption: "one", image: try Self.appFile("old")))
        try await a.sync()
        try await b.sync()
        var stale = try #require(try await b.store.fetch(Photo.self, id: "p"))
        try await a.store.save(Photo(id: "p", caption: "one", image: try Self.appFile("new")))
        try await a.sync()
        try await b.sync()
        // The old image's copy is gone; the stale model's URL names it. Saving the stale model changes the caption
        // and keeps the newer image, never a file that isn't there.
        stale.caption = "edited on b"
        try await b.store.save(stale)
        try await b.sync()
        try await a.sync()
        let photo = try #require(try await a.store.fetch(Photo.self, id: "p"))
        #expect(photo.caption == "edited on b")
        #expect(try Data(contentsOf: photo.image) == Data("new".utf8))
    }

    @Test func aNewRecordNamingACopyTheStoreNoLongerHoldsIsRefusedNotSavedWithoutItsAsset() async throws {
        let store = try SyncStore.inMemory(clock: VirtualCloudClock())
        let gone = store.assetFiles.directory.appendingPathComponent("gone.jpg")
        await #expect(throws: SyncError.self) {
            try await store.save(Photo(id: "p", caption: "", image: gone))
        }
        #expect(try await store.fetch(Photo.self, id: "p") == nil)
    }

    @Test(arguments: ScenarioServer.allCases)
    func aLostAnswerForARecordWithAFileIsRecognisedAsTheDevicesOwn(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let a = try await scenario.device(
            SyncConfiguration(conflictPolicy: .serverWins, retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
        try await a.store.save(Photo(id: "p", caption: "one", image: try Self.appFile("pixels")))
        try await scenario.loseNextUploadAnswer()
        await #expect(throws: SyncError.self) { try await a.sync() }
        try await a.sync()
        #expect(a.recorder.resolutions.isEmpty)
        #expect(try await a.store.pendingChanges().isEmpty)
        // And with a newer edit on top of the lost one.
        var photo = try #require(try await a.store.fetch(Photo.self, id: "p"))
        photo.caption = "two"
        try await a.store.save(photo)
        try await scenario.loseNextUploadAnswer()
        await #expect(throws: SyncError.self) { try await a.sync() }
        photo.caption = "three"
        try await a.store.save(photo)
        try await a.sync()
        #expect(a.recorder.resolutions.isEmpty)
        let b = try await scenario.device()
        try await b.sync()
        let fetched = try #require(try await b.store.fetch(Photo.self, id: "p"))
        #expect(fetched.caption == "three")
        #expect(try Data(contentsOf: fetched.image) == Data("pixels".utf8))
    }

    @Test func copiesAStoreOfTheFirstLayoutHoldsAreKeptWhenItOpens() async throws {
        // A store reopened lists every copy its rows point to: none is taken for garbage.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("assets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        do {
            let store = try SyncStore(path: path, clock: VirtualCloudClock())
            try await store.save(Photo(id: "p", caption: "", image: try Self.appFile("pixels")))
            // A copy nothing points to (a crash left it behind).
            try Data("orphan".utf8).write(to: store.assetFiles.directory.appendingPathComponent("orphan"))
        }
        let reopened = try SyncStore(path: path, clock: VirtualCloudClock())
        let photo = try #require(try await reopened.fetch(Photo.self, id: "p"))
        #expect(try Data(contentsOf: photo.image) == Data("pixels".utf8))
        #expect(Self.copies(of: reopened) == [photo.image.lastPathComponent])
    }
}
