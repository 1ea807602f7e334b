import Foundation
import NestedCloudKitCodable

/// A database that keeps records itself (in memory, SQLite, the sync store), and so applies CloudKit's rules to
/// each change through `CloudModificationPlan` and answers queries with `CloudQueryPaging`.
///
/// A conforming database implements two primitives: a modify request as `CloudRecordOperation`s, the seven kinds
/// of Web Services' `records/modify`, and one page of a query from a cursor. The extension implements the
/// `CloudDatabase` calls made of them once, for every such backend: a save policy read as operations, and a
/// query's first and next pages. The emulator serves `records/modify` through the operations, so its rules are the
/// backends' own.
package protocol CloudRecordStoringDatabase: CloudDatabase {
    /// Applies the items under CloudKit's rules, in one transaction, as
    /// `CloudDatabase/modifyRecords(saving:deleting:savePolicy:atomically:)` does.
    ///
    /// - Parameters:
    ///   - operations: The items.
    ///   - atomically: Whether each custom zone's changes apply all together or not at all.
    ///   - failures: Items the caller has failed before asking (a record it couldn't read); with `atomically`,
    ///     nothing else in their zones applies.
    /// - Returns: A result for each item of `operations`.
    func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> CloudModifyResults

    /// The page of a query that starts at the cursor's position (`CloudQueryPaging`): the matches in the
    /// query's order, and the cursor after them when more follow.
    func queryPage(from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int) async throws
        -> CloudQueryPage
}

extension CloudRecordStoringDatabase {
    /// Saves and deletes records under CloudKit's rules, each record's save policy read as the operation it
    /// stands for; see `CloudDatabase/modifyRecords(saving:deleting:savePolicy:atomically:)`.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        try await modifyRecords(
            CloudRecordOperation.items(saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy),
            atomically: atomically, failing: [:])
    }

    /// Finds matching records a page at a time; see
    /// `CloudDatabase/records(matching:inZoneWith:desiredKeys:resultsLimit:)`.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await queryPage(
            from: CloudQueryPaging.firstPage(of: query, in: zoneID), desiredKeys: desiredKeys,
            resultsLimit: resultsLimit)
    }

    /// Continues a query; see `CloudDatabase/records(continuingMatchFrom:desiredKeys:resultsLimit:)`.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await queryPage(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }
}
