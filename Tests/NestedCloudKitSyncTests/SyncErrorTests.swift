import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// `SyncError` is a struct over a private enum: matched by its code or by value, carrying what it is about and the
/// error underneath.
@Suite("Sync: errors")
struct SyncErrorTests {
    @Test func aStoreThatCantBeOpenedCarriesSQLitesError() throws {
        let path = "/nonexistent-folder-\(UUID().uuidString)/store.sqlite"
        let error = try #require(throws: SyncError.self) { try SyncStore(path: path, clock: VirtualCloudClock()) }
        #expect(error.code == .store)
        #expect(error.reason?.hasPrefix("can't open the store at \(path): ") == true)
        let sqlite = try #require(error.underlyingError as? DatabaseError)
        #expect(sqlite.resultCode == .SQLITE_CANTOPEN)
    }

    @Test func aClosedStoreIsCaughtByValue() async throws {
        let store = try SyncStore.inMemory(clock: VirtualCloudClock())
        try await store.close()
        do {
            try await store.save(Note(id: "n", title: "", body: ""))
            Issue.record("a closed store saved")
        } catch SyncError.closed {
        } catch {
            Issue.record("expected SyncError.closed, got \(error)")
        }
    }

    @Test func anErrorSaysWhatItIsAboutAndEqualityIgnoresWhatIsUnderneath() {
        let id = CloudRecord.ID(recordName: "n", zoneID: SyncStore.defaultZoneID)
        let newer = SyncError.recordFromNewerVersion(id, recordVersion: 3, modelVersion: 2)
        #expect(newer.code == .recordFromNewerVersion)
        #expect(newer.recordID == id)
        #expect(newer.versions?.record == 3 && newer.versions?.model == 2)
        #expect(newer.reason == nil && newer.databaseError == nil && newer.haltReason == nil)

        let denied = SyncError.sharePermissionDenied(id, "the share is read-only")
        #expect(denied.code == .sharePermissionDenied && denied.reason == "the share is read-only")
        #expect(SyncError.halted(.quotaExceeded).haltReason == .quotaExceeded)
        #expect(SyncError.database(.serverResponseLost).databaseError == .serverResponseLost)
        #expect(SyncError.unknownZone(id.zoneID).zoneID == id.zoneID)

        struct Disk: Error {}
        let carried = SyncError.store("the disk is full", underlying: Disk())
        #expect(carried.underlyingError is Disk)
        #expect(carried == .store("the disk is full"))
        #expect(Set([carried, .store("the disk is full")]).count == 1)
        #expect(carried != .store("another reason"))
        #expect(SyncError.closed.code.description == "closed")
    }

    @Test func anUnknownFailureIsAStoreErrorThatKeepsIt() {
        struct Unexpected: Error {}
        let error = SyncEngine.syncError(Unexpected())
        #expect(error.code == .store)
        #expect(error.underlyingError is Unexpected)
        #expect(SyncEngine.syncError(CloudDatabaseError.quotaExceeded) == .halted(.quotaExceeded))
    }
}
