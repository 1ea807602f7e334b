import Foundation
import NestedCloudKitCodable

// Accepting a share from its URL: `records/resolve` says what a short GUID stands for, `records/accept` accepts it
// as the signed-in user. The reference puts both under the public database's path, whichever database the client
// reaches; what was accepted then shows in the user's shared database.

extension CloudKitWebServicesDatabase {
    /// What a share's URL tells the signed-in user before they accept it, from the short GUID that ends the URL
    /// (`records/resolve`).
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record of a shared hierarchy.
    /// - Throws: `CloudDatabaseError`: the server's answer for a short GUID it doesn't know or a share the user
    ///   isn't invited to.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws
        -> CloudShare.Metadata
    {
        try await resolution(of: shortGUID, fetchingRootRecord: fetchingRootRecord, endpoint: "records/resolve")
    }

    /// Accepts a share as the signed-in user, from the short GUID that ends its URL (`records/accept`): an invited
    /// participant becomes accepted, anyone else joins a public share as a public user.
    ///
    /// - Returns: The share once accepted, in its owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError`: the server's answer for a short GUID it doesn't know, the owner's own
    ///   share, or a private share the user isn't invited to.
    @discardableResult
    public func acceptShare(shortGUID: String) async throws -> CloudShare {
        try await resolution(of: shortGUID, fetchingRootRecord: false, endpoint: "records/accept").share
    }

    private func resolution(of shortGUID: String, fetchingRootRecord: Bool, endpoint: String) async throws
        -> CloudShare.Metadata
    {
        let request = WireShortGUIDsRequest(
            shortGUIDs: [.init(value: shortGUID, shouldFetchRootRecord: fetchingRootRecord ? true : nil)])
        let response = try await transport.post(
            endpoint, request, as: WireShareResolutionResponse.self, under: .database(.public))
        guard let result = response.results.first else {
            throw CloudDatabaseError.internalError("CloudKit's response to \(endpoint) has no result")
        }
        if let error = result.error { throw error.databaseError(recordID: nil, zoneID: .default) }
        guard let resolution = result.item, let wireShare = resolution.share, let wireZone = resolution.zoneID else {
            throw CloudDatabaseError.internalError("CloudKit's response to \(endpoint) has no share for \(shortGUID)")
        }
        // Every zone of the answer is the owner's, named as the shared database names it.
        let owners = ZoneOwners(currentUserAliases: [])
        let zone = owners.zoneID(wireZone, default: .default)
        let share = try CloudShare(record: wireShare.cloudRecord(in: zone, owners: owners))
        func value<Value: RawRepresentable<String>>(_ text: String?, _ fallback: Value) -> Value {
            text.flatMap(Value.init(rawValue:)) ?? fallback
        }
        return CloudShare.Metadata(
            share: share,
            rootRecordID: resolution.rootRecordName.map { CloudRecord.ID(recordName: $0, zoneID: zone) },
            rootRecord: resolution.rootRecord?.cloudRecord(in: zone, owners: owners),
            ownerUserRecordName: resolution.ownerIdentity?.userRecordName ?? zone.ownerName,
            participantRole: value(resolution.participantType, CloudShare.Role.publicUser),
            participantStatus: value(resolution.participantStatus, CloudShare.AcceptanceStatus.unknown),
            participantPermission: value(resolution.participantPermission, CloudShare.Permission.none))
    }
}

extension CloudKitWebServicesDatabase: ShareAcceptingDatabase {}
