import Foundation
import NestedCloudKitCodable

/// What the change tokens of the databases that keep their own change log (in memory, SQLite) hold: a position in
/// a zone's log of record changes, or in the database's log of zone changes.
///
/// Shared so that both backends write and check tokens alike, with the same errors for a token that isn't theirs.
package struct ChangeLogPosition: Codable, Hashable, Sendable {
    /// The zone whose log this is a position in; `nil` for the database's log of zones.
    package var zoneID: CloudRecord.ZoneID?
    /// Which life of the log: a zone deleted and created again, or tokens expired, start a new one, and a position
    /// in an earlier life is expired.
    package var generation: Int
    /// The last change the position covers.
    package var sequence: Int

    package init(zoneID: CloudRecord.ZoneID?, generation: Int, sequence: Int) {
        self.zoneID = zoneID
        self.generation = generation
        self.sequence = sequence
    }

    private enum CodingKeys: String, CodingKey {
        case zoneName = "z", ownerName = "o", generation = "g", sequence = "s"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let zoneName = try container.decodeIfPresent(String.self, forKey: .zoneName) {
            let owner = try container.decode(String.self, forKey: .ownerName)
            zoneID = CloudRecord.ZoneID(zoneName: zoneName, ownerName: owner)
        } else {
            zoneID = nil
        }
        generation = try container.decode(Int.self, forKey: .generation)
        sequence = try container.decode(Int.self, forKey: .sequence)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(zoneID?.zoneName, forKey: .zoneName)
        try container.encodeIfPresent(zoneID?.ownerName, forKey: .ownerName)
        try container.encode(generation, forKey: .generation)
        try container.encode(sequence, forKey: .sequence)
    }

    /// The position as a token a client stores.
    package var token: CloudChangeToken {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding a struct of strings and integers can't fail; an empty token would only be refused when used.
        return CloudChangeToken(data: (try? encoder.encode(self)) ?? Data())
    }

    /// Reads a token this kind of database made for `zoneID` (`nil`: for the database's log of zones).
    ///
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a token another database made, or made for
    ///   another zone: a client mixing up its stored tokens, which no retry would fix.
    package init(token: CloudChangeToken, for zoneID: CloudRecord.ZoneID?) throws {
        guard let position = try? JSONDecoder().decode(Self.self, from: token.data), position.sequence >= 0 else {
            throw CloudDatabaseError.invalidArguments(
                "the change token wasn't made by this kind of database: pass the token this database returned, "
                    + "or nil to fetch every change")
        }
        guard position.zoneID == zoneID else {
            let madeFor = position.zoneID.map { "zone \($0.zoneName)" } ?? "the database's zone changes"
            let usedFor = zoneID.map { "zone \($0.zoneName)" } ?? "the database's zone changes"
            throw CloudDatabaseError.invalidArguments(
                "the change token was made for \(madeFor), not \(usedFor): keep one token per zone, and one for "
                    + "the database")
        }
        self = position
    }
}
