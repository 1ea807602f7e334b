import Foundation
import NestedCloudKitCodable

/// Prints a record and the records it references as a tree: each record's type, name and change tag, its
/// fields, and each reference followed into the record it points to. Shared by the example and `ckws`.
public struct RecordTreePrinter: Sendable {
    /// The records references may be followed into.
    public let records: [CloudRecord.ID: CloudRecord]

    /// Creates a printer that follows references into `records`.
    public init(records: [CloudRecord.ID: CloudRecord]) {
        self.records = records
    }

    /// The tree's lines, the root's heading first.
    public func lines(for root: CloudRecord) -> [String] {
        var lines = [heading(of: root)]
        var visiting: Set<CloudRecord.ID> = [root.id]
        appendFields(of: root, prefix: "", to: &lines, visiting: &visiting)
        return lines
    }

    private func heading(of record: CloudRecord) -> String {
        let tag = record.systemFields?.changeTag.map { "  (change tag \($0))" } ?? ""
        return "\(record.recordType) \"\(record.id.recordName)\"\(tag)"
    }

    private func appendFields(
        of record: CloudRecord, prefix: String, to lines: inout [String], visiting: inout Set<CloudRecord.ID>
    ) {
        for (index, (name, value)) in record.fields.enumerated() {
            let last = index == record.fields.count - 1
            let branch = prefix + (last ? "└─ " : "├─ ")
            let childPrefix = prefix + (last ? "   " : "│  ")
            switch value {
            case .reference(let reference):
                lines.append(branch + "\(name) → " + target(reference))
                appendTarget(reference, prefix: childPrefix, to: &lines, visiting: &visiting)
            case .referenceList(let references):
                lines.append(branch + "\(name) → \(references.count) references")
                for (position, reference) in references.enumerated() {
                    let lastReference = position == references.count - 1
                    lines.append(childPrefix + (lastReference ? "└─ " : "├─ ") + "[\(position)] " + target(reference))
                    appendTarget(
                        reference, prefix: childPrefix + (lastReference ? "   " : "│  "), to: &lines,
                        visiting: &visiting)
                }
            default:
                lines.append(branch + "\(name): " + describe(value))
            }
        }
    }

    private func target(_ reference: CloudReference) -> String {
        let action = reference.action == .none ? "" : "  [\(reference.action.rawValue)]"
        guard let record = records[reference.recordID] else {
            return "\"\(reference.recordID.recordName)\" (not loaded)\(action)"
        }
        return heading(of: record) + action
    }

    private func appendTarget(
        _ reference: CloudReference, prefix: String, to lines: inout [String], visiting: inout Set<CloudRecord.ID>
    ) {
        guard let record = records[reference.recordID], visiting.insert(record.id).inserted else { return }
        appendFields(of: record, prefix: prefix, to: &lines, visiting: &visiting)
        visiting.remove(record.id)
    }

    private func describe(_ value: CloudValue) -> String {
        switch value {
        case .string(let string): "\"\(string)\""
        case .int64(let int): "\(int)"
        case .double(let double): "\(double)"
        case .date(let date): Self.format(date)
        case .bytes(let data): "\(data.count) bytes"
        case .location(let location): "\(location.latitude), \(location.longitude)"
        case .asset(let asset): describe(asset)
        case .reference(let reference): reference.recordID.recordName
        case .stringList(let list): "[" + list.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        case .int64List(let list): "\(list)"
        case .doubleList(let list): "\(list)"
        case .dateList(let list): "[" + list.map(Self.format).joined(separator: ", ") + "]"
        case .assetList(let list): "[" + list.map(describe).joined(separator: ", ") + "]"
        case .bytesList(let list): "[" + list.map { "\($0.count) bytes" }.joined(separator: ", ") + "]"
        case .locationList(let list): "[" + list.map { "\($0.latitude), \($0.longitude)" }.joined(separator: "; ") + "]"
        case .referenceList(let list): list.map(\.recordID.recordName).joined(separator: ", ")
        }
    }

    private func describe(_ asset: CloudAsset) -> String {
        if let fileURL = asset.fileURL { return "asset at \(fileURL.path)" }
        let size = asset.size.map { " of \($0) bytes" } ?? asset.data.map { " of \($0.count) bytes" } ?? ""
        return "asset\(size)" + (asset.downloadURL.map { " at \($0)" } ?? "")
    }

    private static func format(_ date: Date) -> String {
        // Dates from a database are whole milliseconds and finite, which is what the formatter needs.
        guard date.timeIntervalSince1970.isFinite else { return "invalid date" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}
