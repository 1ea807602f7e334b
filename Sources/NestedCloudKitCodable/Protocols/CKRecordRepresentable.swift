import Foundation

#if canImport(CloudKit)
import CloudKit
#endif

/// A type whose values are stored as CloudKit records.
///
/// Conform a model to ``CKCodable`` (this protocol plus `Codable`) and the encoder turns each value into a
/// record, and each value of another `CKCodable` type nested in it into a record of its own, linked by a
/// reference:
///
/// ```swift
/// struct School: CKCodable, Identifiable {
///     var id: String
///     var name: String
///     var director: Person
///     var students: [Person]
///
///     static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, referenceActions: [.students: .deleteSelf])
/// }
/// ```
///
/// Every requirement has a default except ``cloudKitIdentifier`` for types that aren't `Identifiable`:
/// a record's name must be the same every time the same value is encoded, or each save creates a new record.
///
/// The protocol refines `SendableMetatype`, so that a model stays usable from any actor: in an app target that
/// isolates its code to the main actor by default (Xcode 26's new projects), a type that declares this conformance
/// (or `CKCodable`) where it is declared isn't inferred `@MainActor`, and its `Codable` conformance isn't isolated,
/// so the store, the engine and the decoder can read and write its values on their own threads. Declare the
/// conformance on the type itself (`struct Note: CKCodable`), not in a later extension: an extension's conformance
/// of a main-actor type is isolated to the main actor, which the compiler reports as "main actor-isolated
/// conformance of 'Note' to 'Decodable' cannot satisfy conformance requirement for a 'Sendable' type parameter";
/// move the conformance to the declaration, or mark the type `nonisolated`.
public protocol CKRecordRepresentable: SendableMetatype {
    /// The record type that stores values of this type. Defaults to the type's name.
    ///
    /// CloudKit accepts type names of letters, digits and underscores that start with a letter, up to 255
    /// characters; give generic types a name of their own.
    var cloudKitRecordType: String { get }

    /// The record name that stores this value. Defaults to `id` for `Identifiable` types.
    ///
    /// It must identify the value: the same value must give the same name on every encode. CloudKit accepts
    /// ASCII names of 1 to 255 characters that don't start with an underscore.
    var cloudKitIdentifier: String { get }

    /// How this type's properties are stored: reference actions, assets, encrypted fields and properties left
    /// out, declared once for the type. Defaults to none.
    ///
    /// See ``CloudFieldOptions``. Options given here win over those of the instance methods below, which
    /// remain for version 1.0's models.
    ///
    /// The encoder reads this once per type and process, the first time it encodes a value of the type, so it
    /// should always give the same options.
    static var cloudKitFieldOptions: CloudFieldOptions { get }

    /// The version of the type's record layout, written in each of its records
    /// (``CloudRecord/schemaVersionFieldName``) when above 0. Defaults to 0: no version.
    ///
    /// Adding a field needs no new version: a version of the app that doesn't know the field keeps it when it saves.
    /// Raise the version when a change would make an older version's edits wrong, a field whose meaning changed:
    /// the sync store then refuses an older version's save of a record a newer version wrote
    /// (`SyncError.recordFromNewerVersion`), keeping the record intact, and ``CloudRecord/schemaVersion`` tells the
    /// app which version wrote a record. See the article "Evolving Models and Deploying the Schema".
    static var cloudKitSchemaVersion: Int { get }

    /// The names of properties (their coding keys) that are not stored in the record. Defaults to none.
    ///
    /// Prefer ``CloudFieldOptions/ignoredFields`` in ``cloudKitFieldOptions``, which the compiler checks.
    ///
    /// When decoding, an ignored property is missing from the record: give it an optional type or a default in
    /// a custom `init(from:)`.
    func ignoredProperties() -> [String]

    /// The reference action of each property that holds another record, keyed by the property's coding key.
    /// A property not listed gets ``CloudReference/Action/none``.
    ///
    /// Prefer ``CloudFieldOptions/referenceActions`` in ``cloudKitFieldOptions``, declared once for the type and
    /// keyed by its coding keys.
    ///
    /// Version 1.0 used `.deleteSelf` for every reference; now each property says what it needs.
    func cloudKitReferenceActions() -> [String: CloudReference.Action]

    #if canImport(CloudKit)
    /// Version 1.0's form of the reference actions, with CloudKit's action type; still honored, so that a 1.0
    /// model keeps its actions after upgrading. Actions listed in both forms come from the portable one.
    func cloudKitReferenceActions() -> [String: CKRecord.Reference.Action]
    #endif
}

extension CKRecordRepresentable {
    /// No options.
    public static var cloudKitFieldOptions: CloudFieldOptions { CloudFieldOptions() }

    /// No version: the records carry none.
    public static var cloudKitSchemaVersion: Int { 0 }

    /// The type's name, for example `"School"`.
    public var cloudKitRecordType: String { TypeNames.name(of: Self.self) }

    /// No ignored properties.
    public func ignoredProperties() -> [String] { [] }

    /// No reference actions: every reference gets ``CloudReference/Action/none``.
    public func cloudKitReferenceActions() -> [String: CloudReference.Action] { [:] }

    #if canImport(CloudKit)
    /// No reference actions in 1.0's form.
    public func cloudKitReferenceActions() -> [String: CKRecord.Reference.Action] { [:] }
    #endif

    /// The reference actions of both forms, the portable form winning.
    func referenceActions() -> [String: CloudReference.Action] {
        let actions: [String: CloudReference.Action] = cloudKitReferenceActions()
        #if canImport(CloudKit)
        let legacy: [String: CKRecord.Reference.Action] = cloudKitReferenceActions()
        if !legacy.isEmpty {
            return legacy.mapValues(CloudReference.Action.init).merging(actions) { _, portable in portable }
        }
        #endif
        return actions
    }
}

extension CKRecordRepresentable where Self: Identifiable {
    /// The value's `id`, as a string: a `UUID` gives its `uuidString`, an integer its digits, a type with a raw
    /// value (a tagged identifier) its raw value.
    ///
    /// An optional `id` that is `nil`, and the `ObjectIdentifier` that classes get as their default `id` (it
    /// changes from run to run), give an empty name, which the encoder rejects with
    /// ``CKCodableError/Code/invalidRecordName``: declare a stable `id`.
    public var cloudKitIdentifier: String { recordName(describing: id) }
}

/// A type that can be encoded into CloudKit records.
public typealias CKEncodable = CKRecordRepresentable & Encodable

/// A type that can be decoded from CloudKit records.
public typealias CKDecodable = CKRecordRepresentable & Decodable

/// A type that can be encoded into CloudKit records and decoded from them.
public typealias CKCodable = CKEncodable & CKDecodable

/// The record name for an identifier: a raw value's name, a `LosslessStringConvertible` value's description
/// (`UUID` included), optionals unwrapped; an empty (and so rejected) name for `nil` and `ObjectIdentifier`.
///
/// The common identifier types are recognized by comparing types, which costs nothing, before any dynamic cast,
/// which costs more than encoding a small record's fields.
package func recordName<Identifier>(describing identifier: Identifier) -> String {
    // The common identifier types, known by their metadata: the value is that type, so it is reinterpreted, not
    // cast (a dynamic cast, with an optional's metadata to cast into, was half the cost of naming a record).
    if Identifier.self == String.self { return unsafeBitCast(identifier, to: String.self) }
    if Identifier.self == UUID.self { return unsafeBitCast(identifier, to: UUID.self).uuidString }
    if Identifier.self == Int.self { return String(unsafeBitCast(identifier, to: Int.self)) }
    if let optional = identifier as? any OptionalProtocol {
        return optional.wrappedValue.map { recordName(describing: $0) } ?? ""
    }
    if identifier is ObjectIdentifier { return "" }
    if let uuid = identifier as? UUID { return uuid.uuidString }
    if let convertible = identifier as? any LosslessStringConvertible { return convertible.description }
    if let raw = identifier as? any RawRepresentable { return recordName(describing: raw.rawValue) }
    return String(describing: identifier)
}
