import Foundation
import NestedCloudKitCodable
import NestedCloudKitWebServices

/// The Web Services wire format: the campus graph's records to CloudKit's JSON and back, against a hand-written
/// mapping through `JSONSerialization` (what a user without this package writes; the target), and, for scale,
/// against `JSONEncoder` and `JSONDecoder` on the model itself: plain JSON of the same data, a fifth of the bytes,
/// with no type tags and no record per value, so no target.
extension Workloads {
    func webServices() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let records = try CKRecordEncoder().encodeRecords(campus)
        let data = try CloudKitWebServicesJSON.data(for: records)

        let modelJSON = try JSONEncoder().encode(campus)
        // Each side reads what the other writes, and both read the records that were written.
        let fields = { (records: [CloudRecord]) in
            records.map { record in
                [record.id.recordName: Dictionary(uniqueKeysWithValues: record.fields.map { ($0.name, $0.value) })]
            }
        }
        try BenchmarkCheck.same(
            fields(try HandWrittenWire.records(from: data)), fields(records), "webservices.encode",
            baseline: "hand-written JSONSerialization")
        try BenchmarkCheck.same(
            fields(try CloudKitWebServicesJSON.records(from: try HandWrittenWire.data(for: records))), fields(records),
            "webservices.decode", baseline: "hand-written JSONSerialization")
        try BenchmarkCheck.same(
            try JSONDecoder().decode(Campus.self, from: modelJSON), campus, "webservices", baseline: "JSONEncoder")
        let encodes = try harness.interleavedMedians([
            { blackHole(try CloudKitWebServicesJSON.data(for: records)) },
            { blackHole(try HandWrittenWire.data(for: records)) },
            { blackHole(try JSONEncoder().encode(campus)) },
        ])
        let decodes = try harness.interleavedMedians([
            { blackHole(try CloudKitWebServicesJSON.records(from: data)) },
            { blackHole(try HandWrittenWire.records(from: data)) },
            { blackHole(try JSONDecoder().decode(Campus.self, from: modelJSON)) },
        ])
        let (encode, handEncode, modelEncode) = (encodes[0], encodes[1], encodes[2])
        let (decode, handDecode, modelDecode) = (decodes[0], decodes[1], decodes[2])
        let details = [("records", records.count), ("bytes", data.count), ("model_json_bytes", modelJSON.count)]
        return [
            BenchmarkResult(
                name: "webservices.encode", ours: encode, baseline: "hand-written JSONSerialization",
                baselineSeconds: handEncode, target: 1.5, details: details),
            BenchmarkResult(
                name: "webservices.encode", ours: encode, baseline: "JSONEncoder (model)", baselineSeconds: modelEncode,
                target: .infinity),
            BenchmarkResult(
                name: "webservices.decode", ours: decode, baseline: "hand-written JSONSerialization",
                baselineSeconds: handDecode, target: 1.5),
            BenchmarkResult(
                name: "webservices.decode", ours: decode, baseline: "JSONDecoder (model)", baselineSeconds: modelDecode,
                target: .infinity),
        ]
    }
}

/// The Web Services JSON of the benchmark's records, written by hand for the field types they use.
enum HandWrittenWire {
    static func data(for records: [CloudRecord]) throws -> Data {
        let objects: [[String: Any]] = records.map { record in
            var fields: [String: Any] = [:]
            for (name, value) in record.fields {
                switch value {
                case .string(let string): fields[name] = ["type": "STRING", "value": string]
                case .int64(let int): fields[name] = ["type": "INT64", "value": int]
                case .date(let date):
                    fields[name] = ["type": "TIMESTAMP", "value": Int64(date.timeIntervalSince1970 * 1000)]
                case .location(let location):
                    fields[name] = [
                        "type": "LOCATION", "value": ["latitude": location.latitude, "longitude": location.longitude],
                    ]
                case .reference(let reference):
                    fields[name] = [
                        "type": "REFERENCE",
                        "value": ["recordName": reference.recordID.recordName, "action": action(reference)],
                    ]
                case .referenceList(let list):
                    fields[name] = [
                        "type": "REFERENCE_LIST",
                        "value": list.map { ["recordName": $0.recordID.recordName, "action": action($0)] },
                    ]
                default: break
                }
            }
            return ["recordName": record.id.recordName, "recordType": record.recordType, "fields": fields]
        }
        return try JSONSerialization.data(withJSONObject: ["records": objects], options: [.sortedKeys])
    }

    private static func action(_ reference: CloudReference) -> String {
        reference.action == .deleteSelf ? "DELETE_SELF" : "NONE"
    }

    private static func action(_ name: String?) -> CloudReference.Action {
        name == "DELETE_SELF" ? .deleteSelf : .none
    }

    static func records(from data: Data) throws -> [CloudRecord] {
        let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let objects = document["records"] as? [[String: Any]] ?? []
        return objects.compactMap { object in
            guard let name = object["recordName"] as? String, let type = object["recordType"] as? String else {
                return nil
            }
            var record = CloudRecord(recordType: type, id: CloudRecord.ID(recordName: name))
            for (field, item) in object["fields"] as? [String: [String: Any]] ?? [:] {
                switch item["type"] as? String {
                case "STRING": record[field] = (item["value"] as? String).map(CloudValue.string)
                // Numbers come as NSNumber, which bridges to the width asked for only when it holds that width.
                case "INT64": record[field] = (item["value"] as? NSNumber).map { .int64($0.int64Value) }
                case "TIMESTAMP":
                    record[field] = (item["value"] as? NSNumber).map {
                        .date(Date(timeIntervalSince1970: $0.doubleValue / 1000))
                    }
                case "LOCATION":
                    let value = item["value"] as? [String: NSNumber] ?? [:]
                    record[field] = .location(
                        CloudLocation(
                            latitude: value["latitude"]?.doubleValue ?? 0,
                            longitude: value["longitude"]?.doubleValue ?? 0))
                case "REFERENCE":
                    let value = item["value"] as? [String: Any] ?? [:]
                    record[field] = .reference(
                        CloudReference(
                            recordID: CloudRecord.ID(recordName: value["recordName"] as? String ?? ""),
                            action: action(value["action"] as? String)))
                case "REFERENCE_LIST":
                    let list = item["value"] as? [[String: Any]] ?? []
                    record[field] = .referenceList(
                        list.map {
                            CloudReference(
                                recordID: CloudRecord.ID(recordName: $0["recordName"] as? String ?? ""),
                                action: action($0["action"] as? String))
                        })
                default: break
                }
            }
            return record
        }
    }
}
