import AsyncHTTPClient
import Foundation
import Logging
import NestedCloudKitCodable

/// A `CloudDatabase` that is a container's database in iCloud, reached through CloudKit Web Services: for
/// Linux, servers, command-line tools and CI jobs that read and write the records an app's users have.
///
/// ```swift
/// let database = try CloudKitWebServicesDatabase(configuration: CloudKitWebServicesConfiguration(
///     containerIdentifier: "iCloud.com.example.School",
///     environment: .production,
///     database: .public,
///     authentication: .serverToServerKey(try ServerToServerKey(keyID: keyID, pemFile: keyFile))
/// ))
/// let school = try await CKRecordDecoder().decode(School.self, from: record, referenceDatabase: database)
/// ```
///
/// It keeps CloudKit's rules because CloudKit applies them; what it adds is the mapping:
/// - Requests go per zone (CloudKit Web Services names one zone a request) with at most
///   ``maximumItemsPerRequest`` operations (200); more is `CloudDatabaseError.limitExceeded(limit:requested:)`.
/// - Saves choose the operation from the save policy and the record: `create` for a new record and `update` for
///   a fetched one under `ifServerRecordUnchanged`, `forceUpdate` under `changedKeys` and `allKeys`. A field the
///   record clears goes as a `null` value; nothing is sent as `replace`, which would set every field the record
///   doesn't hold to null, the fields a newer version of the app added among them. Deletes are `delete`, or
///   `forceDelete` when the policy doesn't check change tags.
/// - A conflict is reported as `CloudDatabaseError.serverRecordChanged(server:client:ancestor:)` with the
///   server's record, fetched for it (CloudKit Web Services' error doesn't carry it).
/// - Assets with local contents are uploaded first (`assets/upload`, then the bytes, streamed from their file),
///   and the field carries the receipt. Fetched assets are downloaded into
///   ``CloudKitWebServicesConfiguration/assetCacheDirectory`` (unless
///   ``CloudKitWebServicesConfiguration/downloadsAssets`` is off), so their contents are local files, as with
///   `CKDatabase`; a saved record keeps its local contents.
/// - Throttling and "try again later" are retried after the `retryAfter` the server gives, as
///   ``CloudKitWebServicesConfiguration/retryPolicy`` allows, within its total time.
/// - Fields CloudKit keeps encrypted (`CloudRecord.encryptedFieldNames`) can't be saved: CloudKit encrypts them on
///   the user's devices, with keys a Web Services client never has, and Web Services documents no form for them. A
///   record with any fails before any request, with an error that names it and the field.
/// - Logs go to the `logger` given, nowhere otherwise: each request and each retry at debug level.
public final class CloudKitWebServicesDatabase: CloudDatabase {
    /// CloudKit Web Services' limit on the operations of one request.
    public static let maximumOperationsPerRequest = 200

    /// Where requests go and how they authenticate.
    public let configuration: CloudKitWebServicesConfiguration

    /// The most records one request may fetch, save or delete: the configuration's
    /// ``CloudKitWebServicesConfiguration/maximumOperationsPerRequest``, at most CloudKit's 200.
    public let maximumItemsPerRequest: Int

    let transport: WebServicesTransport

    /// Connects to a container's database.
    ///
    /// - Parameters:
    ///   - configuration: Where requests go and how they authenticate.
    ///   - httpClient: The HTTP client to send requests with. Unless given, a client the process's databases share
    ///     that connects within the configuration's ``CloudKitWebServicesConfiguration/connectTimeout`` and fails a
    ///     request at once when the server refuses the connection; a client given connects as its own
    ///     configuration says (AsyncHTTPClient's `HTTPClient.shared` tries to connect again until the request
    ///     timeout passes).
    ///   - logger: Where requests are logged, at debug level (endpoint, status, retries; never a secret); nowhere
    ///     unless given, as swift-server libraries do.
    ///   - webAuthTokenRotated: Called with each new web auth token the server gives, so that the app can keep
    ///     it for its next session; the old one no longer works.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a configuration that can't work, such as a
    ///   server-to-server key for the private database.
    public init(
        configuration: CloudKitWebServicesConfiguration,
        httpClient: HTTPClient? = nil,
        logger: Logger = CloudKitWebServicesDatabase.disabledLogger,
        webAuthTokenRotated: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        if let problem = configuration.problem { throw CloudDatabaseError.invalidArguments(problem) }
        self.configuration = configuration
        maximumItemsPerRequest = min(
            max(1, configuration.maximumOperationsPerRequest), Self.maximumOperationsPerRequest)
        transport = WebServicesTransport(
            configuration: configuration, httpClient: httpClient, logger: logger,
            webAuthTokenRotated: webAuthTokenRotated
        )
    }

    /// The user's current web auth token, when requests act for a user: the one the last response gave.
    public var webAuthToken: String? {
        get async { await transport.session?.token }
    }

    /// Where the user signs in, as CloudKit's last `AUTHENTICATION_REQUIRED` error said (its `redirectURL`), or
    /// `nil` while no request has needed a signed-in user.
    ///
    /// A request that needs one throws `CloudDatabaseError.notAuthenticated`; send the user here, and make the
    /// database again with the web auth token the sign-in gives.
    public var signInURL: URL? {
        transport.signInURL.withLockedValue { $0 }
    }

    /// The logger of a database not given one: it logs nothing.
    public static let disabledLogger = Logger(
        label: "NestedCloudKitWebServices", factory: { _ in SwiftLogNoOpLogHandler() })

    // MARK: Fetching

    /// Fetches records by ID with `records/lookup`, one request per zone, in flight together; each record's
    /// assets are downloaded unless the configuration says otherwise.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        try checkLimit(ids.count)
        var results: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        results.reserveCapacity(ids.count)
        try await withThrowingTaskGroup(of: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>].self) { group in
            for (zone, zoneIDs) in Self.groupedByZone(ids, zone: \.zoneID) {
                group.addTask { try await self.lookUp(zoneIDs, in: zone, desiredKeys: desiredKeys) }
            }
            for try await zoneResults in group { results.merge(zoneResults) { first, _ in first } }
        }
        return results
    }

    /// One `records/lookup` request, for records of one zone.
    private func lookUp(
        _ ids: [CloudRecord.ID], in zone: CloudRecord.ZoneID, desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        var seen: Set<String> = []
        let names = ids.map(\.recordName).filter { seen.insert($0).inserted }
        let request = WireLookupRequest(
            records: names.map(WireLookupRequest.RecordName.init), zoneID: WireZoneID(zone), desiredKeys: desiredKeys
        )
        let response = try await transport.post("records/lookup", request, as: WireRecordsResponse.self)
        let owners = ZoneOwners(requested: zone, answers: response.records.map { $0.item?.zoneID })
        var results: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        for (index, item) in response.records.enumerated() {
            // Items come in the order asked; an error dictionary may leave the record name out.
            guard let name = item.item?.recordName ?? item.error?.recordName ?? names[safe: index], seen.contains(name)
            else {
                continue
            }
            let id = CloudRecord.ID(recordName: name, zoneID: zone)
            if let record = item.item {
                results[id] =
                    record.deleted == true
                    ? .failure(.unknownItem(id)) : await withLocalAssets(record.cloudRecord(in: zone, owners: owners))
            } else if let error = item.error {
                results[id] = .failure(error.databaseError(recordID: id, zoneID: zone))
            }
        }
        results.failLeftOut(ids, by: "CloudKit's response to records/lookup")
        return results
    }

    // MARK: Modifying

    /// Saves and deletes records with `records/modify`, one request per zone, after uploading their assets.
    ///
    /// Records CloudKit would refuse fail before any request; in an atomic request in a custom zone they fail
    /// the zone's other items with `CloudDatabaseError.batchRequestFailed(_:)`, as CloudKit would.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> CloudModifyResults {
        try checkLimit(recordsToSave.count + recordIDsToDelete.count)
        if let refusal = CloudRequestRules.refusal(saving: recordsToSave, deleting: recordIDsToDelete) {
            throw refusal
        }
        var outcome = ModifyOutcome()
        let saveZones = Self.groupedByZone(recordsToSave, zone: \.id.zoneID)
        let deleteZones = Dictionary(grouping: recordIDsToDelete, by: \.zoneID)
        let zones =
            saveZones.map(\.zone)
            + deleteZones.keys.filter { zone in !saveZones.contains { $0.zone == zone } }
            .sorted { $0.zoneName < $1.zoneName }
        for zone in zones {
            let saves = saveZones.first { $0.zone == zone }?.items ?? []
            try await modify(
                saving: saves, deleting: deleteZones[zone] ?? [], in: zone, savePolicy: savePolicy,
                atomically: atomically && zone != .default, outcome: &outcome
            )
        }
        return (outcome.saveResults, outcome.deleteResults)
    }

    /// The results of a modify request, zone by zone.
    private struct ModifyOutcome {
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
    }

    /// One `records/modify` request, for the changes in one zone.
    private func modify(
        saving records: [CloudRecord], deleting ids: [CloudRecord.ID], in zone: CloudRecord.ZoneID,
        savePolicy: CloudRecordSavePolicy, atomically: Bool, outcome: inout ModifyOutcome
    ) async throws {
        var (uploaded, refusals) = try await prepare(records, atomically: atomically)
        for (id, error) in refusals { outcome.saveResults[id] = .failure(error) }
        var ids = ids
        if atomically {
            let failures = AtomicZoneFailures(failed: refusals.keys)
            // Every record not refused fails, uploaded or not.
            var others = records.filter { refusals[$0.id] == nil }
            failures.fail(&others, id: \.id, results: &outcome.saveResults)
            uploaded.removeAll { failures.contains($0.id) }
            failures.fail(&ids, id: { $0 }, results: &outcome.deleteResults)
        }
        guard !uploaded.isEmpty || !ids.isEmpty else { return }

        var saves = uploaded.map { WireRecordOperation(record: $0, savePolicy: savePolicy) }
        Self.pointRootsAtTheirNewShares(&saves, records: uploaded)
        let operations = saves + ids.map { WireRecordOperation(deleting: $0, savePolicy: savePolicy) }
        let request = WireModifyRequest(operations: operations, zoneID: WireZoneID(zone), atomic: atomically)
        let response = try await transport.post("records/modify", request, as: WireRecordsResponse.self)
        let conflicts = read(
            response, saved: uploaded, deleted: ids, clients: records, in: zone, outcome: &outcome)
        if !conflicts.isEmpty {
            try await reportConflicts(conflicts, in: zone, outcome: &outcome)
        }
        outcome.saveResults.failLeftOut(uploaded.lazy.map(\.id), by: "CloudKit's response to records/modify")
        outcome.deleteResults.failLeftOut(ids, by: "CloudKit's response to records/modify")
    }

    /// The records to send, their assets uploaded, and the records refused before anything is sent: what CloudKit
    /// would refuse (refused here, so the error names the record and field), and the assets that didn't upload.
    private func prepare(_ records: [CloudRecord], atomically: Bool) async throws -> (
        uploaded: [CloudRecord], refusals: [CloudRecord.ID: CloudDatabaseError]
    ) {
        var refusals: [CloudRecord.ID: CloudDatabaseError] = [:]
        var sendable: [CloudRecord] = []
        for record in records {
            if let refusal = CloudRequestRules.refusal(saving: record) ?? Self.refusalOfNonFiniteNumbers(in: record)
                ?? Self.refusalOfEncryptedFields(in: record)
            {
                refusals[record.id] = refusal
            } else {
                sendable.append(record)
            }
        }
        var uploaded: [CloudRecord] = []
        for record in sendable {
            // Nothing of an atomic request applies in a custom zone once an item of it failed, so the other
            // records' assets aren't uploaded either.
            if atomically && AtomicZoneFailures(failed: refusals.keys).contains(record.id) { continue }
            do {
                uploaded.append(try await AssetUploader(transport: transport).uploadingAssets(of: record))
            } catch let error as CloudDatabaseError {
                refusals[record.id] = error
            }
        }
        return (uploaded, refusals)
    }

    /// Reads the answer to `records/modify` into `outcome`; returns the saves CloudKit answered with a conflict,
    /// as the caller gave them, whose server records are still to fetch.
    private func read(
        _ response: WireRecordsResponse, saved uploaded: [CloudRecord], deleted ids: [CloudRecord.ID],
        clients records: [CloudRecord], in zone: CloudRecord.ZoneID, outcome: inout ModifyOutcome
    ) -> [CloudRecord] {
        let owners = ZoneOwners(requested: zone, answers: response.records.map { $0.item?.zoneID })
        // The records as the caller gave them, local assets included: for conflicts and the saved records.
        let clients = Dictionary(uniqueKeysWithValues: records.map { ($0.id.recordName, $0) })
        let deleted = Set(ids.map(\.recordName))
        let names = uploaded.map(\.id.recordName) + ids.map(\.recordName)
        var conflicts: [CloudRecord] = []
        for (index, item) in response.records.enumerated() {
            guard let name = item.item?.recordName ?? item.error?.recordName ?? names[safe: index] else { continue }
            let id = CloudRecord.ID(recordName: name, zoneID: zone)
            if let record = item.item {
                if deleted.contains(name) {
                    outcome.deleteResults[id] = .success(())
                } else {
                    let saved = record.cloudRecord(in: zone, owners: owners)
                    outcome.saveResults[id] = .success(clients[name].map { saved.keepingLocalAssets(of: $0) } ?? saved)
                }
            } else if let error = item.error {
                if let client = clients[name], error.isConflict {
                    conflicts.append(client)
                } else if deleted.contains(name) {
                    outcome.deleteResults[id] = .failure(error.databaseError(recordID: id, zoneID: zone))
                } else {
                    outcome.saveResults[id] = .failure(error.databaseError(recordID: id, zoneID: zone))
                }
            }
        }
        return conflicts
    }

    /// A conflict carries the server's record, as CloudKit's framework gives it: fetched, since the Web Services
    /// answer names only the error.
    private func reportConflicts(
        _ conflicts: [CloudRecord], in zone: CloudRecord.ZoneID, outcome: inout ModifyOutcome
    ) async throws {
        let servers = try await lookUp(conflicts.map(\.id), in: zone, desiredKeys: nil)
        for client in conflicts {
            switch servers[client.id] {
            case .success(let server)?:
                outcome.saveResults[client.id] = .failure(
                    .serverRecordChanged(server: server, client: client, ancestor: nil))
            case .failure(let error)?: outcome.saveResults[client.id] = .failure(error)
            case nil: outcome.saveResults[client.id] = .failure(.unknownItem(client.id))
            }
        }
    }

    /// JSON has no infinity or NaN, so CloudKit Web Services can't take them.
    private static func refusalOfNonFiniteNumbers(in record: CloudRecord) -> CloudDatabaseError? {
        for (name, value) in record.fields {
            let finite =
                switch value {
                case .double(let double): double.isFinite
                case .doubleList(let list): list.allSatisfy(\.isFinite)
                default: true
                }
            if !finite {
                return .invalidArguments(
                    "\(record.id)'s field \(name) holds a number that isn't finite, which JSON can't carry")
            }
        }
        return nil
    }

    /// CloudKit encrypts a field of `CKRecord.encryptedValues` on the user's devices, with keys kept in their
    /// iCloud Keychain; CloudKit Web Services and CloudKit JS document no form for such a field, so a value sent
    /// here would be stored unencrypted, or refused, and a client reading it through the framework wouldn't find
    /// it among the encrypted values.
    private static func refusalOfEncryptedFields(in record: CloudRecord) -> CloudDatabaseError? {
        let fields = record.encryptedFieldNames.sorted()
        guard !fields.isEmpty else { return nil }
        let named = fields.count == 1 ? "field \(fields[0]) is" : "fields \(fields.joined(separator: ", ")) are"
        return .invalidArguments(
            "\(record.id)'s \(named) encrypted, which CloudKit Web Services can't write: CloudKit encrypts such "
                + "fields on the user's Apple devices. Save the record through CloudKit on an Apple platform "
                + "(CloudKitDatabase), or keep the value in a field that isn't encrypted"
        )
    }

    // MARK: Helpers

    /// The fetched record with its assets downloaded, when the configuration asks for it.
    func withLocalAssets(_ record: CloudRecord) async -> Result<CloudRecord, CloudDatabaseError> {
        guard configuration.downloadsAssets else { return .success(record) }
        do {
            return .success(try await AssetDownloader(transport: transport).downloadingAssets(of: record))
        } catch let error as CloudDatabaseError {
            return .failure(error)
        } catch {
            return .failure(.networkFailure("downloading \(record.id)'s assets: \(error)", underlying: error))
        }
    }

    func checkLimit(_ count: Int) throws {
        if count > maximumItemsPerRequest {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: count)
        }
    }

    /// The items grouped by zone, zones in the order they first appear and items in their order.
    private static func groupedByZone<Item>(
        _ items: [Item], zone: (Item) -> CloudRecord.ZoneID
    ) -> [(zone: CloudRecord.ZoneID, items: [Item])] {
        var groups: [(zone: CloudRecord.ZoneID, items: [Item])] = []
        var indices: [CloudRecord.ZoneID: Int] = [:]
        for item in items {
            let key = zone(item)
            if let index = indices[key] {
                groups[index].items.append(item)
            } else {
                indices[key] = groups.count
                groups.append((key, [item]))
            }
        }
        return groups
    }
}

extension Array {
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
