import Foundation

/// What a database has been asked, as its ``SimulatedNetwork/statistics`` counts: the simulated server or any database
/// behind a ``FaultInjectingDatabase``.
public struct CloudRequestStatistics: Sendable, Hashable {
    /// Every request, of any kind.
    public var requests = 0
    /// Requests that fetched records by ID.
    public var fetchRequests = 0
    /// Requests that saved or deleted records.
    public var modifyRequests = 0
    /// Query requests, first pages and continuations.
    public var queryRequests = 0
    /// Requests that listed, created or deleted zones.
    public var zoneRequests = 0
    /// Requests for the changes of a zone or of the database since a token.
    public var changeRequests = 0
    /// Requests for the user's identity or account status.
    public var accountRequests = 0
    /// Requests that listed, saved or deleted subscriptions.
    public var subscriptionRequests = 0
    /// Records returned by fetches and queries.
    public var recordsFetched = 0
    /// Records saved.
    public var recordsSaved = 0
    /// Records deleted at the caller's request (cascades not counted).
    public var recordsDeleted = 0

    /// Statistics with every count at zero.
    public init() {}
}
