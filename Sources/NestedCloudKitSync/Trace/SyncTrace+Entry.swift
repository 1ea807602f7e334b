import Foundation
import NestedCloudKitCodable

extension SyncTrace {
    /// One line of a trace: a call of the database and how it ended.
    ///
    /// A line is a JSON object with sorted keys; a key whose value is absent is left out. Records, record IDs,
    /// zone IDs and change tokens are in the package's `Codable` forms (`CloudRecord`'s: `recordType`, `id`,
    /// `fields` as a list of names and tagged values, `systemFields`). A line of ``format`` 1:
    ///
    /// ```json
    /// {"call":"recordZoneChanges","changeToken":{"data":"…"},"client":"laptop","format":1,"moreComing":false,
    ///  "received":[{"fields":[…],"id":{…},"recordType":"Item",…}],"sequence":9,"time":1800000000,"zoneID":{…}}
    /// ```
    public struct Entry: Sendable, Hashable, Codable {
        /// The layout of the line; 1 for this version.
        public var format: Int
        /// The line's number in the trace, from 1, in the order the calls ended.
        public var sequence: Int
        /// When the call ended, in seconds since 1970, by the trace's clock.
        public var time: Double
        /// Who made the call (``SyncTrace/database(_:client:)``).
        public var client: String
        /// The `CloudDatabase` method called: `modifyRecords`, `recordZoneChanges`, `databaseChanges`,
        /// `records` (by ID), `query`, `queryContinued`, `modifyRecordZones`, `allRecordZones`, `accountStatus`,
        /// `userRecordName`, `modifySubscriptions`, `allSubscriptions`.
        public var call: String
        /// The zone a fetch or a query read.
        public var zoneID: CloudRecord.ZoneID?
        /// The change token a fetch sent; absent for a fetch from the beginning.
        public var token: CloudChangeToken?
        /// The records a `records` call asked for by ID.
        public var recordIDs: [CloudRecord.ID]?
        /// The fields a fetch or query asked for, when it asked for some only: its records hold those fields alone.
        public var desiredKeys: [String]?
        /// The records a `modifyRecords` sent, as they were sent: the fields that changed, the engine's edit times.
        public var saving: [CloudRecord]?
        /// The records a `modifyRecords` asked to delete.
        public var deleting: [CloudRecord.ID]?
        /// The zones a `modifyRecordZones` asked to create.
        public var zonesSaving: [CloudRecord.ZoneID]?
        /// The zones a `modifyRecordZones` asked to delete.
        public var zonesDeleting: [CloudRecord.ZoneID]?
        /// The records the server answered with: those it saved, as it holds them, or those a fetch or query read.
        public var received: [CloudRecord]?
        /// The records the server deleted: those a `modifyRecords` deleted, or a fetch's deletions.
        public var deleted: [CloudRecord.ID]?
        /// The zones the server created (`modifyRecordZones`), or listed (`allRecordZones`).
        public var zones: [CloudRecord.ZoneID]?
        /// The zones a `databaseChanges` said changed.
        public var changedZones: [CloudRecord.ZoneID]?
        /// The zones a `databaseChanges` said were deleted.
        public var deletedZones: [CloudRecord.ZoneID]?
        /// What the server refused or couldn't read, item by item.
        public var failures: [Failure]?
        /// The change token the server answered with.
        public var changeToken: CloudChangeToken?
        /// Whether the server said more changes or matches are coming.
        public var moreComing: Bool?
        /// The account status or user record name the server answered with.
        public var answer: String?
        /// The code of the error the whole call failed with (as the log gives it: `requestRateLimited`,
        /// `zoneNotFound`, …); absent for a call that succeeded.
        public var error: String?

        /// An item the server refused or couldn't read, and the code of its error.
        public struct Failure: Sendable, Hashable, Codable {
            /// The record, for a record's failure.
            public var recordID: CloudRecord.ID?
            /// The zone, for a zone's failure.
            public var zoneID: CloudRecord.ZoneID?
            /// The error's code, as the log gives it.
            public var error: String

            /// A failure; for tests and tools that write traces.
            public init(recordID: CloudRecord.ID? = nil, zoneID: CloudRecord.ZoneID? = nil, error: String) {
                self.recordID = recordID
                self.zoneID = zoneID
                self.error = error
            }
        }

        /// A line of a call, numbered and timed when it is written; for tests and tools that write traces.
        public init(client: String, call: String) {
            format = 1
            sequence = 0
            time = 0
            self.client = client
            self.call = call
        }

        /// Replaces each value of each record with one of the same type and size that says nothing.
        mutating func redactValues() {
            saving = saving?.map(Self.redacted)
            received = received?.map(Self.redacted)
        }

        /// The record with each field's value redacted, but for the engine's edit times (``SyncMetadataFields``):
        /// they are when the user edited, not what, and a replay resolves conflicts by them as the device did.
        static func redacted(_ record: CloudRecord) -> CloudRecord {
            var redacted = record
            for name in record.fields.names where !SyncMetadataFields.isMetadata(name) {
                redacted[name] = record[name].map(Self.redacted)
            }
            // A share's participants are people: their names and addresses stay out.
            redacted.shareContents = nil
            return redacted
        }

        static func redacted(_ value: CloudValue) -> CloudValue {
            switch value {
            case .string(let text): .string(String(repeating: "x", count: text.utf8.count))
            case .int64: .int64(0)
            case .double: .double(0)
            case .date: .date(Date(timeIntervalSince1970: 0))
            case .bytes(let data): .bytes(Data(count: data.count))
            case .reference: value
            case .asset(let asset): .asset(redacted(asset))
            case .location: .location(CloudLocation(latitude: 0, longitude: 0))
            case .stringList(let texts): .stringList(texts.map { String(repeating: "x", count: $0.utf8.count) })
            case .int64List(let numbers): .int64List(numbers.map { _ in 0 })
            case .doubleList(let numbers): .doubleList(numbers.map { _ in 0 })
            case .dateList(let dates): .dateList(dates.map { _ in Date(timeIntervalSince1970: 0) })
            case .bytesList(let list): .bytesList(list.map { Data(count: $0.count) })
            case .referenceList: value
            case .assetList(let assets): .assetList(assets.map(redacted))
            case .locationList(let locations):
                .locationList(locations.map { _ in CloudLocation(latitude: 0, longitude: 0) })
            }
        }

        /// An asset as its size only: neither its contents nor the local path nor the server's URLs.
        private static func redacted(_ asset: CloudAsset) -> CloudAsset {
            CloudAsset(size: asset.size ?? asset.data.map { Int64($0.count) }, fileChecksum: nil)
        }
    }
}
