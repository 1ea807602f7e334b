import NestedCloudKitCodable

/// Writes a model's `CloudRecordMappable` conformance from its stored properties, so that
/// the coders and the local store map it without Codable, at the speed of hand-written code.
///
/// ```swift
/// import NestedCloudKitCodable
/// import NestedCloudKitMacros
///
/// @CloudRecord
/// struct Note: CKCodable, Identifiable {
///     var id: UUID
///     var title: String
///     var dueDate: Date?
///     var folder: Folder
/// }
/// ```
///
/// Each stored property is written and read under its coding key, in the order of the `CodingKeys` cases (or
/// declaration order without them), as the synthesized `Codable` conformance does: `CodingKeys` renames fields and
/// leaves out properties it doesn't list, optionals are cleared when `nil`, a wrapped property is coded as its
/// wrapper, a `let` with an initial value is written but not read, computed and static properties are skipped. The type's `cloudKitFieldOptions`
/// (reference actions, assets, encryption, ignored properties) apply as for any model. Nested models become
/// references, and any `Codable` property goes through the generic methods of the reader and writer, so every
/// property a Codable model can have keeps working.
///
/// The macro applies to structs that don't code themselves; a class, an enum or a struct with its own
/// `init(from:)` or `encode(to:)` keeps its Codable path, or a conformance written by hand.
@attached(
    extension, conformances: CloudRecordEncodable, CloudRecordDecodable,
    names: named(encodeFields(to:)), named(init(fields:)))
public macro CloudRecord() = #externalMacro(module: "NestedCloudKitMacrosPlugin", type: "CloudRecordMacro")
