import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// The store's binary form of records: every value reads back exactly, and damaged bytes are an error, never a
/// crash.
@Suite("Store: the binary form of records")
struct RecordCodingTests {
    static func everyKind() -> CloudRecord {
        let zone = CloudRecord.ZoneID(zoneName: "Zone", ownerName: "owner")
        let other = CloudRecord.ZoneID(zoneName: "Other", ownerName: "someone")
        var record = CloudRecord(recordType: "Everything", id: CloudRecord.ID(recordName: "é-1", zoneID: zone))
        var location = CloudLocation(latitude: 48.85, longitude: 2.35)
        location.altitude = 35
        location.timestamp = Date(timeIntervalSinceReferenceDate: 0.1)
        var asset = CloudAsset(size: 3, fileChecksum: "sum", downloadURL: "https://example.com/a")
        asset.fileURL = URL(fileURLWithPath: "/tmp/a file.png")
        record["string"] = .string("日本 \"quoted\" \n")
        record["int"] = .int64(-9_223_372_036_854_775_808)
        record["double"] = .double(.nan)
        record["date"] = .date(Date(timeIntervalSinceReferenceDate: 0.1))
        record["bytes"] = .bytes(Data([0, 1, 255]))
        record["reference"] = .reference(
            CloudReference(recordID: CloudRecord.ID(recordName: "r", zoneID: zone), action: .deleteSelf))
        record["asset"] = .asset(asset)
        record["location"] = .location(location)
        record["strings"] = .stringList(["", "a"])
        record["ints"] = .int64List([Int64.max, 0])
        record["doubles"] = .doubleList([-0.0, .infinity])
        record["dates"] = .dateList([Date(timeIntervalSince1970: -1)])
        record["bytesList"] = .bytesList([Data(), Data([7])])
        record["references"] = .referenceList([
            CloudReference(recordID: CloudRecord.ID(recordName: "x", zoneID: other), action: .validate)
        ])
        record["assets"] = .assetList([CloudAsset(data: Data([1, 2]))])
        record["locations"] = .locationList([location])
        record[encrypted: "secret"] = .string("hidden")
        record.systemFields = CloudRecord.SystemFields(
            changeTag: "t1", creationDate: Date(timeIntervalSinceReferenceDate: 0.3), creatorUserRecordName: "u",
            modificationDate: Date(timeIntervalSinceReferenceDate: 7.7), lastModifiedUserRecordName: "v",
            modifiedByDevice: "d", archivedData: Data([9]))
        record["cleared"] = nil
        record.parentID = CloudRecord.ID(recordName: "parent", zoneID: zone)
        record.systemFields?.shareID = CloudRecord.ID(recordName: "share", zoneID: zone)
        return record
    }

    @Test func aShareReadsBackWithItsState() throws {
        var share = try CloudShare(
            rootRecordID: CloudRecord.ID(recordName: "list", zoneID: CloudRecord.ZoneID(zoneName: "Lists")))
        share.title = "Groceries"
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        share.publicPermission = .readOnly  // a share the server refuses, but the store keeps what a record holds
        #expect(try RecordCoding.decode(RecordCoding.encode(share.record)) == share.record)
    }

    @Test func aRecordWrittenBeforeSharingExistedStillReads() throws {
        var plain = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "milk"), fields: ["n": .int64(1)])
        plain.systemFields = CloudRecord.SystemFields(changeTag: "t1")
        // The form before sharing: this one's bytes, without the final flags byte, under the former version byte.
        var bytes = [UInt8](RecordCoding.encode(plain))
        #expect(bytes.removeLast() == 0)
        bytes[0] = RecordCoding.versionBeforeSharing
        #expect(try RecordCoding.decode(Data(bytes)) == plain)
    }

    @Test func everyValueReadsBackExactly() throws {
        let record = Self.everyKind()
        let decoded = try RecordCoding.decode(RecordCoding.encode(record))
        // NaN is never equal to itself: compare the rest, then its bits.
        var withoutNaN = record
        withoutNaN["double"] = nil
        var decodedWithoutNaN = decoded
        decodedWithoutNaN["double"] = nil
        #expect(decodedWithoutNaN == withoutNaN)
        guard case .double(let nan)? = decoded["double"] else {
            Issue.record("the double is gone")
            return
        }
        #expect(nan.isNaN)
        #expect(decoded.encryptedFieldNames == ["secret"])
        #expect(decoded.clearedFieldNames == ["cleared"])
        #expect(decoded.fields.names == record.fields.names)
    }

    @Test func damagedBytesAreAnErrorNeverACrash() throws {
        let bytes = [UInt8](RecordCoding.encode(Self.everyKind()))
        for length in 0..<bytes.count {
            #expect(throws: SyncError.self) {
                try RecordCoding.decode(Data([RecordCoding.version] + bytes[1..<max(1, length)]))
            }
        }
        var random = SplitMix64(seed: 24)
        for round in 0..<2_000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(random.next() % 4)) {
                damaged[1 + Int(random.next() % UInt64(damaged.count - 1))] = UInt8(truncatingIfNeeded: random.next())
            }
            do {
                _ = try RecordCoding.decode(Data(damaged))
            } catch let error as SyncError {
                guard error.code == .store else {
                    Issue.record("round \(round) (seed 24): \(error)")
                    continue
                }
            } catch {
                Issue.record("round \(round) (seed 24): \(error)")
            }
        }
    }
}
