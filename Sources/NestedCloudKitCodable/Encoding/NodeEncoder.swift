import Foundation

/// An `Encoder` that turns a value nested inside a record's field into an ``EncodedNode``.
///
/// It is also its own single-value container, as Foundation's JSON encoder is. A nested `CKEncodable` value
/// found anywhere below it is queued on the ``GraphEncoder`` to become a record of its own, and becomes a
/// reference node here, with the action of the record field the value sits in.
final class NodeEncoder: Encoder, SingleValueEncodingContainer {
    let context: NodeContext
    let path: CodingPath
    /// What has been written: nothing yet, a finished node, or a container.
    private(set) var slot: NodeSlot?

    init(context: NodeContext, path: CodingPath) {
        self.context = context
        self.path = path
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { context.graph.options.encoderUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: ObjectBuilder
        if case .object(let existing)? = slot {
            object = existing
        } else {
            object = ObjectBuilder()
            slot = .object(object)
        }
        return KeyedEncodingContainer(NodeKeyedContainer(object: object, context: context, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayBuilder
        if case .array(let existing)? = slot {
            array = existing
        } else {
            array = ArrayBuilder()
            slot = .array(array)
        }
        return NodeUnkeyedContainer(array: array, context: context, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() { slot = .node(.null) }
    func encode(_ value: Bool) { slot = .node(.bool(value)) }
    func encode(_ value: String) { slot = .node(.string(value)) }
    func encode(_ value: Double) throws { slot = .node(try context.node(for: value, at: path)) }
    func encode(_ value: Float) throws { slot = .node(try context.node(for: Double(value), at: path)) }
    func encode(_ value: Int) { slot = .node(.int(Int64(value))) }
    func encode(_ value: Int8) { slot = .node(.int(Int64(value))) }
    func encode(_ value: Int16) { slot = .node(.int(Int64(value))) }
    func encode(_ value: Int32) { slot = .node(.int(Int64(value))) }
    func encode(_ value: Int64) { slot = .node(.int(value)) }
    func encode(_ value: UInt) throws { slot = .node(try context.node(for: UInt64(value), at: path)) }
    func encode(_ value: UInt8) { slot = .node(.int(Int64(value))) }
    func encode(_ value: UInt16) { slot = .node(.int(Int64(value))) }
    func encode(_ value: UInt32) { slot = .node(.int(Int64(value))) }
    func encode(_ value: UInt64) throws { slot = .node(try context.node(for: value, at: path)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws { slot = .node(try context.node(for: value, at: path)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws { slot = .node(try context.node(for: value, at: path)) }
    func encode<T: Encodable>(_ value: T) throws { slot = try context.slot(for: value, at: path) }

    /// Writes a reference to a record that isn't encoded here (a ``CloudLazyReference``), in the encoder's zone.
    func encodeReference(toRecordNamed recordName: String) {
        let recordID = CloudRecord.ID(recordName: recordName, zoneID: context.options.zoneID)
        slot = .node(.reference(CloudReference(recordID: recordID, action: context.referenceAction), target: nil))
    }
}

/// What every container below one record field shares: the graph being encoded and the field's reference
/// action.
struct NodeContext {
    let graph: GraphEncoder
    let referenceAction: CloudReference.Action

    var options: EncodingOptions { graph.options }

    /// Encodes any value found at `path`.
    func slot<T: Encodable>(for value: T, at path: CodingPath) throws -> NodeSlot {
        if let scalar = try scalarNode(for: value, at: path) { return .node(scalar) }
        if let list = try listNode(for: value, at: path) { return .node(list) }
        if let record = value as? any CKEncodable { return .node(try referenceNode(to: record, at: path)) }
        let encoder = NodeEncoder(context: self, path: path)
        try value.encode(to: encoder)
        // A value that writes nothing is an empty object, as in Foundation's JSON encoder.
        let slot = encoder.slot ?? .object(ObjectBuilder())
        switch slot {
        case .array(let array) where value is any UnorderedSet: array.shape.isSet = true
        case .array(let array) where value is any UnorderedDictionary: array.shape.isDictionary = true
        case .object(let object) where value is any UnorderedDictionary: object.isUnordered = true
        default: break
        }
        return slot
    }

    /// A reference to a nested model's record, which is queued to be encoded when the field is written.
    func referenceNode(to value: any CKEncodable, at path: CodingPath) throws -> EncodedNode {
        let target = try graph.pendingRecord(for: value, at: path)
        return .reference(CloudReference(recordID: target.recordID, action: referenceAction), target: target)
    }

    /// The node of a value that CloudKit stores as one field value, or `nil` for any other value.
    ///
    /// Checked once, at the generic entry point, by comparing types, so that the common cases cost no dynamic
    /// cast and never go through the value's own `encode(to:)` (which for `Date` and `Decimal` would write
    /// their internal representation).
    func scalarNode<T: Encodable>(for value: T, at path: CodingPath) throws -> EncodedNode? {
        // The type comparison comes first so that only the matching type is ever cast.
        if T.self == String.self, let string = value as? String { return .string(string) }
        if T.self == Date.self, let date = value as? Date { return .date(try validated(date, at: path)) }
        if T.self == Data.self, let data = value as? Data { return .data(data) }
        if T.self == URL.self, let url = value as? URL { return .url(url) }
        if T.self == UUID.self, let uuid = value as? UUID { return .string(uuid.uuidString) }
        if T.self == Decimal.self, let decimal = value as? Decimal { return try node(for: decimal, at: path) }
        if T.self == CloudLocation.self, let location = value as? CloudLocation {
            return .location(try validated(location, at: path))
        }
        if T.self == CloudAsset.self, let asset = value as? CloudAsset { return .asset(asset) }
        if T.self == CloudReference.self, let reference = value as? CloudReference {
            // CloudKit can't reference across zones, so a reference belongs in the zone of the records made here.
            let recordID = CloudRecord.ID(recordName: reference.recordID.recordName, zoneID: options.zoneID)
            return .reference(CloudReference(recordID: recordID, action: reference.action), target: nil)
        }
        return nil
    }

    /// A date CloudKit can store.
    func validated(_ date: Date, at path: CodingPath) throws -> Date {
        guard date.isStorableInCloudKit else { throw CKCodableError.dateOutOfRange(date, at: path) }
        return date
    }

    /// A location CloudKit can store: every part finite, the timestamp to the millisecond.
    func validated(_ location: CloudLocation, at path: CodingPath) throws -> CloudLocation {
        let parts: [(String, Double)] = [
            ("latitude", location.latitude), ("longitude", location.longitude), ("altitude", location.altitude),
            ("horizontalAccuracy", location.horizontalAccuracy), ("verticalAccuracy", location.verticalAccuracy),
            ("course", location.course), ("speed", location.speed),
        ]
        for (name, value) in parts where !value.isFinite {
            throw CKCodableError.nonFiniteNumber(value, at: path.appending(NamedKey(name)))
        }
        var normalized = location
        if let timestamp = location.timestamp {
            normalized.timestamp = CloudValue.normalizedDate(
                try validated(timestamp, at: path.appending(NamedKey("timestamp"))))
        }
        return normalized
    }

    /// The list of an array (or set) of common scalars, mapped directly; `nil` for any other value.
    func listNode<T: Encodable>(for value: T, at path: CodingPath) throws -> EncodedNode? {
        if T.self == [String].self, let strings = value as? [String] { return .list(.stringList(strings)) }
        if T.self == [Int].self, let ints = value as? [Int] { return .list(.int64List(ints.map { Int64($0) })) }
        if T.self == [Int64].self, let ints = value as? [Int64] { return .list(.int64List(ints)) }
        if T.self == [Bool].self, let bools = value as? [Bool] { return .list(.int64List(bools.map { $0 ? 1 : 0 })) }
        if T.self == [Double].self, let doubles = value as? [Double], doubles.allSatisfy(\.isFinite) {
            return .list(.doubleList(doubles))
        }
        if T.self == [Date].self, let dates = value as? [Date] {
            return .list(
                .dateList(
                    try dates.enumerated().map { index, date in
                        CloudValue.normalizedDate(try validated(date, at: path.appending(index: index)))
                    }))
        }
        if T.self == Set<String>.self, let strings = value as? Set<String> {
            return .list(.stringList(strings.sorted()))
        }
        if T.self == Set<Int>.self, let ints = value as? Set<Int> {
            return .list(.int64List(ints.sorted().map { Int64($0) }))
        }
        return nil
    }

    func node(for value: Double, at path: CodingPath) throws -> EncodedNode {
        if value.isFinite { return .double(value) }
        switch options.nonFiniteFloatEncodingStrategy {
        case .throw:
            throw CKCodableError.nonFiniteNumber(value, at: path)
        case .convertToString(let positiveInfinity, let negativeInfinity, let nan):
            return .string(value.isNaN ? nan : value < 0 ? negativeInfinity : positiveInfinity)
        }
    }

    /// An integer wider than CloudKit's 64 bits (`UInt64`, `Int128`, `UInt128`), when its value fits in them.
    func node(for value: some FixedWidthInteger, at path: CodingPath) throws -> EncodedNode {
        guard let int = Int64(exactly: value) else { throw CKCodableError.integerOverflow(value, at: path) }
        return .int(int)
    }

    func node(for value: Decimal, at path: CodingPath) throws -> EncodedNode {
        switch options.decimalEncodingStrategy {
        case .string: .string(value.description)
        case .double: try node(for: NSDecimalNumber(decimal: value).doubleValue, at: path)
        }
    }
}
