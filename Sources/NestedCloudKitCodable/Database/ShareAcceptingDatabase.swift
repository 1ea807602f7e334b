import Foundation

/// A user's database on a server with several users, where they read and accept shares by the short GUID of their
/// URL (``CloudShare/shortGUID``): the simulated server's and the SQLite server's user databases, and CloudKit Web
/// Services'. What a server hands out share URLs with, and what the tests of sharing run against.
package protocol ShareAcceptingDatabase: CloudDatabase {
    /// Accepts the share as the database's user.
    func acceptShare(shortGUID: String) async throws -> CloudShare

    /// What the share's URL tells the database's user before they accept it.
    func shareMetadata(shortGUID: String, fetchingRootRecord: Bool) async throws -> CloudShare.Metadata
}
