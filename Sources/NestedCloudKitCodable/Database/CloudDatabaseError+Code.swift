extension CloudDatabaseError {
    /// What kind of failure an error is, as CloudKit's `CKError.Code` says: compare with `==`, and give a `switch`
    /// a `default`, as a later release may add codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as logs give it.
        public let description: String

        private init(_ name: String) { description = name }

        /// See ``CloudDatabaseError/unknownItem(_:)``.
        public static let unknownItem = Code("unknownItem")
        /// See ``CloudDatabaseError/serverRecordChanged(server:client:ancestor:)``.
        public static let serverRecordChanged = Code("serverRecordChanged")
        /// See ``CloudDatabaseError/limitExceeded(limit:requested:)``.
        public static let limitExceeded = Code("limitExceeded")
        /// See ``CloudDatabaseError/partialFailure(_:)``.
        public static let partialFailure = Code("partialFailure")
        /// See ``CloudDatabaseError/zoneNotFound(_:)``.
        public static let zoneNotFound = Code("zoneNotFound")
        /// See ``CloudDatabaseError/userDeletedZone(_:)``.
        public static let userDeletedZone = Code("userDeletedZone")
        /// See ``CloudDatabaseError/encryptedDataReset(_:)``.
        public static let encryptedDataReset = Code("encryptedDataReset")
        /// See ``CloudDatabaseError/changeTokenExpired(_:)``.
        public static let changeTokenExpired = Code("changeTokenExpired")
        /// See ``CloudDatabaseError/referenceViolation(_:reason:)``.
        public static let referenceViolation = Code("referenceViolation")
        /// See ``CloudDatabaseError/batchRequestFailed(_:)``.
        public static let batchRequestFailed = Code("batchRequestFailed")
        /// See ``CloudDatabaseError/invalidArguments(_:)``.
        public static let invalidArguments = Code("invalidArguments")
        /// See ``CloudDatabaseError/requestRateLimited(retryAfter:)``.
        public static let requestRateLimited = Code("requestRateLimited")
        /// See ``CloudDatabaseError/serviceUnavailable(retryAfter:)``.
        public static let serviceUnavailable = Code("serviceUnavailable")
        /// See ``CloudDatabaseError/networkFailure(_:)``.
        public static let networkFailure = Code("networkFailure")
        /// See ``CloudDatabaseError/serverResponseLost``.
        public static let serverResponseLost = Code("serverResponseLost")
        /// See ``CloudDatabaseError/accountTemporarilyUnavailable``.
        public static let accountTemporarilyUnavailable = Code("accountTemporarilyUnavailable")
        /// See ``CloudDatabaseError/operationCancelled``.
        public static let operationCancelled = Code("operationCancelled")
        /// See ``CloudDatabaseError/quotaExceeded``.
        public static let quotaExceeded = Code("quotaExceeded")
        /// See ``CloudDatabaseError/permissionFailure(_:)``.
        public static let permissionFailure = Code("permissionFailure")
        /// See ``CloudDatabaseError/notAuthenticated``.
        public static let notAuthenticated = Code("notAuthenticated")
        /// See ``CloudDatabaseError/internalError(_:)``.
        public static let internalError = Code("internalError")
    }
}
