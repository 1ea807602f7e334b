import Foundation
import NestedCloudKitCodable

/// Reads one field's value of a record a client saves, by the type the client gave it (``CloudValue/Kind``'s wire
/// names): every error names the record and the field, and says what the type needs.
struct WireFieldReader {
    let coding: WireCoding
    /// The wire type: a ``CloudValue/Kind`` raw value, or ``WireCoding/unknownList``.
    let type: String
    let field: String
    let record: String
    /// The value the record holds, whose assets a save may send back as they were fetched: their bytes were read
    /// beforehand (`RecordsEndpoint` reads them off the cooperative pool), so that reading a field reads no file.
    let current: CloudValue?

    func read(_ value: JSONValue) throws(ServerError) -> CloudValue {
        if type == WireCoding.unknownList {
            guard try list(value).isEmpty else { throw bad("\(WireCoding.unknownList) is only for an empty list") }
            return .stringList([])
        }
        guard let kind = CloudValue.Kind(rawValue: type) else { throw bad("unknown type \(type)") }
        switch kind {
        case .string: return .string(try string(value))
        case .int64: return .int64(try number(value))
        case .double: return .double(try double(value))
        case .date: return .date(WireCoding.date(milliseconds: try number(value)))
        case .bytes: return .bytes(try bytes(value))
        case .reference: return .reference(try reference(value))
        case .location: return .location(try location(value))
        case .asset: return .asset(try asset(value, index: nil))
        case .stringList: return .stringList(try list(value).map { (item) throws(ServerError) in try string(item) })
        case .int64List: return .int64List(try list(value).map { (item) throws(ServerError) in try number(item) })
        case .doubleList: return .doubleList(try list(value).map { (item) throws(ServerError) in try double(item) })
        case .dateList:
            return .dateList(
                try list(value).map { (item) throws(ServerError) in WireCoding.date(milliseconds: try number(item)) })
        case .bytesList: return .bytesList(try list(value).map { (item) throws(ServerError) in try bytes(item) })
        case .referenceList:
            return .referenceList(try list(value).map { (item) throws(ServerError) in try reference(item) })
        case .locationList:
            return .locationList(try list(value).map { (item) throws(ServerError) in try location(item) })
        case .assetList:
            return .assetList(
                try list(value).enumerated().map { (pair) throws(ServerError) in try asset(pair.1, index: pair.0) })
        }
    }

    private func bad(_ what: String) -> ServerError {
        .badRequest("record \(record), field \(field): \(what)")
    }

    private func number(_ value: JSONValue) throws(ServerError) -> Int64 {
        guard let int = value.int64 else { throw bad("\(type) needs an integer, got \(value)") }
        return int
    }

    private func double(_ value: JSONValue) throws(ServerError) -> Double {
        guard let double = value.double else { throw bad("\(type) needs a number, got \(value)") }
        return double
    }

    private func string(_ value: JSONValue) throws(ServerError) -> String {
        guard let string = value.string else { throw bad("\(type) needs a string, got \(value)") }
        return string
    }

    private func bytes(_ value: JSONValue) throws(ServerError) -> Data {
        guard let data = Data(base64Encoded: try string(value)) else { throw bad("BYTES need base64") }
        return data
    }

    private func list(_ value: JSONValue) throws(ServerError) -> [JSONValue] {
        guard let list = value.array else { throw bad("\(type) needs a list") }
        return list
    }

    private func reference(_ value: JSONValue) throws(ServerError) -> CloudReference {
        guard let name = value["recordName"]?.string else { throw bad("a REFERENCE needs a recordName") }
        let action: CloudReference.Action
        switch value["action"]?.string ?? "NONE" {
        case "NONE": action = .none
        case "DELETE_SELF": action = .deleteSelf
        case "VALIDATE": action = .validate
        case let other: throw bad("unknown reference action \(other): NONE, DELETE_SELF or VALIDATE")
        }
        return CloudReference(
            recordID: CloudRecord.ID(recordName: name, zoneID: try coding.zoneID(value["zoneID"])), action: action)
    }

    private func location(_ value: JSONValue) throws(ServerError) -> CloudLocation {
        guard let latitude = value["latitude"]?.double, let longitude = value["longitude"]?.double else {
            throw bad("a LOCATION needs latitude and longitude")
        }
        func part(_ key: String, _ fallback: Double) -> Double { value[key]?.double ?? fallback }
        return CloudLocation(
            latitude: latitude, longitude: longitude, altitude: part("altitude", 0),
            horizontalAccuracy: part("horizontalAccuracy", 0), verticalAccuracy: part("verticalAccuracy", -1),
            course: part("course", -1), speed: part("speed", -1),
            timestamp: value["timestamp"]?.int64.map(WireCoding.date(milliseconds:))
        )
    }

    /// An asset: its bytes embedded (the admin API's import), an upload's receipt, or the asset the record holds
    /// sent back as it was fetched, if its checksum still matches.
    private func asset(_ value: JSONValue, index: Int?) throws(ServerError) -> CloudAsset {
        if coding.embedsAssetData, let text = value["data"]?.string, let data = Data(base64Encoded: text) {
            return CloudAsset(data: data)
        }
        if let receipt = value["receipt"]?.string {
            guard let data = coding.uploadedAsset(receipt) else {
                throw bad("no upload has receipt \(receipt): upload the bytes to a URL from assets/upload")
            }
            return CloudAsset(data: data)
        }
        let checksum = value["fileChecksum"]?.string
        let held: CloudAsset? =
            switch (current, index) {
            case (.asset(let asset)?, nil): asset
            case (.assetList(let list)?, let index?) where index < list.count: list[index]
            case (.assetList(let list)?, _):
                list.first { $0.data.map(WireCoding.checksum) == checksum }
            default: nil
            }
        if let held, let data = held.data, WireCoding.checksum(data) == checksum {
            return CloudAsset(data: data)
        }
        throw bad("an ASSETID needs the receipt of an upload (assets/upload), or the checksum of the asset held")
    }
}
