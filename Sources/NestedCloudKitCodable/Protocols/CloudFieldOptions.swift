import Foundation

/// How a model type's properties are stored, declared once for the type: the reference action of each property
/// that holds another record, the `Data` properties stored as assets, the fields CloudKit keeps encrypted, the
/// properties left out of the record, and the property that references the record's parent for sharing.
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
/// ``CKCodableError/Code/unknownFieldOption`` error, rather than an option silently doing nothing.
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

    /// The property (coding key) that references the record's parent for sharing, if any: a nested model, a
    /// ``CloudLazyReference`` or a ``CloudReference``. The encoder makes the record's ``CloudRecord/parentID`` the
    /// record it references, so that a share of the parent (or of its own parent, up to a share's root) covers
    /// this record too, as CloudKit follows only parents to find what a share covers. The field is kept as well.
    ///
    /// ```swift
    /// struct Item: CKCodable, Identifiable {
    ///     var id: String
    ///     var name: String
    ///     var list: CloudLazyReference<ShoppingList>
    ///     static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
    /// }
    /// ```
    public var parentField: String?

    /// The names given as strings, which the encoder checks against the keys a value encodes; names that came as
    /// coding keys were checked by the compiler.
    let namesToCheck: Set<String>

    /// No options: references get ``CloudReference/Action/none``, `Data` follows the encoder's strategy, nothing
    /// is encrypted or left out.
    public init() {
        self.init(referenceActions: [:], assetFields: [], encryptedFields: [], ignoredFields: [], parentField: nil)
    }

    /// Options keyed by the model's coding keys.
    ///
    /// - Parameters:
    ///   - keys: The model's `CodingKeys`.
    ///   - referenceActions: The action of each property that holds another record.
    ///   - assets: The `Data` properties to store as assets.
    ///   - encrypted: The properties CloudKit keeps encrypted.
    ///   - ignored: The properties left out of the record.
    ///   - parent: The property that references the record's parent for sharing (see ``parentField``).
    public init<Key: CodingKey & Hashable>(
        keyedBy keys: Key.Type,
        referenceActions: [Key: CloudReference.Action] = [:],
        assets: Set<Key> = [],
        encrypted: Set<Key> = [],
        ignored: Set<Key> = [],
        parent: Key? = nil
    ) {
        self.referenceActions = Dictionary(
            uniqueKeysWithValues: referenceActions.map { ($0.key.stringValue, $0.value) })
        self.assetFields = Set(assets.map(\.stringValue))
        self.encryptedFields = Set(encrypted.map(\.stringValue))
        self.ignoredFields = Set(ignored.map(\.stringValue))
        self.parentField = parent?.stringValue
        self.namesToCheck = []
    }

    /// Options keyed by field names, for names that aren't coding keys (a flattened nested value's fields) or
    /// models without a `CodingKeys` type. Each name is checked when a value is encoded.
    public init(
        referenceActions: [String: CloudReference.Action] = [:],
        assetFields: Set<String> = [],
        encryptedFields: Set<String> = [],
        ignoredFields: Set<String> = [],
        parentField: String? = nil
    ) {
        self.referenceActions = referenceActions
        self.assetFields = assetFields
        self.encryptedFields = encryptedFields
        self.ignoredFields = ignoredFields
        self.parentField = parentField
        self.namesToCheck = Set(referenceActions.keys).union(assetFields).union(encryptedFields).union(ignoredFields)
            .union(parentField.map { [$0] } ?? [])
    }
}
