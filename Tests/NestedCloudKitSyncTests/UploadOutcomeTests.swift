import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// The send loop's rules for an answer, on their own: each kind of answer to a change lands in exactly one place.
@Suite("Sync: sorting an upload's answer")
struct UploadOutcomeTests {
    private static let zone = CloudRecord.ZoneID(zoneName: "Notes")

    private static func id(_ name: String) -> CloudRecord.ID { CloudRecord.ID(recordName: name, zoneID: zone) }

    private static func note(_ name: String, _ text: String, changeTag: String? = nil) -> CloudRecord {
        var record = CloudRecord(recordType: "Note", id: id(name), fields: ["text": .string(text)])
        if let changeTag { record.systemFields = CloudRecord.SystemFields(changeTag: changeTag) }
        return record
    }

    private static func save(_ record: CloudRecord, sentCopies: [CloudRecord] = []) -> Upload {
        Upload(entry: entry(record.id, .save, sentCopies: sentCopies), record: record)
    }

    private static func delete(_ name: String) -> Upload {
        Upload(entry: entry(id(name), .delete), record: nil)
    }

    private static func entry(
        _ id: CloudRecord.ID, _ operation: OutboxEntry.Operation, sentCopies: [CloudRecord] = []
    ) -> OutboxEntry {
        OutboxEntry(
            id: id, operation: operation, recordType: "Note", version: 7, sequence: 1, ancestor: nil, failures: 0,
            lastError: nil, halted: false, sent: !sentCopies.isEmpty, sentCopies: sentCopies)
    }

    private static func conflict(server: CloudRecord, client: CloudRecord) -> CloudDatabaseError {
        .serverRecordChanged(server: server, client: client, ancestor: nil)
    }

    @Test func savesAndDeletionsTheServerHasAreAcknowledged() {
        let a = Self.note("a", "one")
        let stored = Self.note("a", "one", changeTag: "t1")
        let outcome = UploadOutcome(
            [Self.save(a), Self.delete("b"), Self.delete("c")],
            results: (
                saveResults: [a.id: .success(stored)],
                deleteResults: [Self.id("b"): .success(()), Self.id("c"): .failure(.unknownItem(Self.id("c")))]
            ),
            recreatedZones: [])
        #expect(outcome.saved.map(\.server) == [stored])
        #expect(outcome.deleted.map(\.entry.id) == [Self.id("b"), Self.id("c")])
        #expect(outcome.refused.isEmpty && outcome.sendAgain.isEmpty && outcome.conflicts.isEmpty)
    }

    @Test func aConflictIsOurOwnLostAnswerAnEarlierUploadOrAnotherDevicesChange() {
        let same = Self.note("same", "mine")
        let earlier = Self.note("earlier", "second edit")
        let sentBefore = Self.note("earlier", "first edit", changeTag: "t2")
        let other = Self.note("other", "mine")
        let theirs = Self.note("other", "theirs", changeTag: "t3")
        let sameOnServer = Self.note("same", "mine", changeTag: "t1")
        let outcome = UploadOutcome(
            [Self.save(same), Self.save(earlier, sentCopies: [Self.note("earlier", "first edit")]), Self.save(other)],
            results: (
                saveResults: [
                    same.id: .failure(Self.conflict(server: sameOnServer, client: same)),
                    earlier.id: .failure(Self.conflict(server: sentBefore, client: earlier)),
                    other.id: .failure(Self.conflict(server: theirs, client: other)),
                ],
                deleteResults: [:]
            ),
            recreatedZones: [])
        #expect(outcome.saved.map(\.server) == [sameOnServer])
        #expect(outcome.earlierUploads.map(\.server) == [sentBefore])
        #expect(outcome.conflicts.map(\.server) == [theirs])
    }

    @Test func aSyncedRecordTheServerDoesntHaveWasDeletedThereANewOneIsRefused() {
        let synced = Self.note("synced", "x", changeTag: "t1")
        let new = Self.note("new", "y")
        let outcome = UploadOutcome(
            [Self.save(synced), Self.save(new)],
            results: (
                saveResults: [
                    synced.id: .failure(.unknownItem(synced.id)), new.id: .failure(.unknownItem(new.id)),
                ],
                deleteResults: [:]
            ),
            recreatedZones: [])
        #expect(outcome.serverDeletions == [synced.id])
        #expect(outcome.refused.map(\.upload.entry.id) == [new.id])
        #expect(outcome.refused.map(\.error) == [.unknownItem(new.id)])
    }

    @Test func failuresAreSentAgainWaitedOnHaltedOrRefused() {
        let records = ["batch", "busy", "quota", "bad"].map { Self.note($0, "x") }
        let outcome = UploadOutcome(
            records.map { Self.save($0) },
            results: (
                saveResults: [
                    records[0].id: .failure(.batchRequestFailed(records[0].id)),
                    records[1].id: .failure(.serviceUnavailable(retryAfter: 3)),
                    records[2].id: .failure(.quotaExceeded),
                    records[3].id: .failure(.invalidArguments("bad field")),
                ],
                deleteResults: [:]
            ),
            recreatedZones: [])
        #expect(outcome.sendAgain.map(\.id) == [records[0].id])
        #expect(outcome.transient.map(\.upload.entry.id) == [records[1].id])
        #expect(outcome.transient.map(\.error) == [.serviceUnavailable(retryAfter: 3)])
        #expect(outcome.halt == .quotaExceeded)
        #expect(outcome.refused.map(\.error) == [.invalidArguments("bad field")])
        #expect(outcome.saved.isEmpty && outcome.deleted.isEmpty)
    }

    @Test func aLostZoneIsNamedOnceAndItsChangesGoAgainUnlessThisSyncAlreadyCreatedItAgain() {
        let purged = CloudRecord.ZoneID(zoneName: "Purged")
        let a = Self.note("a", "x")
        let b = Self.note("b", "y")
        let results: CloudModifyResults = (
            saveResults: [a.id: .failure(.zoneNotFound(Self.zone)), b.id: .failure(.zoneNotFound(Self.zone))],
            deleteResults: [Self.id("c"): .failure(.userDeletedZone(purged))]
        )
        let uploads = [Self.save(a), Self.save(b), Self.delete("c")]
        let first = UploadOutcome(uploads, results: results, recreatedZones: [])
        #expect(
            first.lostZones == [
                UploadOutcome.LostZone(zoneID: Self.zone, reason: .deleted),
                UploadOutcome.LostZone(zoneID: purged, reason: .purged),
            ])
        #expect(first.sendAgain.map(\.id) == [a.id, b.id, Self.id("c")])

        let again = UploadOutcome(uploads, results: results, recreatedZones: [Self.zone])
        #expect(again.lostZones == [UploadOutcome.LostZone(zoneID: purged, reason: .purged)])
        #expect(again.sendAgain.map(\.id) == [Self.id("c")])
        #expect(again.leftQueued.map(\.upload.entry.id) == [a.id, b.id])
        #expect(again.leftQueued.map(\.error) == [.zoneNotFound(Self.zone), .zoneNotFound(Self.zone)])
        #expect(again.refused.isEmpty)
    }

    @Test func aChangeWithoutAnAnswerIsLeftQueuedForTheNextSync() {
        let outcome = UploadOutcome(
            [Self.save(Self.note("a", "x")), Self.delete("b")], results: (saveResults: [:], deleteResults: [:]),
            recreatedZones: [])
        #expect(outcome.leftQueued.map(\.upload.entry.id) == [Self.id("a"), Self.id("b")])
        #expect(outcome.leftQueued.map(\.error) == [.serverResponseLost, .serverResponseLost])
        #expect(outcome.saved.isEmpty && outcome.deleted.isEmpty && outcome.refused.isEmpty)
        #expect(outcome.sendAgain.isEmpty && outcome.conflicts.isEmpty && outcome.serverDeletions.isEmpty)
    }
}
