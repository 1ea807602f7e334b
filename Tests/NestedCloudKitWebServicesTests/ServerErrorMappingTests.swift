import CloudKitTestServer
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

@Suite struct ServerErrorMappingTests {
    static let id = CloudRecord.ID(recordName: "ada", zoneID: CloudRecord.ZoneID(zoneName: "Schools"))
    static let zone = CloudRecord.ZoneID(zoneName: "Schools")

    /// Each documented code, as a per-record error, and the portable error it becomes.
    static let cases: [(code: String, retryAfter: Double?, expected: CloudDatabaseError)] = [
        (
            "ACCESS_DENIED", nil,
            .permissionFailure("no (ACCESS_DENIED): the credentials can't reach this database or record")
        ),
        ("ATOMIC_ERROR", nil, .batchRequestFailed(id)),
        (
            "AUTHENTICATION_FAILED", nil,
            .permissionFailure(
                "no (AUTHENTICATION_FAILED): check the key ID, that the key belongs to this container and environment, and the clock"
            )
        ),
        ("AUTHENTICATION_REQUIRED", nil, .notAuthenticated),
        ("BAD_REQUEST", nil, .invalidArguments("no (BAD_REQUEST)")),
        ("INTERNAL_ERROR", nil, .internalError("no (INTERNAL_ERROR), request u-1")),
        ("INTERNAL_ERROR", 2, .serviceUnavailable(retryAfter: 2)),
        ("NOT_FOUND", nil, .unknownItem(id)),
        ("QUOTA_EXCEEDED", nil, .quotaExceeded),
        ("THROTTLED", 3, .requestRateLimited(retryAfter: 3)),
        ("TRY_AGAIN_LATER", 4, .serviceUnavailable(retryAfter: 4)),
        ("TRY_AGAIN_LATER", nil, .serviceUnavailable(retryAfter: nil)),
        ("VALIDATING_REFERENCE_ERROR", nil, .referenceViolation(id, reason: "no (VALIDATING_REFERENCE_ERROR)")),
        ("ZONE_NOT_FOUND", nil, .zoneNotFound(zone)),
        ("A_CODE_FROM_THE_FUTURE", nil, .internalError("no (A_CODE_FROM_THE_FUTURE), request u-1")),
    ]

    @Test(arguments: cases.indices)
    func documentedErrorDictionariesMapToTypedErrors(index: Int) throws {
        let (code, retryAfter, expected) = Self.cases[index]
        var object: [String: Any] = ["recordName": "ada", "serverErrorCode": code, "reason": "no", "uuid": "u-1"]
        if let retryAfter { object["retryAfter"] = retryAfter }
        let error = try JSONDecoder().decode(WireServerError.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(error.databaseError(recordID: Self.id, zoneID: Self.zone) == expected)
    }

    @Test func aBadRequestThatRefusesARecordOrARequestForItsSizeIsLimitExceeded() throws {
        for (reason, expected) in [
            ("record too large: big holds 2000004 bytes", CloudDatabaseError.limitExceeded(limit: nil, requested: nil)),
            ("request too large: the body holds more than 62914560 bytes", .limitExceeded(limit: nil, requested: nil)),
            ("a record needs a recordName", .invalidArguments("a record needs a recordName (BAD_REQUEST)")),
        ] {
            let object: [String: Any] = ["recordName": "ada", "serverErrorCode": "BAD_REQUEST", "reason": reason]
            let error = try JSONDecoder().decode(
                WireServerError.self, from: JSONSerialization.data(withJSONObject: object))
            #expect(error.databaseError(recordID: Self.id, zoneID: Self.zone) == expected)
        }
    }

    @Test func conflictsAreRecognizedForTheClientToFetchTheServerRecord() {
        #expect(WireServerError(serverErrorCode: "CONFLICT").isConflict)
        #expect(WireServerError(serverErrorCode: "EXISTS").isConflict)
        #expect(!WireServerError(serverErrorCode: "NOT_FOUND").isConflict)
    }

    @Test func aResponseWithoutAnErrorDictionaryMapsByStatus() {
        #expect(WireServerError.databaseError(status: 503, body: "") == .serviceUnavailable(retryAfter: nil))
        #expect(WireServerError.databaseError(status: 421, body: "") == .notAuthenticated)
        #expect(WireServerError.databaseError(status: 502, body: "<html>") == .internalError("HTTP 502: <html>"))
    }

    @Test func retriesWaitAtLeastWhatTheServerAsksAndBackOff() {
        let policy = CloudKitWebServicesRetryPolicy(
            maximumAttempts: 4, initialBackoff: .milliseconds(100), maximumDelay: .seconds(10))
        #expect(policy.delay(beforeRetry: 1, retryAfter: nil) == nil)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 2) == .seconds(2))
        #expect(policy.delay(beforeRetry: 1, retryAfter: 0) == .milliseconds(100))
        #expect(policy.delay(beforeRetry: 3, retryAfter: 0) == .milliseconds(400))
        #expect(policy.delay(beforeRetry: 4, retryAfter: 0) == nil)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 11) == nil)
        #expect(policy.delay(beforeRetry: 1, retryAfter: .infinity) == nil)
        #expect(CloudKitWebServicesRetryPolicy.never.delay(beforeRetry: 1, retryAfter: 0) == nil)
    }
}
