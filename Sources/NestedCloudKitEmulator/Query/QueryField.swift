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

    /// The name a ``CloudQuery`` gives the field: a system field's ``CloudQuery/SystemField/fieldName``, or the
    /// field's own name.
    var queryName: String {
        switch system {
        case .recordName: CloudQuery.SystemField.recordName.fieldName
        case .createdTimestamp: CloudQuery.SystemField.creationDate.fieldName
        case .modifiedTimestamp: CloudQuery.SystemField.modificationDate.fieldName
        case .createdUserRecordName: CloudQuery.SystemField.creatorUserRecordName.fieldName
        case .modifiedUserRecordName: CloudQuery.SystemField.lastModifiedUserRecordName.fieldName
        case nil: name
        }
    }

    /// Whether the field is the user who created or last saved a record.
    var isUser: Bool { system == .createdUserRecordName || system == .modifiedUserRecordName }

    /// A filter's value as a query compares it with this field: the record name and the users, which the wire
    /// sends as `REFERENCE`s (or lists of them), by their record names.
    func queryValue(_ value: CloudValue) -> CloudValue {
        switch (system, value) {
        case (.recordName?, .reference(let reference)), (.createdUserRecordName?, .reference(let reference)),
            (.modifiedUserRecordName?, .reference(let reference)):
            .string(reference.recordID.recordName)
        case (.recordName?, .referenceList(let references)), (.createdUserRecordName?, .referenceList(let references)),
            (.modifiedUserRecordName?, .referenceList(let references)):
            .stringList(references.map(\.recordID.recordName))
        default: value
        }
    }
}
