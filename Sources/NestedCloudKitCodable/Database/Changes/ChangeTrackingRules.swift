/// The rules of change tracking and subscriptions that every backend applies before anything reaches a server, in
/// one place, so that backends refuse the same requests with the same words.
extension CloudSubscription {
    /// Why CloudKit would refuse to save this subscription whatever the database holds, or `nil`: an empty ID, or a
    /// zone subscription to the default zone (which keeps no change history).
    package var refusal: CloudDatabaseError? {
        if id.isEmpty { return .invalidArguments("a subscription needs an ID") }
        if case .zone(let zoneID) = kind, zoneID.zoneName == CloudRecord.ZoneID.defaultZoneName {
            return .invalidArguments("the default zone has no zone subscriptions: subscribe to a custom zone")
        }
        return nil
    }
}

extension CloudDatabaseError {
    /// A subscription to delete that the database doesn't have.
    package static func unknownSubscription(_ id: CloudSubscription.ID) -> CloudDatabaseError {
        .invalidArguments("no subscription has the ID \(id): list the database's subscriptions with allSubscriptions()")
    }

    /// The page size a change request asks for: `resultsLimit` within `maximum`, or `maximum` for `nil`.
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a limit below 1.
    package static func changePageSize(_ resultsLimit: Int?, maximum: Int) throws -> Int {
        guard let resultsLimit else { return max(1, maximum) }
        guard resultsLimit > 0 else {
            throw CloudDatabaseError.invalidArguments("resultsLimit must be at least 1, or nil for the default")
        }
        return min(resultsLimit, max(1, maximum))
    }
}

extension CloudDatabaseError {
    /// What every backend says when asked for the default zone's changes: CloudKit tracks changes in custom zones
    /// only.
    package static var defaultZoneHasNoChanges: CloudDatabaseError {
        .invalidArguments(
            "the default zone keeps no change history, as in CloudKit: sync a custom zone, or query the default zone "
                + "for the records modified since a date (CloudQuery.Predicate.modified(after:))")
    }
}
