import Foundation

// The results of `CloudDatabase`'s requests, named so that backends and wrappers (counting, logging, caching)
// don't spell them out. They are the tuples `CKDatabase`'s async API returns, so code written against one reads
// the same against the other: `let (saveResults, deleteResults) = try await database.modifyRecords(...)`.

/// The result of fetching records by ID: each record, or why it couldn't be fetched, keyed by ID.
public typealias CloudRecordResults = [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>]

/// The result of a modify request: for each record saved, the stored record or why it wasn't saved; for each
/// record deleted, whether it was.
public typealias CloudModifyResults = (
    saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>],
    deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>]
)

/// One page of a query: the matches in the query's order, and a cursor when more follow.
public typealias CloudQueryPage = (
    matchResults: [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)],
    queryCursor: CloudQuery.Cursor?
)

/// The result of creating and deleting zones: for each zone, whether it was created or deleted.
public typealias CloudZoneModifyResults = (
    saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>],
    deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>]
)

/// The result of saving and deleting subscriptions: for each subscription saved, the stored subscription or why it
/// wasn't saved; for each deleted, whether it was.
public typealias CloudSubscriptionModifyResults = (
    saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>],
    deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>]
)
