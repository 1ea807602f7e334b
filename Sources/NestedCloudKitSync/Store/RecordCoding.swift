import Foundation
import GRDB
import NestedCloudKitCodable

/// The store's encoding of a record: a compact binary form, read and written by hand.
///
/// Reading records is the hot path of every screen of an app, and a record's `Codable` JSON form decodes an
/// order of magnitude slower (a keyed container per value). This form is a version byte, then length-prefixed
/// strings and fixed-width numbers; a record reads back exactly as written: dates as `Date` holds them (seconds
/// since 2001, to the bit), every system field, encrypted and cleared field names, the parent and a share's state.
/// Rows written by earlier versions of the store hold JSON, which starts with `{`, or the form before sharing
/// (version byte `0xB1`), and still read.
enum RecordCoding {
    /// The first byte of this form; JSON never starts with it.
    static let version: UInt8 = 0xB2
    /// The first byte of the form before sharing, which ends after the system fields; still read.
    static let versionBeforeSharing: UInt8 = 0xB1

    static func encode(_ record: CloudRecord) -> Data {
        var writer = ByteWriter()
        writer.byte(version)
        writer.string(record.recordType)
        writer.string(record.id.recordName)
        writer.zone(record.id.zoneID)
        writer.count(record.fields.count)
        for (name, value) in record.fields {
            writer.string(name)
            writer.byte(record.encryptedFieldNames.contains(name) ? 1 : 0)
            writer.value(value, zone: record.id.zoneID)
        }
        writer.count(record.clearedFieldNames.count)
        for name in record.clearedFieldNames { writer.string(name) }
        if let system = record.systemFields {
            writer.byte(1)
            writer.optionalString(system.changeTag)
            writer.optionalDate(system.creationDate)
            writer.optionalString(system.creatorUserRecordName)
            writer.optionalDate(system.modificationDate)
            writer.optionalString(system.lastModifiedUserRecordName)
            writer.optionalString(system.modifiedByDevice)
            writer.optionalBytes(system.archivedData)
        } else {
            writer.byte(0)
        }
        writeSharing(of: record, to: &writer)
        return Data(writer.bytes)
    }

    /// What a record has for sharing, after everything else: a byte of flags (0 for most records), then the
    /// parent's ID, the share's ID and a share record's state (as JSON: shares are few, and their state nested).
    /// The byte is always there, so that bytes cut short before it are an error, not a record without a parent.
    private static func writeSharing(of record: CloudRecord, to writer: inout ByteWriter) {
        let shareID = record.systemFields?.shareID
        // A share's state is strings, a URL and enums, which JSON always encodes.
        let contents = record.shareContents.flatMap { try? JSONEncoder().encode($0) }
        let flags: UInt8 = (record.parentID != nil ? 1 : 0) | (shareID != nil ? 2 : 0) | (contents != nil ? 4 : 0)
        writer.byte(flags)
        for id in [record.parentID, shareID].compactMap(\.self) {
            writer.string(id.recordName)
            writer.zone(id.zoneID)
        }
        if let contents { writer.optionalBytes(contents) }
    }

    private static func readSharing(into record: inout CloudRecord, from reader: inout ByteReader) throws {
        let flags = try reader.byte()
        if flags & 1 != 0 {
            record.parentID = CloudRecord.ID(recordName: try reader.string(), zoneID: try reader.zone())
        }
        if flags & 2 != 0 {
            let shareID = CloudRecord.ID(recordName: try reader.string(), zoneID: try reader.zone())
            // A server-set field: the record has system fields whenever it has a share.
            var system = record.systemFields ?? CloudRecord.SystemFields()
            system.shareID = shareID
            record.systemFields = system
        }
        if flags & 4 != 0, let contents = try reader.optionalBytes() {
            do {
                record.shareContents = try JSONDecoder().decode(CloudShare.Contents.self, from: contents)
            } catch {
                throw SyncError.store(
                    "a stored share can't be read (\(error)); the store file is damaged", underlying: error)
            }
        }
    }

    /// The strings most records of a read share (their type and zone), kept from one record to the next so that
    /// each record reuses them instead of allocating its own: a zone name is longer than a string stored inline.
    /// One per read; not shared between threads.
    final class SharedStrings {
        var recordType = ""
        var zoneName = ""
        var ownerName = ""
    }

    /// The record in a row's column, read in place (no copy of its bytes).
    static func decode(_ row: Row, column: Int, sharing shared: SharedStrings? = nil) throws -> CloudRecord {
        try row.withUnsafeData(atIndex: column) { data in
            guard let data else { throw SyncError.store("a stored record is missing; the store file is damaged") }
            return try decode(data, sharing: shared)
        }
    }

    static func decode(_ data: Data, sharing shared: SharedStrings? = nil) throws -> CloudRecord {
        let first = data.first
        guard first == version || first == versionBeforeSharing else {
            // A row of the first layout.
            do {
                return try JSONDecoder().decode(CloudRecord.self, from: data)
            } catch {
                throw SyncError.store(
                    "a stored record can't be read (\(error)); the store file is damaged", underlying: error)
            }
        }
        return try data.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer: buffer, position: 1)
            let shared = shared ?? SharedStrings()
            let recordType = try reader.string(reusing: &shared.recordType)
            let recordName = try reader.string()
            let zoneName = try reader.string(reusing: &shared.zoneName)
            let zone = CloudRecord.ZoneID(zoneName: zoneName, ownerName: try reader.string(reusing: &shared.ownerName))
            let id = CloudRecord.ID(recordName: recordName, zoneID: zone)
            let fieldCount = try reader.count()
            var fields = CloudRecord.Fields()
            fields.reserveCapacity(fieldCount)
            var encrypted: [String] = []
            for _ in 0..<fieldCount {
                let name = try reader.string()
                if try reader.byte() == 1 { encrypted.append(name) }
                // The names were a record's, so they are distinct: no need to look each up before adding it.
                fields.appendNew(try reader.value(zone: zone), named: name)
            }
            var record = CloudRecord(recordType: recordType, id: id, fields: fields)
            if !encrypted.isEmpty { record.setEncrypted(true, fieldsNamed: encrypted) }
            let clearedCount = try reader.count()
            for _ in 0..<clearedCount { record.clearedFieldNames.append(try reader.string()) }
            if try reader.byte() == 1 {
                record.systemFields = CloudRecord.SystemFields(
                    changeTag: try reader.optionalString(), creationDate: try reader.optionalDate(),
                    creatorUserRecordName: try reader.optionalString(), modificationDate: try reader.optionalDate(),
                    lastModifiedUserRecordName: try reader.optionalString(),
                    modifiedByDevice: try reader.optionalString(), archivedData: try reader.optionalBytes())
            }
            if first == version { try readSharing(into: &record, from: &reader) }
            return record
        }
    }
}

/// Value tags of ``RecordCoding``; stored, so never renumbered.
private enum ValueTag: UInt8 {
    case string = 1, int64, double, date, bytes, reference, asset, location
    case stringList = 17, int64List, doubleList, dateList, bytesList, referenceList, assetList, locationList

    /// The tag of a value of the kind.
    init(_ kind: CloudValue.Kind) {
        switch kind {
        case .string: self = .string
        case .int64: self = .int64
        case .double: self = .double
        case .date: self = .date
        case .bytes: self = .bytes
        case .reference: self = .reference
        case .asset: self = .asset
        case .location: self = .location
        case .stringList: self = .stringList
        case .int64List: self = .int64List
        case .doubleList: self = .doubleList
        case .dateList: self = .dateList
        case .bytesList: self = .bytesList
        case .referenceList: self = .referenceList
        case .assetList: self = .assetList
        case .locationList: self = .locationList
        }
    }
}

private struct ByteWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func count(_ value: Int) { varint(UInt64(value)) }

    mutating func int64(_ value: Int64) {
        // Zigzag, so small negative numbers stay short.
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func double(_ value: Double) {
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            count(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func data(_ value: Data) {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    /// An optional: a byte saying whether it's there, then the value if it is.
    mutating func optionalValue<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        if let value {
            byte(1)
            write(&self, value)
        } else {
            byte(0)
        }
    }

    mutating func optionalString(_ value: String?) { optionalValue(value) { $0.string($1) } }

    mutating func optionalDate(_ value: Date?) { optionalValue(value) { $0.double($1.timeIntervalSinceReferenceDate) } }

    mutating func optionalBytes(_ value: Data?) { optionalValue(value) { $0.data($1) } }

    mutating func zone(_ zone: CloudRecord.ZoneID) {
        string(zone.zoneName)
        string(zone.ownerName)
    }

    /// A reference: its record name, and its zone only when it isn't the holder's (CloudKit references stay in
    /// their zone, so it almost never is).
    mutating func reference(_ reference: CloudReference, zone: CloudRecord.ZoneID) {
        let sameZone = reference.recordID.zoneID == zone
        let action: UInt8 =
            switch reference.action {
            case .none: 0
            case .deleteSelf: 1
            case .validate: 2
            }
        byte(action | (sameZone ? 0 : 0x10))
        string(reference.recordID.recordName)
        if !sameZone { self.zone(reference.recordID.zoneID) }
    }

    mutating func asset(_ asset: CloudAsset) {
        optionalString(asset.fileURL?.absoluteString)
        optionalBytes(asset.data)
        optionalValue(asset.size) { $0.int64($1) }
        optionalString(asset.fileChecksum)
        optionalString(asset.referenceChecksum)
        optionalString(asset.wrappingKey)
        optionalString(asset.receipt)
        optionalString(asset.downloadURL)
    }

    mutating func location(_ location: CloudLocation) {
        for part in [
            location.latitude, location.longitude, location.altitude, location.horizontalAccuracy,
            location.verticalAccuracy, location.course, location.speed,
        ] {
            double(part)
        }
        optionalDate(location.timestamp)
    }

    /// A list: its count, then its elements; what `ByteReader.list(_:)` reads.
    mutating func list<T>(_ values: [T], _ element: (inout ByteWriter, T) -> Void) {
        count(values.count)
        for value in values { element(&self, value) }
    }

    /// A value: its type's tag, then its contents; what `ByteReader.value(zone:)` reads.
    mutating func value(_ value: CloudValue, zone: CloudRecord.ZoneID) {
        byte(ValueTag(value.kind).rawValue)
        switch value {
        case .string(let value): string(value)
        case .int64(let value): int64(value)
        case .double(let value): double(value)
        case .date(let value): double(value.timeIntervalSinceReferenceDate)
        case .bytes(let value): data(value)
        case .reference(let value): reference(value, zone: zone)
        case .asset(let value): asset(value)
        case .location(let value): location(value)
        case .stringList(let values): list(values) { $0.string($1) }
        case .int64List(let values): list(values) { $0.int64($1) }
        case .doubleList(let values): list(values) { $0.double($1) }
        case .dateList(let values): list(values) { $0.double($1.timeIntervalSinceReferenceDate) }
        case .bytesList(let values): list(values) { $0.data($1) }
        case .referenceList(let values): list(values) { $0.reference($1, zone: zone) }
        case .assetList(let values): list(values) { $0.asset($1) }
        case .locationList(let values): list(values) { $0.location($1) }
        }
    }
}

/// Reads ``RecordCoding``'s form; every read is bounds-checked, so damaged bytes are an error, never a crash.
private struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var position: Int

    private static func damaged(_ what: String) -> SyncError {
        .store("a stored record can't be read (\(what)); the store file is damaged")
    }

    mutating func byte() throws -> UInt8 {
        guard position < buffer.count else { throw Self.damaged("it ends early") }
        defer { position += 1 }
        return buffer[position]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw Self.damaged("a number is too long") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(buffer.count - position) else { throw Self.damaged("a length is past its end") }
        return Int(value)
    }

    mutating func int64() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func double() throws -> Double {
        guard buffer.count - position >= 8 else { throw Self.damaged("it ends early") }
        var bits: UInt64 = 0
        withUnsafeMutableBytes(of: &bits) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[position..<position + 8]))
        }
        position += 8
        return Double(bitPattern: UInt64(littleEndian: bits))
    }

    mutating func string() throws -> String {
        let length = try count()
        defer { position += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[position..<position + length]), as: UTF8.self)
    }

    /// A string, or `known` itself when it holds the same bytes (then nothing is allocated); `known` becomes the
    /// string read.
    mutating func string(reusing known: inout String) throws -> String {
        let length = try count()
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[position..<position + length])
        position += length
        if known.utf8.count == length,
            known.utf8.withContiguousStorageIfAvailable({ $0.elementsEqual(bytes) }) == true
        {
            return known
        }
        known = String(decoding: bytes, as: UTF8.self)
        return known
    }

    mutating func data() throws -> Data {
        let length = try count()
        defer { position += length }
        return Data(UnsafeRawBufferPointer(rebasing: buffer[position..<position + length]))
    }

    mutating func optionalString() throws -> String? { try byte() == 1 ? try string() : nil }

    mutating func optionalDate() throws -> Date? {
        try byte() == 1 ? Date(timeIntervalSinceReferenceDate: try double()) : nil
    }

    mutating func optionalBytes() throws -> Data? { try byte() == 1 ? try data() : nil }

    mutating func zone() throws -> CloudRecord.ZoneID {
        let name = try string()
        return CloudRecord.ZoneID(zoneName: name, ownerName: try string())
    }

    mutating func reference(zone: CloudRecord.ZoneID) throws -> CloudReference {
        let flags = try byte()
        let action: CloudReference.Action
        switch flags & 0x0F {
        case 0: action = .none
        case 1: action = .deleteSelf
        case 2: action = .validate
        default: throw Self.damaged("a reference action is unknown")
        }
        let name = try string()
        let target = flags & 0x10 == 0 ? zone : try self.zone()
        return CloudReference(recordID: CloudRecord.ID(recordName: name, zoneID: target), action: action)
    }

    mutating func asset() throws -> CloudAsset {
        let url = try optionalString()
        let data = try optionalBytes()
        let size = try byte() == 1 ? try int64() : nil
        var asset = CloudAsset(
            size: size, fileChecksum: try optionalString(), referenceChecksum: try optionalString(),
            wrappingKey: try optionalString(), receipt: try optionalString(), downloadURL: try optionalString())
        asset.fileURL = url.flatMap(URL.init(string:))
        asset.data = data
        return asset
    }

    mutating func location() throws -> CloudLocation {
        var parts: [Double] = []
        for _ in 0..<7 { parts.append(try double()) }
        var location = CloudLocation(latitude: parts[0], longitude: parts[1])
        location.altitude = parts[2]
        location.horizontalAccuracy = parts[3]
        location.verticalAccuracy = parts[4]
        location.course = parts[5]
        location.speed = parts[6]
        location.timestamp = try optionalDate()
        return location
    }

    mutating func list<T>(_ element: (inout ByteReader) throws -> T) throws -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try element(&self)) }
        return values
    }

    mutating func value(zone: CloudRecord.ZoneID) throws -> CloudValue {
        let raw = try byte()
        guard let tag = ValueTag(rawValue: raw) else { throw Self.damaged("a value's type \(raw) is unknown") }
        switch tag {
        case .string: return .string(try string())
        case .int64: return .int64(try int64())
        case .double: return .double(try double())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try double()))
        case .bytes: return .bytes(try data())
        case .reference: return .reference(try reference(zone: zone))
        case .asset: return .asset(try asset())
        case .location: return .location(try location())
        case .stringList: return .stringList(try list { try $0.string() })
        case .int64List: return .int64List(try list { try $0.int64() })
        case .doubleList: return .doubleList(try list { try $0.double() })
        case .dateList: return .dateList(try list { Date(timeIntervalSinceReferenceDate: try $0.double()) })
        case .bytesList: return .bytesList(try list { try $0.data() })
        case .referenceList: return .referenceList(try list { try $0.reference(zone: zone) })
        case .assetList: return .assetList(try list { try $0.asset() })
        case .locationList: return .locationList(try list { try $0.location() })
        }
    }
}
