import Foundation

// Every encoding error is built here, so that each says the same things the same way: what went wrong, where,
// and how to fix it.
extension CKCodableError {
    static func invalidRecordName(_ name: String, recordType: String, problem: String, at path: CodingPath) -> Self {
        Self(
            .invalidRecordName, codingPath: path.keys,
            reason: "The record name \"\(name)\" of a \(recordType) can't be used: \(problem)",
            recoverySuggestion: "Make cloudKitIdentifier (by default the value's id) return an ASCII name of 1 to "
                + "255 characters that doesn't start with an underscore."
        )
    }

    static func invalidRecordType(_ recordType: String, problem: String, at path: CodingPath) -> Self {
        Self(
            .invalidRecordType, codingPath: path.keys,
            reason: "The record type \"\(recordType)\" can't be used: \(problem)",
            recoverySuggestion: "Make cloudKitRecordType (by default the type's name) return letters, digits and "
                + "underscores, starting with a letter, up to 255 characters."
        )
    }

    static func invalidFieldName(_ name: String, problem: String, recordID: CloudRecord.ID, at path: CodingPath) -> Self
    {
        Self(
            .invalidFieldName, codingPath: path.keys, recordID: recordID, field: name,
            reason: "The field name \"\(name)\" can't be used: \(problem)",
            recoverySuggestion: "Rename the property's coding key (in CodingKeys) to letters, digits and "
                + "underscores, starting with a letter, up to 255 characters."
        )
    }

    static func reservedFieldName(_ name: String, recordID: CloudRecord.ID, at path: CodingPath) -> Self {
        Self(
            .reservedFieldName, codingPath: path.keys, recordID: recordID, field: name,
            reason: "The field name \"\(name)\" is the name of one of CKRecord's own properties",
            recoverySuggestion: "Rename the property's coding key (in CodingKeys); CloudKit reserves "
                + RecordValidator.reservedFieldNames.sorted().joined(separator: ", ") + "."
        )
    }

    /// A record mapping (``CloudRecordEncodable``) wrote a key twice.
    static func keyWrittenTwice(_ name: String, recordID: CloudRecord.ID, at path: CodingPath) -> Self {
        Self(
            .duplicateFieldName, codingPath: path.keys, recordID: recordID, field: name,
            reason: "The model's record mapping writes the field \"\(name)\" twice",
            recoverySuggestion: "Write each key once in encodeFields(to:); two properties need two field names."
        )
    }

    static func duplicateFieldName(_ name: String, recordID: CloudRecord.ID, at path: CodingPath) -> Self {
        Self(
            .duplicateFieldName, codingPath: path.keys, recordID: recordID, field: name,
            reason: "Two values are written to the field \"\(name)\": a flattened nested value's field has the "
                + "name of another field",
            recoverySuggestion: "Rename one of the coding keys, or choose another separator for the flattened "
                + "nested value strategy."
        )
    }

    static func recordTooLarge(
        size: Int, limit: Int, largestFields: [(name: String, size: Int)], recordID: CloudRecord.ID, at path: CodingPath
    ) -> Self {
        let largest = largestFields.map { "\($0.name) (\($0.size) bytes)" }.joined(separator: ", ")
        return Self(
            .recordTooLarge, codingPath: path.keys, recordID: recordID,
            reason: "The record holds about \(size) bytes of field data; CloudKit accepts at most \(limit). The "
                + "largest fields: \(largest)",
            recoverySuggestion: "Store large Data fields as assets (dataEncodingStrategy .assets(forFields:)), or "
                + "move large values, including large embedded values, into records of their own."
        )
    }

    static func conflictingRecordID(
        _ id: CloudRecord.ID, recordTypes: (first: String, second: String), at path: CodingPath
    ) -> Self {
        let what =
            recordTypes.first == recordTypes.second
            ? "Two different \(recordTypes.first) values" : "A \(recordTypes.first) and a \(recordTypes.second)"
        return Self(
            .conflictingRecordID, codingPath: path.keys, recordID: id,
            reason: "\(what) have the record ID \(id); saving both would overwrite one with the other",
            recoverySuggestion: "Give each distinct value its own cloudKitIdentifier (record names are unique across "
                + "record types: prefix integer ids with the type, as \"Person-1\"), or make the values that share "
                + "an ID equal."
        )
    }

    static func dateOutOfRange(_ date: Date, at path: CodingPath) -> Self {
        Self(
            .dateOutOfRange, codingPath: path.keys,
            reason: "The date \(date.timeIntervalSince1970) seconds after 1970 isn't one CloudKit can store",
            recoverySuggestion: "Keep dates finite and within 275,000 years of 1970, or leave the property nil."
        )
    }

    static func mixedURLList(at path: CodingPath) -> Self {
        Self(
            .mixedURLList, codingPath: path.keys,
            reason: "The list mixes file URLs, which are stored as assets, with other URLs, stored as strings",
            recoverySuggestion: "Keep file URLs and other URLs in separate properties."
        )
    }

    static func integerOverflow(_ value: some BinaryInteger, at path: CodingPath) -> Self {
        Self(
            .integerOverflow, codingPath: path.keys,
            reason: "The integer \(value) is outside \(Int64.min)...\(Int64.max), the integers CloudKit stores",
            recoverySuggestion: "Store the value in a narrower type, or as a String in a custom encode(to:)."
        )
    }

    static func nonFiniteNumber(_ value: Double, at path: CodingPath) -> Self {
        Self(
            .nonFiniteNumber, codingPath: path.keys,
            reason: "The number \(value) is not finite, and CloudKit Web Services and queries can't carry it",
            recoverySuggestion: "Keep the value finite, or set nonFiniteFloatEncodingStrategy to "
                + ".convertToString for values that may be NaN or infinite."
        )
    }

    static func unknownFieldOption(
        _ name: String, recordType: String, recordID: CloudRecord.ID, knownKeys: [String], at path: CodingPath
    ) -> Self {
        Self(
            .unknownFieldOption, codingPath: path.keys, recordID: recordID, field: name,
            reason: "The field options of \(recordType) name \"\(name)\", which is neither a key it encodes nor one of "
                + "its properties (its keys: \(knownKeys.joined(separator: ", ")))",
            recoverySuggestion:
                "Correct the name, or declare the options with CloudFieldOptions(keyedBy: CodingKeys.self, ...) "
                + "so that the compiler checks them."
        )
    }

    static func invalidParentField(kind: CloudValue.Kind, recordID: CloudRecord.ID, field: String, at path: CodingPath)
        -> Self
    {
        Self(
            .invalidParentField, codingPath: path.keys, recordID: recordID, field: field,
            reason: "The field \"\(field)\" is declared as the record's parent but holds a \(kind) value; a parent is "
                + "one record",
            recoverySuggestion:
                "Declare as the parent a property holding one model, CloudLazyReference or CloudReference, or remove "
                + "the parent from CloudFieldOptions."
        )
    }

    static func invalidAssetField(kind: CloudValue.Kind, recordID: CloudRecord.ID, field: String, at path: CodingPath)
        -> Self
    {
        Self(
            .invalidAssetField, codingPath: path.keys, recordID: recordID, field: field,
            reason: "The field \"\(field)\" is declared an asset but holds a \(kind) value, which CloudKit can't store "
                + "as an asset",
            recoverySuggestion:
                "Declare as assets only properties holding Data, file URLs or CloudAssets (or lists of them), or "
                + "remove the field from the asset options (@CloudField(asset:) or CloudFieldOptions' assets)."
        )
    }

    static func unencryptableValue(kind: CloudValue.Kind, recordID: CloudRecord.ID, field: String, at path: CodingPath)
        -> Self
    {
        Self(
            .unencryptableValue, codingPath: path.keys, recordID: recordID, field: field,
            reason: "The field \"\(field)\" is declared encrypted but holds a \(kind) value; CloudKit encrypts only "
                + "values, not references or assets",
            recoverySuggestion: "Remove the field from CloudFieldOptions' encrypted fields."
        )
    }

    static func recordNotKeyed(recordType: String, recordID: CloudRecord.ID, at path: CodingPath) -> Self {
        Self(
            .recordNotKeyed, codingPath: path.keys, recordID: recordID,
            reason: "The \(recordType) value encoded itself as a single value or a list, but a record needs "
                + "named fields",
            recoverySuggestion: "Encode the value with a keyed container (encoder.container(keyedBy:)), as "
                + "synthesized Codable conformances do."
        )
    }

    static func referenceInEmbeddedValue(recordType: String, at path: CodingPath) -> Self {
        let what = recordType.isEmpty ? "A CloudReference" : "A \(recordType) (a CKEncodable value)"
        return Self(
            .referenceInEmbeddedValue, codingPath: path.keys,
            reason: "\(what) sits inside a value that is embedded in a field as JSON, where it can't be a record",
            recoverySuggestion: "Hold CKEncodable values directly in a record's properties, or in arrays, sets "
                + "or optionals of them; or use the .flattened nested value strategy."
        )
    }

    static func assetInEmbeddedValue(at path: CodingPath) -> Self {
        Self(
            .assetInEmbeddedValue, codingPath: path.keys,
            reason: "An asset sits inside a value that is embedded in a field as JSON, where it can't be uploaded",
            recoverySuggestion: "Hold assets directly in a record's properties, or use the .flattened nested value "
                + "strategy."
        )
    }

    /// The same error, placed in a record and field.
    func located(recordID: CloudRecord.ID, field: String?) -> Self {
        Self(
            code, codingPath: codingPath, recordID: recordID, field: field,
            reason: reason, recoverySuggestion: recoverySuggestion
        )
    }
}
