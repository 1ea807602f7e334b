import Foundation

/// How a model type's properties are stored, declared once for the type: the reference action of each property
/// that holds another record, the `Data` properties stored as assets, the fields CloudKit keeps encrypted, and
/// the properties left out of the record.
///
/// Declare it as the type's ``CKRecordRepresentable/cloudKitFieldOptions``, keyed by the type's own coding keys so
/// that a misspelt property doesn't compile:
///
/// ```swift
/// struct School: CKCodable, Identifiable {
///     var id: String
///     var name: String
///     var students: [Person]
///     var logo: Data
///     var notes: String
///     var cachedRanking: Int?
///
///     static let cloudKitFieldOptions = CloudFieldOptions(
///         keyedBy: CodingKeys.self,
///         referenceActions: [.students: .deleteSelf],
///         assets: [.logo],
///         encrypted: [.notes],
///         ignored: [.cachedRanking]
///     )
/// }
/// ```
///
/// The options apply to this type only, unlike the encoder's strategies, which apply to every record. Version
/// 1.0's instance methods (``CKRecordRepresentable/cloudKitReferenceActions()`` and
/// ``CKRecordRepresentable/ignoredProperties()``) still count; where both name a property, these options win.
/// Options given by name (the `String` form, or the instance methods) are checked when a value is encoded: a
/// name that is neither a key the value encodes nor one of its properties is a
/// ``CKCodableError/Code/unknownFieldOption(_:)`` error, rather than an option silently doing nothing.
public struct CloudFieldOptions: Sendable, Hashable {
    /// The reference action of each property (coding key) that holds another record; others get
    /// ``CloudReference/Action/none``.
    public var referenceActions: [String: CloudReference.Action]

    /// The `Data` properties (coding keys, or flattened field names) stored as assets rather than Bytes.
    public var assetFields: Set<String>

    /// The fields CloudKit keeps encrypted (`CKRecord.encryptedValues`). CloudKit encrypts only values, not
    /// references or assets.
    public var encryptedFields: Set<String>

    /// The properties (coding keys) left out of the record.
    public var ignoredFields: Set<String>

    /// The names given as strings, which the encoder checks against the keys a value encodes; names that came as
    /// coding keys were checked by the compiler.
    let namesToCheck: Set<String>

    /// No options: references get ``CloudReference/Action/none``, `Data` follows the encoder's strategy, nothing
    /// is encrypted or left out.
    public init() {
        self.init(referenceActions: [:], assetFields: [], encryptedFields: [], ignoredFields: [])
    }

    /// Options keyed by the model's coding keys.
    ///
    /// - Parameters:
    ///   - keys: The model's `CodingKeys`.
    ///   - referenceActions: The action of each property that holds another record.
    ///   - assets: The `Data` properties to store as assets.
    ///   - encrypted: The properties CloudKit keeps encrypted.
    ///   - ignored: The properties left out of the record.
    public init<Key: CodingKey & Hashable>(
        keyedBy keys: Key.Type,
        referenceActions: [Key: CloudReference.Action] = [:],
        assets: Set<Key> = [],
        encrypted: Set<Key> = [],
        ignored: Set<Key> = []
    ) {
        self.referenceActions = Dictionary(
            uniqueKeysWithValues: referenceActions.map { ($0.key.stringValue, $0.value) })
        self.assetFields = Set(assets.map(\.stringValue))
        self.encryptedFields = Set(encrypted.map(\.stringValue))
        self.ignoredFields = Set(ignored.map(\.stringValue))
        self.namesToCheck = []
    }

    /// Options keyed by field names, for names that aren't coding keys (a flattened nested value's fields) or
    /// models without a `CodingKeys` type. Each name is checked when a value is encoded.
    public init(
        referenceActions: [String: CloudReference.Action] = [:],
        assetFields: Set<String> = [],
        encryptedFields: Set<String> = [],
        ignoredFields: Set<String> = []
    ) {
        self.referenceActions = referenceActions
        self.assetFields = assetFields
        self.encryptedFields = encryptedFields
        self.ignoredFields = ignoredFields
        self.namesToCheck = Set(referenceActions.keys).union(assetFields).union(encryptedFields).union(ignoredFields)
    }
}
