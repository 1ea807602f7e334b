import Foundation

/// A database that keeps records itself (in memory, SQLite), and so applies CloudKit's rules to each change
/// through ``CloudModificationPlan``: besides the save policies of ``CloudDatabase``, it takes the items of a
/// modify request as ``CloudRecordOperation``s, the seven kinds of Web Services' `records/modify`. The emulator
/// serves that endpoint through this, so its rules are the backends' own.
package protocol CloudRecordStoringDatabase: CloudDatabase {
    /// Applies the items under CloudKit's rules, in one transaction, as
    /// ``CloudDatabase/modifyRecords(saving:deleting:savePolicy:atomically:)`` does.
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
}
