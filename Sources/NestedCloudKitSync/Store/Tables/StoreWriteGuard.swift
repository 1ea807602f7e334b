import GRDB

/// What lets the store's own connections write the rows of the record types' tables, and no other connection:
/// their triggers call a function that the store adds to each connection it opens (``RecordTypeTable``). On an app's
/// own connection to the file the function doesn't exist, so SQLite refuses the write, naming it: a row written
/// behind the store's back would skip the queue of changes (it would never reach the server, and the next fetch
/// would overwrite it).
enum StoreWriteGuard {
    /// The function's name, which SQLite's refusal on another connection shows.
    static let functionName = "ncs_tables_are_written_through_SyncStore"

    /// Adds the function to a connection the store opens.
    static func prepare(_ db: Database) {
        db.add(function: DatabaseFunction(functionName, argumentCount: 0, pure: true) { _ in true })
    }

    /// A configuration whose connections have the function.
    static func configuration(_ base: Configuration = Configuration()) -> Configuration {
        var configuration = base
        configuration.prepareDatabase { db in prepare(db) }
        return configuration
    }
}
