import NestedCloudKitCodable

/// Writes a model's `CloudRecordMappable` and `CloudRecordRowDecodable` conformances from its stored properties, so
/// that the coders map it without Codable, and the local store reads it from its table's row, at the speed of
/// hand-written code.
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
/// wrapper, a `let` with an initial value is written but not read, computed and static properties are skipped. The
/// type's `cloudKitFieldOptions` (reference actions, assets, encryption, ignored properties) apply as for any model;
/// ``CloudField(name:reference:asset:encrypted:parent:)`` and ``CloudIgnored()`` declare them on the properties instead.
/// Nested models become references, and any `Codable` property goes through the generic methods of the reader and
/// writer, so every property a Codable model can have keeps working.
///
/// The macro applies to structs that don't code themselves; a class, an enum or a struct with its own
/// `init(from:)` or `encode(to:)` keeps its Codable path, or a conformance written by hand.
@attached(
    extension, conformances: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable,
    names: named(encodeFields(to:)), named(init(fields:)), named(init(row:)))
@attached(member, names: named(CodingKeys), named(cloudKitFieldOptions))
public macro CloudRecord() = #externalMacro(module: "NestedCloudKitMacrosPlugin", type: "CloudRecordMacro")

/// Options for a stored property of a `@CloudRecord` model's field, declared where the property is.
///
/// ```swift
/// @CloudRecord
/// struct Album: CKCodable, Identifiable {
///     var id: String
///     @CloudField(name: "title") var name: String
///     @CloudField(reference: .deleteSelf) var owner: Person
///     @CloudField(asset: true) var cover: Data
///     @CloudField(encrypted: true) var notes: String
///     @CloudIgnored var isExpanded = false
/// }
/// ```
///
/// `@CloudRecord` turns the attributes into the members both coders read, so the Codable path and the generated
/// mapping make the same records: `CodingKeys` with the names (when the type declares no `CodingKeys`; with them,
/// rename the field there), and `cloudKitFieldOptions` with the reference actions, assets and encrypted fields
/// (when the type declares none; with it, give the options there).
///
/// - Parameters:
///   - name: The field's name in the record, if not the property's.
///   - reference: The reference action of a property that holds another model (`CloudReference.Action`).
///   - asset: Whether a `Data` property is stored as an asset rather than bytes.
///   - encrypted: Whether CloudKit keeps the field's value encrypted.
///   - parent: Whether the property references the record's parent for sharing (one model, `CloudLazyReference`
///     or `CloudReference`): a share of the parent covers the record (`CloudFieldOptions.parentField`). One
///     property at most.
@attached(peer)
public macro CloudField(
    name: String? = nil, reference: CloudReference.Action? = nil, asset: Bool = false, encrypted: Bool = false,
    parent: Bool = false
) = #externalMacro(module: "NestedCloudKitMacrosPlugin", type: "CloudFieldMacro")

/// Leaves a stored property of a `@CloudRecord` model out of its record, as Codable users do: the `CodingKeys`
/// `@CloudRecord` writes don't list it, so neither coder writes or reads it, and a decoded value keeps the
/// property's initial value (give it one, or make it optional). A type that declares `CodingKeys` leaves the
/// property out of them instead.
@attached(peer)
public macro CloudIgnored() = #externalMacro(module: "NestedCloudKitMacrosPlugin", type: "CloudFieldMacro")
