import Foundation
import NestedCloudKitCodable

/// A record of what a device sent to CloudKit and what it got back, written to a file as JSON Lines: what a
/// developer asks a user for when a change never arrived, and replays against a fresh server
/// (``replay(_:into:)``) to see what the user's device saw.
///
/// ```swift
/// let trace = try SyncTrace(writingTo: traceURL)                  // values redacted
/// let engine = SyncEngine(store: store, database: trace.database(database, client: "phone"))
/// …
/// await trace.close()
/// ```
///
/// Every call of the traced database is one line, written when the call ends (``Entry``): the request's name and
/// what it sent (records, deletions, zones, the change token), what the server answered (records, deletions,
/// each item's failure, the new token, whether more is coming) or the error the call failed with. Field values
/// are redacted unless ``Values/included``: a string becomes as many `x` as it had bytes, bytes as many zeros,
/// numbers and dates zero, a location the origin, an asset its size only (where known), a share's participants
/// nothing. What stays: names of records, types, fields and zones, the targets of references, the engine's edit
/// times (``SyncMetadataFields``), system fields, tokens and the user's record name. A redacted trace replays to
/// the same records, fields and sizes with values that say nothing.
///
/// The lines are written in the order the calls ended, off the cooperative thread pool, by a serial queue of the
/// trace's own: a traced request never waits for the disk.
public final class SyncTrace: Sendable {
    /// What the trace keeps of field values.
    public enum Values: String, Sendable, Hashable {
        /// Each value replaced by one of the same type and size that says nothing: what to ask a user for.
        case redacted
        /// Every value as sent and received: for a trace of test data, or a user who agreed to share theirs.
        case included
    }

    /// What the trace keeps of field values.
    package let values: Values
    private let clock: any CloudClock
    private let queue = DispatchQueue(label: "NestedCloudKitSync.SyncTrace")
    private let handle: FileHandle
    /// The last line's number, and whether the trace is closed: a line after ``close()`` is dropped, never
    /// written to a closed file.
    private let state = Locked((sequence: 0, isClosed: false))
    private let encoder: JSONEncoder

    /// Starts a trace in a new file (an existing one is replaced).
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - values: What it keeps of field values; redacted by default.
    ///   - clock: The clock of each line's ``Entry/time``: a test's virtual one makes the trace the same each run.
    /// - Throws: ``SyncError/store(_:)`` if the file can't be created.
    public init(writingTo url: URL, values: Values = .redacted, clock: any CloudClock = SystemCloudClock()) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        else {
            throw SyncError.store(
                "can't create the trace file \(url.lastPathComponent): check that its folder exists and is writable")
        }
        self.handle = handle
        self.values = values
        self.clock = clock
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// A database that passes every call to `base` and writes a line for each to this trace.
    ///
    /// - Parameters:
    ///   - base: The database the engine would use: the user's private or shared database.
    ///   - client: Who makes the calls, as each line names it: a device, and its database if it traces two
    ///     (`"phone"`, `"phone/shared"`).
    public func database(_ base: any CloudDatabase, client: String) -> any CloudDatabase {
        TracingCloudDatabase(base: base, trace: self, client: client)
    }

    /// Waits until every line so far is in the file, and closes it; lines of calls that end later are dropped. A
    /// second call waits for the first.
    public func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // Under the lock, so no line is submitted after the file's closing.
            state.withLock { state in
                let wasClosed = state.isClosed
                state.isClosed = true
                queue.async { [handle] in
                    if !wasClosed { try? handle.close() }
                    done.resume()
                }
            }
        }
    }

    /// Writes a line for a call that ended: numbered and timed here, under the lock, so numbers and times go up
    /// together; redacted, encoded and written by the queue, in the numbers' order, so the caller only hands it
    /// over. A line that can't be encoded or written (a full disk) is left out: the trace is a diagnosis, never a
    /// reason for a sync to fail.
    func record(_ entry: Entry) {
        var entry = entry
        let redacting = values == .redacted
        state.withLock { state in
            guard !state.isClosed else { return }
            state.sequence += 1
            entry.sequence = state.sequence
            entry.time = clock.now().timeIntervalSince1970
            queue.async { [handle, encoder, entry] in
                var entry = entry
                if redacting { entry.redactValues() }
                guard var line = try? encoder.encode(entry) else { return }
                line.append(0x0A)
                try? handle.write(contentsOf: line)
            }
        }
    }

    /// The lines of a trace file, in order.
    ///
    /// - Throws: ``SyncError/store(_:)`` naming the line that isn't an ``Entry``.
    public static func entries(in url: URL) throws -> [Entry] {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SyncError.store(
                "can't read the trace file \(url.lastPathComponent): \(error.localizedDescription)", underlying: error)
        }
        let decoder = JSONDecoder()
        var entries: [Entry] = []
        for (index, line) in data.split(separator: 0x0A).enumerated() where !line.isEmpty {
            do {
                entries.append(try decoder.decode(Entry.self, from: Data(line)))
            } catch {
                throw SyncError.store(
                    "line \(index + 1) of the trace file \(url.lastPathComponent) isn't a trace entry: \(error)",
                    underlying: error)
            }
        }
        return entries
    }
}
