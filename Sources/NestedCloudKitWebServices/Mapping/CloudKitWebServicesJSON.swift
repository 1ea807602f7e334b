import Foundation
import NestedCloudKitCodable

/// Records in CloudKit Web Services' JSON, for servers that pass records on as CloudKit JS and Web Services
/// clients expect them, and for tools that print them.
///
/// ```swift
/// let json = try CloudKitWebServicesJSON.data(for: records, prettyPrinted: true)
/// let same = try CloudKitWebServicesJSON.records(from: json)
/// ```
public enum CloudKitWebServicesJSON {
    /// A `{"records": [...]}` document: each record with its type, change tag, zone, `created` and `modified`
    /// and its typed fields. Keys are sorted, so the same records give the same bytes.
    ///
    /// It holds what the records know and nothing more, so records read from a response print as the server sent
    /// them: `created` and `modified` only with a date or a user, and a location's parts only where they differ
    /// from what a missing part reads as (horizontal accuracy 0; vertical accuracy, course and speed -1, unknown;
    /// altitude 0 without a vertical accuracy, since with one an altitude of 0 is sea level).
    ///
    /// - Throws: `EncodingError` for a value JSON can't carry: a number that isn't finite, a date beyond 275,000
    ///   years of 1970.
    public static func data(for records: [CloudRecord], prettyPrinted: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            prettyPrinted
            ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Document(records: records.map(WireRecord.init(exporting:))))
    }

    /// The records of a `{"records": [...]}` document; error dictionaries in it are skipped and unknown keys
    /// ignored. A record without a zone is in `zoneID`.
    public static func records(from data: Data, in zoneID: CloudRecord.ZoneID = .default) throws -> [CloudRecord] {
        let response = try JSONDecoder().decode(WireRecordsResponse.self, from: data)
        let owners = ZoneOwners(requested: zoneID, answers: [])
        return response.records.compactMap { $0.item?.cloudRecord(in: zoneID, owners: owners) }
    }

    private struct Document: Encodable {
        var records: [WireRecord]
    }
}

extension WireRecord {
    /// The whole record, system fields and zone included, as a response would carry it.
    init(exporting record: CloudRecord) {
        self.init(record, sendingChangeTag: true)
        fields = fields?.mapValues { WireField($0.value, exporting: true) }
        zoneID = WireZoneID(record.id.zoneID)
        if let system = record.systemFields {
            // Only what is known: an empty `created` says the server sent one, which it didn't.
            if system.creationDate != nil || system.creatorUserRecordName != nil {
                created = WireUserTimestamp(
                    timestamp: system.creationDate.map(WireTimestamp.milliseconds),
                    userRecordName: system.creatorUserRecordName,
                    deviceID: nil
                )
            }
            if system.modificationDate != nil || system.lastModifiedUserRecordName != nil
                || system.modifiedByDevice != nil
            {
                modified = WireUserTimestamp(
                    timestamp: system.modificationDate.map(WireTimestamp.milliseconds),
                    userRecordName: system.lastModifiedUserRecordName, deviceID: system.modifiedByDevice
                )
            }
        }
    }
}
