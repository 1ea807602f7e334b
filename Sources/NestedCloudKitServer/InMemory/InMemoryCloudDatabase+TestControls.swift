import Foundation
import NestedCloudKitCodable

// What a test sets on the in-memory database besides its network (`network`, the faults and latency every test
// database shares): users and accounts, expired tokens and zones deleted as the user or CloudKit would.

extension InMemoryCloudDatabase {
    // MARK: Test controls: what it holds

    /// Every record of the current user's database (none when signed out), for tests that look at the whole
    /// state.
    public var allRecords: [CloudRecord] {
        guard let currentUser else { return [] }
        return cloudServer.engine.allRecords(of: .privateDatabase(of: currentUser)).sorted {
            ($0.id.zoneID.zoneName, $0.id.recordName) < ($1.id.zoneID.zoneName, $1.id.recordName)
        }
    }

    // MARK: Test controls: users and accounts

    /// Signs a user in, creating their private database on first use; the previous user's database stays as it
    /// was, for when they sign in again.
    public func signIn(as userRecordName: String) {
        cloudServer.engine.makeDatabase(.privateDatabase(of: userRecordName))
        currentUser = userRecordName
    }

    /// Signs the user out: the account status becomes `CloudAccountStatus/noAccount` and every request fails
    /// with `CloudDatabaseError/notAuthenticated`.
    public func signOut() {
        currentUser = nil
    }

    /// Makes the account report a status other than what signing in and out gives (`nil` to stop):
    /// `CloudAccountStatus/temporarilyUnavailable` also fails every request with
    /// `CloudDatabaseError/accountTemporarilyUnavailable`, and `CloudAccountStatus/restricted` with
    /// `CloudDatabaseError/permissionFailure(_:)`.
    public func setAccountStatus(_ status: CloudAccountStatus?) {
        accountStatusOverride = status
    }

    // MARK: Test controls: change tracking

    /// Expires every change token given so far, as CloudKit does after a while: the next change request with one
    /// fails with `CloudDatabaseError/changeTokenExpired(_:)`, and a client starts again with `nil`. Each log starts
    /// again with the zone's current records, so a client starting again with a `nil` token gets all of them (and
    /// no tombstones from before).
    public func expireChangeTokens() {
        guard let currentUser else { return }
        cloudServer.engine.expireChangeTokens(of: .privateDatabase(of: currentUser))
    }

    /// Expires every change token of every user, private and shared databases alike: what an emulator serving
    /// several users does when asked to expire tokens.
    public func expireEveryUsersChangeTokens() {
        for scope in [CloudNotification.DatabaseScope.private, .shared] {
            for user in cloudServer.engine.users(scope) {
                cloudServer.engine.expireChangeTokens(of: UserDatabaseID(userRecordName: user, scope: scope))
            }
        }
    }

    /// Deletes a zone and its records as something other than the app would: the user deleting the app's data in
    /// Settings (`CloudZoneDeletion/Reason/purged`: requests for the zone then fail with
    /// `CloudDatabaseError/userDeletedZone(_:)` until the app creates it again), or an encrypted-data reset.
    /// Database changes report the deletion with its reason.
    public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async {
        guard let currentUser else { return }
        // The in-memory storage doesn't fail.
        try? await cloudServer.deleteZone(zoneID, ofUser: currentUser, reason: reason)
    }

    /// The pushes the database's subscriptions would have sent since the last call, oldest first: one per
    /// subscription and request that changed what it watches.
    public func takeNotifications() -> [CloudNotification] {
        cloudServer.takeNotifications()
    }
}
