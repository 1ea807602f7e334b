import Foundation

/// What a probe of one record found: the records its model decodes, as which types, and from which fields.
final class ProbeCollector {
    var children: [(id: CloudRecord.ID, type: any CKDecodable.Type, path: CodingPath)] = []
    private var fieldTypes: [(field: String, type: any CKDecodable.Type)] = []
    /// Whether a record was decoded from somewhere other than a named field (the schema can't describe it).
    private var hasUnnamedRecords = false

    /// Notes that the model decodes the field as records of the type (whether or not the field is there).
    func note(field: String?, type: any CKDecodable.Type) {
        guard let field else {
            hasUnnamedRecords = true
            return
        }
        if !fieldTypes.contains(where: { $0.field == field && $0.type == type }) { fieldTypes.append((field, type)) }
    }

    /// The fields the model decodes as records, if every record came from a named field.
    var schema: [(field: String, type: any CKDecodable.Type)]? {
        hasUnnamedRecords ? nil : fieldTypes
    }
}
