import Foundation
import NestedCloudKitCodable

// MARK: Changes since a token

extension CloudKitWebServicesDatabase {
    /// The changes to one custom zone's records since a sync token, a page at a time, with `changes/zone`.
    ///
    /// The default zone keeps no change history, and is refused before any request with
    /// `CloudDatabaseError.invalidArguments(_:)`, as CloudKit refuses it. The token is the `syncToken` the server
    /// gave, as a string (`CloudChangeToken.string`). Changed records come with their assets downloaded, as
    /// from ``records(for:desiredKeys:)``; a record whose assets can't be downloaded is among the
    /// `modificationFailures`. Deleted records come as CloudKit's tombstones (`deleted: true`), with their record
    /// type when the server sends it, and `""` when it doesn't.
    ///
    /// An expired sync token is `CloudDatabaseError.changeTokenExpired(_:)`, recognised as
    /// CloudKit Web Services can say it (it documents no code for it): see the package documentation.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        guard zoneID != .default else { throw CloudDatabaseError.defaultZoneHasNoChanges }
        let syncToken = try Self.syncToken(of: token)
        let request = WireZoneChangesRequest(zones: [
            .init(
                zoneID: WireZoneID(zoneID), syncToken: syncToken, desiredKeys: desiredKeys,
                resultsLimit: try Self.wireResultsLimit(resultsLimit))
        ])
        let response = try await transport.post(
            "changes/zone", request, as: WireZoneChangesResponse.self,
            mapError: { $0.changesError(zoneID: zoneID) })
        guard let result = response.zones.first else {
            throw CloudDatabaseError.internalError("CloudKit's response to changes/zone left out zone \(zoneID)")
        }
        if let error = result.error { throw error.changesError(zoneID: zoneID) }
        guard let zone = result.item else {
            throw CloudDatabaseError.internalError("CloudKit's response to changes/zone left out zone \(zoneID)")
        }
        guard let newToken = zone.syncToken ?? syncToken else {
            throw CloudDatabaseError.internalError(
                "CloudKit's response to changes/zone for \(zoneID) has no syncToken to continue from")
        }
        let records = zone.records ?? []
        let owners = ZoneOwners(
            requested: zoneID, answers: [zone.zoneID] + records.map { $0.item?.zoneID ?? $0.error?.zoneID })
        var changes = CloudRecordZoneChanges(
            changeToken: CloudChangeToken(string: newToken), moreComing: zone.moreComing ?? false)
        for item in records {
            if let record = item.item {
                let converted = record.cloudRecord(in: zoneID, owners: owners)
                if record.deleted == true {
                    changes.deletions.append(CloudRecordDeletion(id: converted.id, recordType: converted.recordType))
                } else {
                    switch await withLocalAssets(converted) {
                    case .success(let withAssets): changes.modifications.append(withAssets)
                    case .failure(let error): changes.modificationFailures[converted.id] = error
                    }
                }
            } else if let error = item.error {
                guard let name = error.recordName else { throw error.changesError(zoneID: zoneID) }
                let id = CloudRecord.ID(recordName: name, zoneID: zoneID)
                changes.modificationFailures[id] = error.databaseError(recordID: id, zoneID: zoneID)
            }
        }
        return changes
    }

    /// The zones changed and deleted since a sync token, a page at a time, with `changes/database`.
    ///
    /// CloudKit keeps database changes for the private and shared databases; the public database has none and is
    /// refused before any request. A deleted zone is read from the zone's `deleted`, `purged` and
    /// `encryptedDataReset` flags, which the reference doesn't document (see the package documentation): a zone
    /// with none of them is a changed zone.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws
        -> CloudDatabaseChanges
    {
        guard configuration.database != .public else {
            throw CloudDatabaseError.invalidArguments(
                "the public database keeps no change history, as in CloudKit: query it for the records modified "
                    + "since a date (CloudQuery.Predicate.modified(after:)), or read the private database's changes")
        }
        let syncToken = try Self.syncToken(of: token)
        let request = WireDatabaseChangesRequest(
            syncToken: syncToken, resultsLimit: try Self.wireResultsLimit(resultsLimit))
        let response = try await transport.post(
            "changes/database", request, as: WireDatabaseChangesResponse.self,
            mapError: { $0.changesError(zoneID: nil) })
        guard let newToken = response.syncToken ?? syncToken else {
            throw CloudDatabaseError.internalError(
                "CloudKit's response to changes/database has no syncToken to continue from")
        }
        let owners = zoneOwners(answers: response.zones.map { $0.item?.zoneID ?? $0.error?.zoneID })
        var changes = CloudDatabaseChanges(
            changeToken: CloudChangeToken(string: newToken), moreComing: response.moreComing ?? false)
        for item in response.zones {
            if let zone = item.item {
                let zoneID = owners.zoneID(zone.zoneID, default: .default)
                if zone.purged == true {
                    changes.deletions.append(CloudZoneDeletion(zoneID: zoneID, reason: .purged))
                } else if zone.encryptedDataReset == true {
                    changes.deletions.append(CloudZoneDeletion(zoneID: zoneID, reason: .encryptedDataReset))
                } else if zone.deleted == true {
                    changes.deletions.append(CloudZoneDeletion(zoneID: zoneID, reason: .deleted))
                } else {
                    changes.modifiedZoneIDs.append(zoneID)
                }
            } else if let error = item.error {
                throw error.changesError(zoneID: error.zoneID.map { owners.zoneID($0, default: .default) })
            }
        }
        return changes
    }

    /// The owners a response's zone dictionaries name: in the private database every zone is the current user's,
    /// whatever name the server gives the owner; in the shared database they are other users'.
    func zoneOwners(answers: some Sequence<WireZoneID?>) -> ZoneOwners {
        guard configuration.database == .private else { return ZoneOwners(currentUserAliases: []) }
        return ZoneOwners(currentUserAliases: answers.compactMap { $0?.ownerRecordName })
    }

    /// The `syncToken` string a token carries.
    static func syncToken(of token: CloudChangeToken?) throws -> String? {
        guard let token else { return nil }
        guard let string = token.string, !string.isEmpty else {
            throw CloudDatabaseError.invalidArguments(
                "the change token wasn't made by CloudKit Web Services: pass the token this database returned, or "
                    + "nil to fetch every change")
        }
        return string
    }

    /// A results limit as CloudKit Web Services takes it: 1 to 200, or left out for the server's own page size.
    static func wireResultsLimit(_ resultsLimit: Int?) throws -> Int? {
        guard let resultsLimit else { return nil }
        return try CloudDatabaseError.changePageSize(resultsLimit, maximum: maximumOperationsPerRequest)
    }
}

// MARK: The user

extension CloudKitWebServicesDatabase {
    /// The current user's record name, from `users/caller`.
    ///
    /// The reference puts `users/caller` under the public database's path whichever database the requests
    /// reach, and answers with `users`, an array holding the caller's identity; its `userRecordName` is returned.
    /// With a web auth token, that is the signed-in user; without one (API token only) the server asks for a
    /// sign-in, which is `CloudDatabaseError.notAuthenticated` (and ``signInURL`` says where). What the server
    /// answers for a server-to-server key is undocumented; whatever user record name it gives is returned.
    public func userRecordName() async throws -> String {
        let response = try await transport.get("users/caller", in: .public, as: WireCallerResponse.self)
        guard let name = response.callerRecordName, !name.isEmpty else {
            throw CloudDatabaseError.internalError("CloudKit's response to users/caller has no userRecordName")
        }
        return name
    }

    /// Whether a user is signed in, from `users/caller`: `.available` when it names the user, `.noAccount` when
    /// the server asks for a sign-in (`AUTHENTICATION_REQUIRED`, as for an API token without a web auth token).
    ///
    /// Other failures are thrown: a refused key or token is a configuration to fix, not an account status. With a
    /// server-to-server key, which acts for no iCloud user, the status is what `users/caller` answers for the key
    /// (undocumented): `.available` if it names a user record, `.noAccount` if it asks for a sign-in.
    public func accountStatus() async throws -> CloudAccountStatus {
        do {
            _ = try await userRecordName()
            return .available
        } catch CloudDatabaseError.notAuthenticated {
            return .noAccount
        }
    }
}

// MARK: Subscriptions

extension CloudKitWebServicesDatabase {
    /// Saves and deletes subscriptions with `subscriptions/modify`.
    ///
    /// A save is a `create`; a subscription that already exists (`EXISTS`) is then sent again as an `update`, so
    /// saving replaces, as `CKDatabase.modifySubscriptions(saving:deleting:)` does. A zone subscription goes as
    /// `subscriptionType: "zone"` with its zone and `zoneWide: true`; a database subscription as `"database"`,
    /// which the reference doesn't list (see the wire form of a subscription in this module). The default zone has no zone subscriptions,
    /// and is refused before any request.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try checkLimit(subscriptionsToSave.count + subscriptionIDsToDelete.count)
        var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
        var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
        var creates: [CloudSubscription] = []
        for subscription in subscriptionsToSave {
            if let refusal = subscription.refusal {
                saveResults[subscription.id] = .failure(refusal)
            } else {
                creates.append(subscription)
            }
        }
        var operations = creates.map {
            WireSubscriptionsModifyRequest.Operation(operationType: .create, subscription: WireSubscription($0))
        }
        operations += subscriptionIDsToDelete.map {
            .init(operationType: .delete, subscription: WireSubscription(deleting: $0))
        }
        guard !operations.isEmpty else { return (saveResults, deleteResults) }

        var outcomes = try await modifySubscriptions(operations)
        let existing = creates.filter { outcomes[.create]?[$0.id]?.error?.serverErrorCode == "EXISTS" }
        if !existing.isEmpty {
            let updates = try await modifySubscriptions(
                existing.map { .init(operationType: .update, subscription: WireSubscription($0)) })
            for subscription in existing { outcomes[.create]?[subscription.id] = updates[.update]?[subscription.id] }
        }
        for subscription in creates {
            switch outcomes[.create]?[subscription.id] {
            case let result? where result.error != nil:
                // A zone subscription's failure names its zone (ZONE_NOT_FOUND is about that zone).
                let zoneID: CloudRecord.ZoneID
                if case .zone(let subscribed) = subscription.kind { zoneID = subscribed } else { zoneID = .default }
                saveResults[subscription.id] = .failure(Self.subscriptionError(result.error, zoneID: zoneID))
            case let result?:
                // The saved subscription as the server describes it, or as sent when it says nothing more.
                let owners = zoneOwners(answers: [result.item?.zoneID])
                saveResults[subscription.id] = .success(
                    result.item?.cloudSubscription(owners: owners) ?? subscription)
            case nil:
                saveResults[subscription.id] = .failure(
                    .internalError("CloudKit's response to subscriptions/modify left out \(subscription.id)"))
            }
        }
        for id in subscriptionIDsToDelete {
            switch outcomes[.delete]?[id] {
            case let result? where result.error != nil:
                deleteResults[id] = .failure(Self.subscriptionError(result.error))
            case .some: deleteResults[id] = .success(())
            case nil:
                deleteResults[id] = .failure(
                    .internalError("CloudKit's response to subscriptions/modify left out \(id)"))
            }
        }
        return (saveResults, deleteResults)
    }

    /// Every subscription of the database, from `subscriptions/list`.
    ///
    /// Query subscriptions (made through the framework's `CKQuerySubscription` or CloudKit JS) have no portable
    /// form and are left out; zone and database subscriptions are returned, ordered by ID.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        let response = try await transport.get("subscriptions/list", as: WireSubscriptionsResponse.self)
        let owners = zoneOwners(answers: response.subscriptions.map { $0.item?.zoneID })
        return response.subscriptions.compactMap { $0.item?.cloudSubscription(owners: owners) }.sorted {
            $0.id < $1.id
        }
    }

    /// One `subscriptions/modify` request: each operation's answer, by operation type and subscription ID.
    private func modifySubscriptions(
        _ operations: [WireSubscriptionsModifyRequest.Operation]
    ) async throws -> [WireSubscriptionsModifyRequest.OperationType: [String: WireItemResult<WireSubscription>]] {
        let response = try await transport.post(
            "subscriptions/modify", WireSubscriptionsModifyRequest(operations: operations),
            as: WireSubscriptionsResponse.self)
        var outcomes: [WireSubscriptionsModifyRequest.OperationType: [String: WireItemResult<WireSubscription>]] =
            [:]
        for (index, item) in response.subscriptions.enumerated() {
            // Answers come in the order asked; an error dictionary may leave the subscription ID out.
            guard let operation = operations[safe: index] else { break }
            let id = item.item?.subscriptionID ?? item.error?.subscriptionID ?? operation.subscription.subscriptionID
            guard let asked = operations.first(where: { $0.subscription.subscriptionID == id }) else { continue }
            outcomes[asked.operationType, default: [:]][id] = item
        }
        return outcomes
    }

    /// The portable error of a subscription's error dictionary.
    private static func subscriptionError(
        _ error: WireServerError?, zoneID: CloudRecord.ZoneID = .default
    ) -> CloudDatabaseError {
        guard let error else { return .internalError("CloudKit's response to subscriptions/modify has no error") }
        if error.serverErrorCode == "NOT_FOUND" {
            return .invalidArguments(
                "no subscription has the ID \(error.subscriptionID ?? "given") (NOT_FOUND): list the database's "
                    + "subscriptions with allSubscriptions()")
        }
        return error.databaseError(recordID: nil, zoneID: zoneID)
    }
}
