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

        let encode = try harness.median { _ = try CloudKitWebServicesJSON.data(for: records) }
        let handEncode = try harness.median { _ = try HandWrittenWire.data(for: records) }
        let modelEncode = try harness.median { _ = try JSONEncoder().encode(campus) }
        let modelJSON = try JSONEncoder().encode(campus)
        let decode = try harness.median { _ = try CloudKitWebServicesJSON.records(from: data) }
        let handDecode = try harness.median { _ = try HandWrittenWire.records(from: data) }
        let modelDecode = try harness.median { _ = try JSONDecoder().decode(Campus.self, from: modelJSON) }
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
                        "value": ["recordName": reference.recordID.recordName, "action": "DELETE_SELF"],
                    ]
                case .referenceList(let list):
                    fields[name] = [
                        "type": "REFERENCE_LIST",
                        "value": list.map { ["recordName": $0.recordID.recordName, "action": "DELETE_SELF"] },
                    ]
                default: break
                }
            }
            return ["recordName": record.id.recordName, "recordType": record.recordType, "fields": fields]
        }
        return try JSONSerialization.data(withJSONObject: ["records": objects], options: [.sortedKeys])
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
                case "INT64": record[field] = (item["value"] as? Int64).map(CloudValue.int64)
                case "TIMESTAMP":
                    record[field] = (item["value"] as? Double).map { .date(Date(timeIntervalSince1970: $0 / 1000)) }
                case "LOCATION":
                    let value = item["value"] as? [String: Double] ?? [:]
                    record[field] = .location(
                        CloudLocation(latitude: value["latitude"] ?? 0, longitude: value["longitude"] ?? 0))
                case "REFERENCE":
                    let value = item["value"] as? [String: String] ?? [:]
                    record[field] = .reference(
                        CloudReference(
                            recordID: CloudRecord.ID(recordName: value["recordName"] ?? ""), action: .deleteSelf))
                case "REFERENCE_LIST":
                    let list = item["value"] as? [[String: String]] ?? []
                    record[field] = .referenceList(
                        list.map {
                            CloudReference(
                                recordID: CloudRecord.ID(recordName: $0["recordName"] ?? ""), action: .deleteSelf)
                        })
                default: break
                }
            }
            return record
        }
    }
}
