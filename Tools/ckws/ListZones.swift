import ArgumentParser
import Foundation
import NestedCloudKitCodable

/// `ckws zones`: the database's zones.
struct ListZones: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "zones", abstract: "List the database's zones.")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.withDatabase { database in
            let zones = try await database.allRecordZones()
            if connection.json {
                let names = zones.map { ["zoneName": $0.zoneName, "ownerRecordName": $0.ownerName] }
                let data = try JSONSerialization.data(
                    withJSONObject: ["zones": names], options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                for zone in zones { print(zone.zoneName) }
            }
        }
    }
}
