import Foundation
import NestedCloudKitCodable

/// A field a query filters or sorts on: a record's own field, or a system field by the name Web Services gives it
/// (`systemFieldName`, or `fieldName` spelled `___recordID`, `___createTime`, `___modTime`, `___createdBy`,
/// `___modifiedBy`).
struct QueryField: Sendable, Hashable {
    enum System: String, Sendable, CaseIterable {
        case recordName = "___recordID"
        case createdTimestamp = "___createTime"
        case modifiedTimestamp = "___modTime"
        case createdUserRecordName = "___createdBy"
        case modifiedUserRecordName = "___modifiedBy"

        init?(systemFieldName: String) {
            switch systemFieldName {
            case "recordName": self = .recordName
            case "createdTimestamp": self = .createdTimestamp
            case "modifiedTimestamp": self = .modifiedTimestamp
            case "createdUserRecordName": self = .createdUserRecordName
            case "modifiedUserRecordName": self = .modifiedUserRecordName
            default: return nil
            }
        }
    }

    var name: String
    var system: System?

    init(_ wire: JSONValue) throws(ServerError) {
        if let systemName = wire["systemFieldName"]?.string {
            guard let system = System(systemFieldName: systemName) else {
                throw .badRequest(
                    "unknown systemFieldName \(systemName): recordName, createdTimestamp, modifiedTimestamp, createdUserRecordName or modifiedUserRecordName"
                )
            }
            self.system = system
            name = system.rawValue
        } else if let fieldName = wire["fieldName"]?.string, !fieldName.isEmpty {
            name = fieldName
            system = System(rawValue: fieldName)
        } else {
            throw .badRequest("a filter or sort needs a fieldName or a systemFieldName")
        }
    }

    func value(of record: CloudRecord) -> CloudValue? {
        switch system {
        case .recordName: .string(record.id.recordName)
        case .createdTimestamp: record.systemFields?.creationDate.map(CloudValue.date)
        case .modifiedTimestamp: record.systemFields?.modificationDate.map(CloudValue.date)
        case .createdUserRecordName: record.systemFields?.creatorUserRecordName.map(CloudValue.string)
        case .modifiedUserRecordName: record.systemFields?.lastModifiedUserRecordName.map(CloudValue.string)
        case nil: record.fields[name]
        }
    }
}
