// Saves notes in a sync store and syncs them with a SQLite "server" file, for tests that kill this process with
// SIGKILL at the moments a sync engine must survive, then check that nothing acknowledged was lost.
//
// Usage: SyncCrashWriter <store path> <server path> <mode> <count>
//   saves:         saves notes one by one, printing "saved N" once each save returned (was acknowledged);
//                  the test kills the process at a moment of its choosing, in the middle of later saves.
//   during-upload: saves <count> notes, prints "saved all", then syncs and kills itself as the first upload
//                  starts, before the server sees it.
//   after-answer:  the same, but kills itself right after the server answered the first upload, before the
//                  store recorded the answer.
import Foundation
import Logging
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitSync

struct Note: CKCodable, Identifiable {
    var id: String
    var text: String
}

/// The server, with a SIGKILL at a chosen moment of the first upload.
actor KillingDatabase: ForwardingCloudDatabase {
    let base: SQLiteCloudDatabase
    let killAfterAnswer: Bool

    init(base: SQLiteCloudDatabase, killAfterAnswer: Bool) {
        self.base = base
        self.killAfterAnswer = killAfterAnswer
    }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        if !killAfterAnswer { kill(getpid(), SIGKILL) }
        let results = try await base.modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
        kill(getpid(), SIGKILL)
        return results
    }
}

// FileHandle writes straight to the descriptor, unbuffered, so the parent sees each line when it is written.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

// Standard output is the parent's protocol: the library's log goes to standard error.
LoggingSystem.bootstrap(StreamLogHandler.standardError)
let arguments = CommandLine.arguments
guard arguments.count == 5, let count = Int(arguments[4]), count > 0 else {
    FileHandle.standardError.write(Data("usage: SyncCrashWriter <store> <server> <mode> <count>\n".utf8))
    exit(2)
}
let store = try SyncStore(path: arguments[1])
let server = try SQLiteCloudDatabase(path: arguments[2])
switch arguments[3] {
case "saves":
    for index in 0..<count {
        try await store.save(Note(id: "n\(index)", text: String(repeating: "x", count: 200)))
        say("saved \(index)")
    }
case "during-upload", "after-answer":
    for index in 0..<count { try await store.save(Note(id: "n\(index)", text: "note \(index)")) }
    say("saved all")
    let engine = SyncEngine(
        store: store, database: KillingDatabase(base: server, killAfterAnswer: arguments[3] == "after-answer"))
    try await engine.sync()
    say("synced")  // never reached: the database kills the process first
default:
    FileHandle.standardError.write(Data("unknown mode \(arguments[3])\n".utf8))
    exit(2)
}
