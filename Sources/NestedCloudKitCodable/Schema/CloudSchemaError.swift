import Foundation

/// An error from making, reading or checking a ``CloudSchema``: what went wrong, where (the line of a schema file,
/// the record type and field, the model's coding path), and how to fix it.
public struct CloudSchemaError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What kind of failure an error is: compare with `==`, or `switch` over it with a `default`, as a later
    /// release may add codes. What the error is about is in the error: ``CloudSchemaError/recordType``,
    /// ``CloudSchemaError/field``, ``CloudSchemaError/line``, ``CloudSchemaError/refusals``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as logs give it.
        public let description: String

        private init(_ name: String) { description = name }

        /// Text that isn't CloudKit's schema language.
        public static let syntax = Code("syntax")
        /// A declaration CloudKit refuses: a record type or field declared twice, a type that doesn't exist
        /// (`ENCRYPTED ASSET`), an index the field's type can't have (an encrypted field, `SEARCHABLE` on a
        /// number), a name that isn't one.
        public static let invalidDeclaration = Code("invalidDeclaration")
        /// A field given two types: by two models of one record type, or by a model and a query's value.
        public static let conflictingFieldType = Code("conflictingFieldType")
        /// A query on a record type or field that no model writes: most likely a misspelling.
        public static let unknownField = Code("unknownField")
        /// A model type the schema can't be made from: building an instance of it, or encoding that instance,
        /// failed (``CloudSchemaError/underlyingError``).
        public static let unreadableModel = Code("unreadableModel")
        /// Changes to a deployed schema that CloudKit refuses to deploy (``CloudSchemaError/refusals``).
        public static let notDeployable = Code("notDeployable")
    }

    /// What went wrong.
    public let code: Code
    /// The record type the error belongs to, if any.
    public let recordType: String?
    /// The field the error belongs to, if any.
    public let field: String?
    /// The line of the schema text, from 1, for an error reading one.
    public let line: Int?
    /// What happened, in a sentence.
    public let reason: String
    /// How to fix it.
    public let recoverySuggestion: String?
    /// The error of the model's coder, for ``Code/unreadableModel``, as text (errors aren't all `Sendable`
    /// and `Hashable`).
    public let underlyingError: String?
    /// The changes CloudKit refuses to deploy, for ``Code/notDeployable``
    /// (``CloudSchema/Deployment/refusals``); empty for every other code.
    public let refusals: [CloudSchema.Deployment.Change]

    init(
        _ code: Code, recordType: String? = nil, field: String? = nil, line: Int? = nil, reason: String,
        recoverySuggestion: String? = nil, underlyingError: String? = nil,
        refusals: [CloudSchema.Deployment.Change] = []
    ) {
        self.code = code
        self.recordType = recordType
        self.field = field
        self.line = line
        self.reason = reason
        self.recoverySuggestion = recoverySuggestion
        self.underlyingError = underlyingError
        self.refusals = refusals
    }

    /// What happened and where.
    public var errorDescription: String? {
        var place: [String] = []
        if let line { place.append("line \(line)") }
        if let recordType { place.append("record type \(recordType)") }
        if let field { place.append("field \(field)") }
        return place.isEmpty ? reason : "\(reason) (\(place.joined(separator: ", ")))"
    }

    /// What happened, where, and how to fix it.
    public var description: String {
        let what = errorDescription ?? reason
        guard let recoverySuggestion else { return what }
        return "\(what). \(recoverySuggestion)"
    }

    // MARK: Built in one place

    static func syntax(_ reason: String, line: Int, recordType: String? = nil) -> CloudSchemaError {
        CloudSchemaError(
            .syntax, recordType: recordType, line: line, reason: reason,
            recoverySuggestion: "The schema language is the text `cktool export-schema` writes: DEFINE SCHEMA, then "
                + "RECORD TYPE Name (field TYPE [QUERYABLE] [SEARCHABLE] [SORTABLE], ..., GRANT ... TO role); "
                + "entries, and CREATE ROLE name;")
    }

    static func invalid(
        _ reason: String, recordType: String?, field: String? = nil, line: Int? = nil, fix: String
    ) -> CloudSchemaError {
        CloudSchemaError(
            .invalidDeclaration, recordType: recordType, field: field, line: line, reason: reason,
            recoverySuggestion: fix)
    }

    static func conflictingType(
        recordType: String, field: String, _ first: CloudSchema.FieldType, _ second: CloudSchema.FieldType
    ) -> CloudSchemaError {
        CloudSchemaError(
            .conflictingFieldType, recordType: recordType,
            field: field, reason: "\(recordType).\(field) is given two types, \(first) and \(second)",
            recoverySuggestion: "A CloudKit field has one type: give one of them another field name "
                + "(@CloudField(name:) or a coding key), or store both as the same type")
    }

    package static func unknownField(recordType: String, field: String, known: [String]) -> CloudSchemaError {
        CloudSchemaError(
            .unknownField, recordType: recordType, field: field,
            reason: known.isEmpty
                ? "a query asks for record type \(recordType), which none of the models is"
                : "a query filters or sorts on \(recordType).\(field), which none of the models writes",
            recoverySuggestion: known.isEmpty
                ? "List the model of that record type among the models"
                : "Name one of its fields: \(known.sorted().joined(separator: ", "))")
    }
}
