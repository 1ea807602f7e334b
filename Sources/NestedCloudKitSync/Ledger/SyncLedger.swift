import Foundation
import GRDB
import NestedCloudKitCodable

/// The engine's view of a ``SyncStore``'s database: the server's copies, the queue of changes to send, the change
/// tokens and the state of each zone. The app never sees it; a ``SyncEngine`` reads and writes it.
///
/// The app's ``SyncStore`` and the ledger share one database and its transactions, so a page the engine applies
/// and a save the app makes are never half visible to each other. Each of the engine's writes here applies what the
/// server said (a page of changes, an acknowledgement, a conflict's resolution); none of them notes a local change,
/// so the engine's own work never wakes it (``localChanges()``).
package struct SyncLedger: Sendable, StoreConnected {
    let connection: StoreConnection

    /// The number the app's latest local change noted (`nil` before any, and after a reset), now and after each
    /// transaction that changes it: an engine in automatic mode syncs on each new one. The store's writes note a
    /// change in the transaction that makes it (`StoreTables.noteLocalChange(in:)`), so the observation sees
    /// exactly the committed ones.
    func localChanges() -> StoreObservation<Int64?> {
        StoreObservation(writer: writer, removingDuplicates: { $0 == $1 }) { db in
            try Int64.fetchOne(
                try db.cachedStatement(sql: "SELECT value FROM ncs_state WHERE key = 'localChange'"))
        }
    }
}
