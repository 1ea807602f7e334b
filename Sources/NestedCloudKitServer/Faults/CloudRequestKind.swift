import Foundation

/// The kinds of request a database is asked, as ``CloudRequestStatistics`` counts them and a test aims a fault at
/// them (``SimulatedNetwork/loseNextResponse(to:)``, ``SimulatedNetwork/failNextRequest(to:with:)``).
public enum CloudRequestKind: Sendable, Hashable, CaseIterable {
    /// Fetching records by ID.
    case fetch
    /// Saving and deleting records.
    case modify
    /// A query's first page or a continuation.
    case query
    /// Listing, creating or deleting zones.
    case zones
    /// The changes of a zone's records since a token.
    case zoneChanges
    /// The changes of the database's zones since a token.
    case databaseChanges
    /// The user's identity or account status.
    case account
    /// Listing, saving or deleting subscriptions.
    case subscriptions

    var counter: WritableKeyPath<CloudRequestStatistics, Int> {
        switch self {
        case .fetch: \.fetchRequests
        case .modify: \.modifyRequests
        case .query: \.queryRequests
        case .zones: \.zoneRequests
        case .zoneChanges, .databaseChanges: \.changeRequests
        case .account: \.accountRequests
        case .subscriptions: \.subscriptionRequests
        }
    }
}
