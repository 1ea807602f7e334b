#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudKitDatabase {
    /// The changes to a custom zone's records since a token, through
    /// `CKDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`; see
    /// ``CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)``.
    ///
    /// CloudKit hands out a page's changed records by ID, in no order; they come back sorted by modification date,
    /// then by record name, so the same page reads the same every time (records saved by one request share a
    /// modification date). Deletions keep CloudKit's order. A changed record CloudKit couldn't return is in
    /// ``CloudRecordZoneChanges/modificationFailures``. `desiredKeys: []` returns system fields only, as CloudKit
    /// does.
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for the default zone (refused before asking CloudKit,
    ///   as on every backend) or a token this adapter didn't make; ``CloudDatabaseError/changeTokenExpired(_:)``,
    ///   ``CloudDatabaseError/zoneNotFound(_:)``, ``CloudDatabaseError/userDeletedZone(_:)`` naming the zone.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        guard zoneID.zoneName != CloudRecord.ZoneID.defaultZoneName else {
            throw CloudDatabaseError.defaultZoneHasNoChanges
        }
        let serverToken = try token.map(Self.serverChangeToken)
        let page = try await request(zoneID: zoneID, items: nil) {
            try await database.recordZoneChanges(
                inZoneWith: zoneID.ckZoneID, since: serverToken, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
        var modifications: [CloudRecord] = []
        var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
        for (ckID, result) in page.modificationResultsByID {
            let id = CloudRecord.ID(ckID)
            switch Self.convert(result.map(\.record), id: id) {
            case .success(let record): modifications.append(record)
            case .failure(let error): failures[id] = error
            }
        }
        modifications.sort(by: Self.changeOrder)
        return CloudRecordZoneChanges(
            modifications: modifications,
            modificationFailures: failures,
            deletions: page.deletions.map {
                CloudRecordDeletion(id: CloudRecord.ID($0.recordID), recordType: $0.recordType)
            },
            changeToken: try Self.changeToken(page.changeToken),
            moreComing: page.moreComing)
    }

    /// The zones created, changed and deleted since a token, through `CKDatabase.databaseChanges(since:resultsLimit:)`;
    /// see ``CloudDatabase/databaseChanges(since:resultsLimit:)``.
    ///
    /// A deletion's reason is CloudKit's `CKDatabase.DatabaseChange.Deletion.reason`: deleted, purged by the user, or
    /// emptied by an encrypted-data reset.
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a token this adapter didn't make;
    ///   ``CloudDatabaseError/changeTokenExpired(_:)`` (with no zone).
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges
    {
        let serverToken = try token.map(Self.serverChangeToken)
        let page = try await request(zoneID: nil, items: nil) {
            try await database.databaseChanges(since: serverToken, resultsLimit: resultsLimit)
        }
        return CloudDatabaseChanges(
            modifiedZoneIDs: page.modifications.map { CloudRecord.ZoneID($0.zoneID) },
            deletions: page.deletions.map {
                CloudZoneDeletion(zoneID: CloudRecord.ZoneID($0.zoneID), reason: $0.cloudReason)
            },
            changeToken: try Self.changeToken(page.changeToken),
            moreComing: page.moreComing)
    }

    /// The order of a page's changed records: by modification date (records without one first), then by name.
    static func changeOrder(_ lhs: CloudRecord, _ rhs: CloudRecord) -> Bool {
        let left = lhs.systemFields?.modificationDate ?? .distantPast
        let right = rhs.systemFields?.modificationDate ?? .distantPast
        if left != right { return left < right }
        return lhs.id.recordName < rhs.id.recordName
    }

    /// A CloudKit token as a portable one: its secure archive.
    static func changeToken(_ token: CKServerChangeToken) throws(CloudDatabaseError) -> CloudChangeToken {
        do {
            return CloudChangeToken(
                data: try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true))
        } catch {
            throw .internalError(
                "CloudKit's change token can't be archived (\(error)): fetch the changes again with a nil token")
        }
    }

    /// The CloudKit token a portable token holds.
    static func serverChangeToken(_ token: CloudChangeToken) throws(CloudDatabaseError) -> CKServerChangeToken {
        guard
            let serverToken = try? NSKeyedUnarchiver.unarchivedObject(
                ofClass: CKServerChangeToken.self, from: token.data)
        else {
            throw .invalidArguments(
                "the change token wasn't made by a CloudKitDatabase (it isn't an archived CKServerChangeToken): pass "
                    + "the token this database returned, or nil to fetch every change")
        }
        return serverToken
    }
}

extension CKDatabase.DatabaseChange.Deletion {
    /// Why the zone was deleted, as CloudKit says (`reason`, in every release the package supports).
    var cloudReason: CloudZoneDeletion.Reason {
        switch reason {
        case .deleted: .deleted
        case .purged: .purged
        case .encryptedDataReset: .encryptedDataReset
        // A reason newer than this version: an app's deletion is the one that keeps least.
        @unknown default: .deleted
        }
    }
}
#endif
