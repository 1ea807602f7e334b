import NestedCloudKitCodable

/// What a saved subscription fires on, read once from its wire form when it is saved or loaded: a change is matched
/// against typed values, and a subscription whose zone or filters can't be read is refused when it is saved (or
/// makes its file damaged), never quietly matched against fewer filters.
struct SubscriptionRule: Sendable {
    /// A query subscription's conditions.
    struct Query: Sendable {
        var recordType: String
        var filters: [QueryFilter]
        /// Its zone; `nil` for a zone-wide subscription.
        var zone: CloudRecord.ZoneID?
        /// The changes it fires on: `create`, `update` and `delete`.
        var firesOn: Set<String>
        /// Whether it is deleted after it first fires.
        var firesOnce: Bool

        /// Whether a change fires it: of its record type, in its zone, of a kind it fires on, matching every filter.
        func matches(_ changed: ChangedRecord) -> Bool {
            firesOn.contains(changed.change.firesOn) && changed.record.recordType == recordType
                && (zone == nil || changed.record.id.zoneID == zone)
                && filters.allSatisfy { $0.matches(changed.record) }
        }
    }

    enum Kind: Sendable {
        case database
        case zone(CloudRecord.ZoneID)
        case query(Query)
    }

    let id: String
    let kind: Kind

    /// Reads a subscription as the wire describes it, in a database whose owner the wire names `ownerRecordName`.
    init(_ wire: JSONValue, ownerRecordName: String) throws(ServerError) {
        guard let id = wire["subscriptionID"]?.string, !id.isEmpty else {
            throw .badRequest("a subscription needs a subscriptionID")
        }
        let coding = WireCoding.reading(ownerRecordName: ownerRecordName)
        self.id = id
        switch wire["subscriptionType"]?.string {
        case "database":
            kind = .database
        case "zone":
            kind = .zone(try coding.zoneID(wire["zoneID"]))
        case "query":
            guard let query = wire["query"], let recordType = query["recordType"]?.string else {
                throw .badRequest("subscription \(id): a query subscription needs a query with a recordType")
            }
            let filters = try (query["filterBy"]?.array ?? []).map { (filter) throws(ServerError) in
                try QueryFilter(filter, coding: coding)
            }
            kind = .query(
                Query(
                    recordType: recordType, filters: filters,
                    zone: wire["zoneWide"]?.bool == true ? nil : try coding.zoneID(wire["zoneID"]),
                    firesOn: Set(wire["firesOn"]?.array?.compactMap(\.string) ?? []),
                    firesOnce: wire["firesOnce"]?.bool == true))
        case let other:
            throw .badRequest(
                "subscription \(id): unknown subscriptionType \(other ?? "none"): zone, query or database")
        }
    }
}

extension WireCoding {
    /// A coding for reading what a client saved outside a request (subscriptions loaded from their file): it names
    /// no asset URLs and knows no uploads.
    static func reading(ownerRecordName: String) -> WireCoding {
        WireCoding(
            ownerRecordName: ownerRecordName, databaseUserRecordName: nil, downloadURL: { _, _, _ in "" },
            uploadedAsset: { _ in nil })
    }
}
