import Foundation
import NestedCloudKitCodable
import Testing

/// `CloudDatabaseError` is a struct over a private enum: matched by its code or by value, saying what it is about,
/// carrying the error underneath.
@Suite("Database errors")
struct CloudDatabaseErrorTests {
    let id = CloudRecord.ID(recordName: "n", zoneID: CloudRecord.ZoneID(zoneName: "Notes"))

    @Test func aConflictSaysWhichRecordsAndWhatToDo() {
        let server = CloudRecord(recordType: "Note", id: id, fields: ["text": .string("server")])
        let client = CloudRecord(recordType: "Note", id: id, fields: ["text": .string("client")])
        let error = CloudDatabaseError.serverRecordChanged(server: server, client: client, ancestor: nil)
        #expect(error.code == .serverRecordChanged)
        #expect(error.code.description == "serverRecordChanged")
        #expect(error.conflict?.server == server && error.conflict?.client == client && error.conflict?.ancestor == nil)
        #expect(error.recordID == id && error.zoneID == id.zoneID)
        #expect(!error.isRetryable && error.retryAfter == nil && error.reason == nil && error.partialFailures == nil)
    }

    @Test func eachCodeIsItsOwnAndRetryingIsSaidOnce() {
        let errors: [CloudDatabaseError] = [
            .unknownItem(id), .limitExceeded(limit: 200, requested: 201), .partialFailure([id: .unknownItem(id)]),
            .zoneNotFound(id.zoneID), .userDeletedZone(id.zoneID), .encryptedDataReset(id.zoneID),
            .changeTokenExpired(nil), .referenceViolation(id, reason: "r"), .batchRequestFailed(id),
            .invalidArguments("a"), .requestRateLimited(retryAfter: 3), .serviceUnavailable(retryAfter: nil),
            .networkFailure("n"), .serverResponseLost, .accountTemporarilyUnavailable, .operationCancelled,
            .quotaExceeded, .permissionFailure("p"), .notAuthenticated, .internalError("i"),
        ]
        #expect(Set(errors.map(\.code)).count == errors.count)
        #expect(
            errors.filter(\.isRetryable).map(\.code) == [
                .requestRateLimited, .serviceUnavailable, .networkFailure, .serverResponseLost,
                .accountTemporarilyUnavailable,
            ])
        #expect(CloudDatabaseError.requestRateLimited(retryAfter: 3).retryAfter == 3)
        #expect(CloudDatabaseError.partialFailure([id: .unknownItem(id)]).partialFailures == [id: .unknownItem(id)])
        #expect(CloudDatabaseError.referenceViolation(id, reason: "dangling").reason == "dangling")
        #expect(CloudDatabaseError.limitExceeded(limit: 200, requested: 201).limits?.requested == 201)
    }

    @Test func equalityIgnoresWhatIsUnderneathAndAThrownErrorIsCaughtByValue() throws {
        struct Socket: Error {}
        let carried = CloudDatabaseError(.networkFailure("reset"), underlying: Socket())
        #expect(carried.underlyingError is Socket)
        #expect(carried == .networkFailure("reset"))
        #expect(Set([carried, .networkFailure("reset")]).count == 1)
        #expect(carried != .networkFailure("refused"))
        do {
            throw CloudDatabaseError.serverResponseLost
        } catch CloudDatabaseError.quotaExceeded {
            Issue.record("matched another error")
        } catch CloudDatabaseError.serverResponseLost {
        }
    }
}
