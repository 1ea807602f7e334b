import NestedCloudKitCodable

/// An index the store keeps on fields of one record type, so that queries filtering or sorting on them read only
/// the rows they return.
///
/// Declare them on the model (``QueryableModel/storeIndexes``) and hand the types to
/// ``SyncStore/declareIndexes(for:)`` when the app starts; the store creates the indexes it doesn't have and drops
/// those no longer declared. A query uses an index when it filters on the index's first fields with `equals`,
/// `isIn`, comparisons or `beginsWith`, and sorts on the next ones; any query runs without one, reading every
/// record of the type.
///
/// Equal sort keys are ordered by record name, ascending, whatever the direction of the keys: an index gives a
/// query's whole order when it sorts its keys the way the query does. Declare the order a screen shows:
///
/// ```swift
/// StoreIndex(Note.self, on: [.key(.isDone)], sortedBy: [.descending(.due)], named: "openByDue")
/// ```
///
/// An index sorted the other way still narrows the rows; SQLite then orders each run of equal keys by name itself,
/// which ``SyncStore/queryPlan(_:)`` shows as `USE TEMP B-TREE FOR RIGHT PART OF ORDER BY`.
public struct StoreIndex: Sendable, Hashable {
    enum Key: Sendable, Hashable {
        case field(String)
        case creationDate
        case modificationDate
        case recordName
    }

    /// One column of the index: a key and its direction.
    struct Column: Sendable, Hashable {
        var key: Key
        var descending: Bool
    }

    /// The record type whose records it indexes.
    public let recordType: String
    /// The declaration's name, which ``SyncStore/queryPlan(_:)`` shows when a query uses the index: the one
    /// given, or one made of the record type and the fields (`Note_isDone_due_desc`).
    public let name: String
    let columns: [Column]
    /// Whether ``name`` was given, and so must be a name (made ones are made valid).
    private let isNamed: Bool
    /// The fields the model decodes, to check the names given as strings; `nil` for an index without a model type.
    private let model: (any QueryableModel.Type)?
    /// Names given as strings, checked when the index is declared.
    private let namesToCheck: [String]

    /// An index on fields of a model type, by coding key: `StoreIndex(Note.self, on: .isDone, .due)`.
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - keys: The fields, in the order queries filter and sort on them, each ascending.
    ///   - recordType: The type's record type, if it declares another `cloudKitRecordType`.
    public init<Model: QueryableModel>(_ type: Model.Type, on keys: Model.CodingKeys..., recordType: String? = nil) {
        self.init(type, on: keys.map { .key($0) }, recordType: recordType)
    }

    /// An index on fields of a model type, system fields included, and on the order queries sort by:
    /// `StoreIndex(Note.self, on: [.key(.isDone)], sortedBy: [.descending(.creationDate)])`.
    ///
    /// A field named by a string (`.named("title")`) must be one the model decodes:
    /// ``SyncStore/declareIndexes(_:)`` throws ``SyncError/invalidIndex(_:)`` for one it doesn't.
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - fields: The fields queries filter on, in order, ascending.
    ///   - order: The keys queries sort by after them, each in its direction.
    ///   - name: A name for the declaration, shown by ``SyncStore/queryPlan(_:)``: letters, digits and
    ///     underscores. By default one is made of the record type and the fields.
    ///   - recordType: The type's record type, if it declares another `cloudKitRecordType`.
    public init<Model: QueryableModel>(
        _ type: Model.Type, on fields: [QueryField<Model>], sortedBy order: [ModelSort<Model>] = [],
        named name: String? = nil, recordType: String? = nil
    ) {
        let all = fields.map { ($0, false) } + order.map { ($0.field, $0.descending) }
        self.init(
            recordType: recordType ?? String(describing: type),
            columns: all.map { Column(key: $0.0.target.indexKey, descending: $0.1) },
            namesToCheck: all.compactMap { field, _ in
                if case .field(let name, checked: false) = field.target { return name }
                return nil
            },
            model: type, name: name)
    }

    /// An index on fields named by strings, for records without a model type: a name that can't be a CloudKit
    /// field name is a ``SyncError/invalidIndex(_:)`` error when it is declared.
    ///
    /// - Parameters:
    ///   - recordType: The record type.
    ///   - fieldNames: The fields, in the order queries filter and sort on them, each ascending.
    ///   - name: A name for the declaration, shown by ``SyncStore/queryPlan(_:)``; made of the record type and
    ///     the fields by default.
    public init(recordType: String, fieldNames: [String], named name: String? = nil) {
        self.init(
            recordType: recordType, columns: fieldNames.map { Column(key: .field($0), descending: false) },
            namesToCheck: fieldNames, model: nil, name: name)
    }

    private init(
        recordType: String, columns: [Column], namesToCheck: [String], model: (any QueryableModel.Type)?,
        name: String?
    ) {
        self.recordType = recordType
        self.columns = columns
        self.namesToCheck = namesToCheck
        self.model = model
        isNamed = name != nil
        self.name = name ?? Self.madeName(recordType: recordType, columns: columns)
    }

    /// A name from the record type and the columns, with anything but letters, digits and underscores made an
    /// underscore.
    private static func madeName(recordType: String, columns: [Column]) -> String {
        let parts =
            [recordType]
            + columns.map { column in
                let key: String
                switch column.key {
                case .field(let name): key = name
                case .creationDate: key = "creationDate"
                case .modificationDate: key = "modificationDate"
                case .recordName: key = "recordName"
                }
                return column.descending ? key + "_desc" : key
            }
        return String(
            String.UnicodeScalarView(
                parts.joined(separator: "_").unicodeScalars.map { Self.isNameCharacter($0) ? $0 : "_" }))
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
    }

    /// The index's SQLite name: its ``name`` for a reader of a query plan, and a hash of what it covers, so that a
    /// declaration that didn't change keeps its index and any change makes it anew.
    var sqliteName: String { "ncs_index_" + name + "_" + StoreSQL.stableHash(Self.layout + definition) }

    /// The layout of the indexes' columns, in the hash of their names: a store opened by a release that lays them
    /// out otherwise makes them anew when they are declared (since v5 they lead with the zone's number; since v7 they
    /// are on the record type's table).
    private static let layout = "table:"

    /// What the index covers, in words that identify it.
    var definition: String {
        recordType + "("
            + columns.map { StoreSQL.column($0.key) + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
            + ")"
    }

    /// Checks the declaration: at least one field, names CloudKit accepts, and fields named by strings that the
    /// model decodes.
    func validate() throws {
        guard !columns.isEmpty else {
            throw SyncError.invalidIndex("the index on \(recordType) names no field; name at least one")
        }
        guard StoreSQL.isValidName(recordType) else {
            throw SyncError.invalidIndex(
                "\"\(recordType)\" isn't a record type name (letters, digits and underscores, starting with a letter)")
        }
        if isNamed, name.isEmpty || !name.unicodeScalars.allSatisfy(Self.isNameCharacter) {
            throw SyncError.invalidIndex(
                "\"\(name)\" can't name the index on \(recordType): use letters, digits and underscores")
        }
        for column in columns {
            guard case .field(let name) = column.key, !StoreSQL.isValidName(name) else { continue }
            throw SyncError.invalidIndex(
                "\"\(name)\" of \(recordType) isn't a field name (letters, digits and underscores, starting with a "
                    + "letter); check its spelling against the model's coding keys")
        }
        guard let model, !namesToCheck.isEmpty, let names = CKRecordDecoder.fieldNames(decodedBy: model) else {
            return
        }
        for name in namesToCheck where !names.contains(name) {
            throw SyncError.invalidIndex(
                "\(model) has no field \"\(name)\" (its fields: \(names.sorted().joined(separator: ", "))); check "
                    + "the spelling, or name the field by its coding key so the compiler checks it")
        }
    }

    /// Whether two declarations are one index: the same record type, name and columns. (The model type only
    /// checks names.)
    public static func == (lhs: StoreIndex, rhs: StoreIndex) -> Bool {
        lhs.recordType == rhs.recordType && lhs.name == rhs.name && lhs.columns == rhs.columns
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordType)
        hasher.combine(name)
        hasher.combine(columns)
    }
}

extension QueryField.Target {
    /// The column an index keeps for the field.
    var indexKey: StoreIndex.Key {
        switch self {
        case .field(let name, _): .field(name)
        case .creationDate: .creationDate
        case .modificationDate: .modificationDate
        case .recordName: .recordName
        }
    }
}
