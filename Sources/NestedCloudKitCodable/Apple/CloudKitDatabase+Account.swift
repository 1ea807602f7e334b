#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudKitDatabase {
    /// The container asked for the user and the account status.
    var accountContainer: CKContainer { container ?? CKContainer.default() }

    /// The current user's record name, through `CKContainer.userRecordID()` of ``container``.
    ///
    /// - Throws: ``CloudDatabaseError/notAuthenticated`` when no iCloud account is available (signed out, iCloud
    ///   turned off for the app, or restricted), as CloudKit reports it.
    public func userRecordName() async throws -> String {
        try await request(zoneID: nil, items: nil) { try await accountContainer.userRecordID() }.recordName
    }

    /// Whether the user can use the private database now, through `CKContainer.accountStatus()` of ``container``.
    public func accountStatus() async throws -> CloudAccountStatus {
        CloudAccountStatus(try await request(zoneID: nil, items: nil) { try await accountContainer.accountStatus() })
    }
}

extension CloudAccountStatus {
    /// The portable form of CloudKit's account status; a status newer than this version is
    /// ``couldNotDetermine``.
    public init(_ status: CKAccountStatus) {
        switch status {
        case .available: self = .available
        case .noAccount: self = .noAccount
        case .restricted: self = .restricted
        case .couldNotDetermine: self = .couldNotDetermine
        case .temporarilyUnavailable: self = .temporarilyUnavailable
        @unknown default: self = .couldNotDetermine
        }
    }
}
#endif
