import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitSQLite
import NestedCloudKitServer
import NestedCloudKitSync
import NestedCloudKitWebServices
import TestSupport
import Testing

/// A backend under test: a name (for test output) and a factory making a fresh, empty database with the given
/// per-request limit.
///
/// A new backend joins the conformance suite by adding one entry to ``all``.
package struct DatabaseBackend: Sendable, CustomTestStringConvertible {
    package let name: String
    /// Whether the backend gives fields back in the order they were saved. CloudKit Web Services sends fields as
    /// a JSON object, which has no order.
    package var keepsFieldOrder = true
    /// Whether an empty list comes back with its type. CloudKit Web Services sends every empty list as
    /// `UNKNOWN_LIST`, which reads as an empty string list.
    package var keepsEmptyListTypes = true
    /// Whether a conflict carries the version the client's copy came from. CloudKit Web Services' doesn't.
    package var reportsAncestors = true
    /// Whether the backend stores encrypted fields. CloudKit Web Services can't: it refuses them.
    package var keepsEncryptedFields = true
    /// Whether a share read back says which record it shares. CloudKit Web Services' answers don't: the root's
    /// `share` names the share.
    package var reportsShareRoots = true
    /// Whether a zone the user purged is refused as `userDeletedZone`. CloudKit Web Services has no such error:
    /// its documented codes say `ZONE_NOT_FOUND`.
    package var reportsUserDeletedZones = true
    package let make:
        @Sendable (_ maximumItemsPerRequest: Int, _ clock: any CloudClock) async throws ->
            any CloudDatabase
    /// Makes the change tokens a database of this backend gave expire, as CloudKit does after a while: every
    /// token for the in-memory database (and the Web Services stand-in, which answers from one); for SQLite, every
    /// token that could miss a deletion, by compacting every tombstone away.
    package let expireChangeTokens: @Sendable (any CloudDatabase) async throws -> Void
    /// Deletes a zone as iCloud would rather than the app (the user purging the app's data in Settings, a reset of
    /// their encryption keys): the server's own control, or the emulator's through the client.
    package var deleteZoneAsICloud:
        @Sendable (any CloudDatabase, CloudRecord.ZoneID, CloudZoneDeletion.Reason) async throws -> Void = {
            _, _, _ in throw UnsupportedTestControl()
        }

    package var testDescription: String { name }

    /// The fields as the backend gives them back: empty lists as empty string lists where their type is lost.
    package func returned(_ fields: CloudRecord.Fields) -> CloudRecord.Fields {
        guard !keepsEmptyListTypes else { return fields }
        return CloudRecord.Fields(
            fields.map { field in
                (field.name, field.value.isEmptyList ? .stringList([]) : field.value)
            })
    }

    /// A fresh, empty database; 400 items per request, as CloudKit's framework, unless a test needs another limit;
    /// records stamped with the time now, unless a test gives a clock.
    package func makeDatabase(
        maximumItemsPerRequest: Int = 400, clock: any CloudClock = SystemCloudClock()
    ) async throws -> any CloudDatabase {
        try await make(maximumItemsPerRequest, clock)
    }
}

/// The emulator behind each Web Services database the suite made, so a test can reach past HTTP to the server's
/// controls. Clients are held weakly: a test's client and emulator go when the test ends (the emulator stopped by
/// ``StopsEmulators``), and a new client at a freed client's address must not find its emulator.
package actor EmulatorsBehindClients {
    package static let shared = EmulatorsBehindClients()

    private struct Entry {
        weak var client: CloudKitWebServicesDatabase?
        let emulator: CloudKitEmulator
    }
    private var entries: [Entry] = []

    package func register(_ emulator: CloudKitEmulator, behind client: CloudKitWebServicesDatabase) {
        entries.removeAll { $0.client == nil }
        entries.append(Entry(client: client, emulator: emulator))
    }

    package func emulator(behind client: any CloudDatabase) -> CloudKitEmulator? {
        guard let client = client as? CloudKitWebServicesDatabase else { return nil }
        return entries.first { $0.client === client }?.emulator
    }
}

/// A backend refused a test control it doesn't have.
package struct UnsupportedTestControl: Error {}

extension DatabaseBackend {
    /// Every backend the conformance suite runs against: the tests of the records' rules (fetches, save policies,
    /// references, atomic requests, limits, queries) run on each.
    package static let all: [DatabaseBackend] = servers + [.localStore]

    /// The backends that are servers, or stand for one: the tests of what only a server keeps run on these. Those
    /// are zones made and deleted, change tracking, subscriptions and the user; a new change tag and dates for each
    /// save; and a version for every record, so that a record made anew with a stored record's ID, or a copy of a
    /// deleted one, is told from a copy read from the store. The local store gives a record no version until its
    /// upload, so there such a save is an update.
    package static let servers: [DatabaseBackend] = [.inMemory, .sqlite, .webServices, .sqliteBehindFaults]

    /// The sync store as a `CloudDatabase` (`LocalCloudDatabase`): CloudKit's rules for records, with the store's
    /// record standing for the server's. It isn't a server: it keeps no change history and no subscriptions, takes
    /// no zone changes (its zones are the synced ones), and gives a saved record no new system fields (only an
    /// upload does), so it joins the tests of the records' rules only.
    package static let localStore = DatabaseBackend(
        name: "local store",
        make: { limit, clock in
            LocalCloudDatabase(store: try SyncStore.inMemory(clock: clock), maximumItemsPerRequest: limit)
        },
        expireChangeTokens: { _ in throw UnsupportedTestControl() })

    package static let inMemory = DatabaseBackend(
        name: "in-memory",
        make: { limit, clock in InMemoryCloudDatabase(maximumItemsPerRequest: limit, clock: clock) },
        expireChangeTokens: { database in
            guard let database = database as? InMemoryCloudDatabase else { throw UnsupportedTestControl() }
            await database.expireChangeTokens()
        },
        deleteZoneAsICloud: { database, zone, reason in
            guard let database = database as? InMemoryCloudDatabase else { throw UnsupportedTestControl() }
            await database.deleteZone(zone, reason: reason)
        })

    package static let sqlite = DatabaseBackend(
        name: "SQLite",
        make: { limit, clock in
            try SQLiteCloudDatabase(path: temporaryDatabasePath(), maximumItemsPerRequest: limit, clock: clock)
        },
        expireChangeTokens: { database in
            guard let database = database as? SQLiteCloudDatabase else { throw UnsupportedTestControl() }
            try await database.compactChangeLog(keepingTombstones: 0)
        },
        deleteZoneAsICloud: { database, zone, reason in
            guard let database = database as? SQLiteCloudDatabase else { throw UnsupportedTestControl() }
            try await database.deleteZone(zone, reason: reason)
        })

    /// A SQLite file behind `FaultInjectingDatabase` with no fault set: every rule must come through the wrapper
    /// unchanged, so that a test that injects faults into any backend tests that backend.
    package static let sqliteBehindFaults = DatabaseBackend(
        name: "SQLite behind faults",
        make: { limit, clock in
            FaultInjectingDatabase(
                try SQLiteCloudDatabase(path: temporaryDatabasePath(), maximumItemsPerRequest: limit, clock: clock),
                clock: clock)
        },
        expireChangeTokens: { database in
            guard let file = (database as? FaultInjectingDatabase)?.base as? SQLiteCloudDatabase else {
                throw UnsupportedTestControl()
            }
            try await file.compactChangeLog(keepingTombstones: 0)
        },
        deleteZoneAsICloud: { database, zone, reason in
            guard let file = (database as? FaultInjectingDatabase)?.base as? SQLiteCloudDatabase else {
                throw UnsupportedTestControl()
            }
            try await file.deleteZone(zone, reason: reason)
        })

    /// The CloudKit Web Services client over real HTTP, against the emulator (`cloudkit-emulator`, in this process),
    /// as a signed-in user of the private database: the client and the server are two readings of Apple's format,
    /// and each checks the other.
    package static let webServices = DatabaseBackend(
        name: "Web Services", keepsFieldOrder: false, keepsEmptyListTypes: false, reportsAncestors: false,
        keepsEncryptedFields: false, reportsShareRoots: false, reportsUserDeletedZones: false,
        make: { limit, clock in try await makeWebServicesDatabase(maximumItemsPerRequest: limit, clock: clock) },
        expireChangeTokens: { database in
            guard let emulator = await EmulatorsBehindClients.shared.emulator(behind: database) else {
                throw UnsupportedTestControl()
            }
            await emulator.expireChangeTokens()
        },
        deleteZoneAsICloud: { database, zone, reason in
            guard let emulator = await EmulatorsBehindClients.shared.emulator(behind: database) else {
                throw UnsupportedTestControl()
            }
            try await emulator.deleteZone(
                named: zone.zoneName, ofUser: webServicesUser, container: webServicesContainer, reason: reason)
        })

    private static let webServicesUser = "conformance"
    private static let webServicesContainer = "iCloud.com.example.Conformance"

    private static func makeWebServicesDatabase(
        maximumItemsPerRequest limit: Int, clock: any CloudClock
    ) async throws -> any CloudDatabase {
        let emulator = try await CloudKitEmulator.start(EmulatorConfiguration(clock: clock))
        var configuration = CloudKitWebServicesConfiguration(
            containerIdentifier: webServicesContainer, environment: .development, database: .private,
            authentication: .apiToken("api-token", webAuthToken: await emulator.signIn(user: webServicesUser)),
            serverURL: emulator.url,
            // The emulator answers on Swift's cooperative threads, which the suite's heaviest tests can keep busy
            // for seconds on a 2-core machine.
            retryPolicy: .never, requestTimeout: .seconds(120)
        )
        configuration.maximumOperationsPerRequest = limit
        let client = try CloudKitWebServicesDatabase(configuration: configuration)
        await EmulatorsBehindClients.shared.register(emulator, behind: client)
        return client
    }
}
