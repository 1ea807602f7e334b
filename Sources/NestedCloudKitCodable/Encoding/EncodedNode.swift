import Foundation

/// What a value encodes to before it is mapped onto fields: the encoder's intermediate value.
///
/// Keeping Swift's own kinds here (a `Bool` is still a `Bool`, a `URL` still a `URL`) lets one mapping decide
/// what each becomes, whether it ends up as a field, an element of a list, or part of embedded JSON.
///
/// Only the rare, large cases are `indirect`, so that the common ones stay a few words and allocate nothing.
enum EncodedNode {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case url(URL)
    indirect case location(CloudLocation)
    indirect case asset(CloudAsset)
    /// A reference to a record; `target` is the nested value, queued to be encoded when the field is written.
    indirect case reference(CloudReference, target: PendingRecord?)
    /// A list of one CloudKit type, already mapped: the fast path for arrays of common scalars.
    case list(CloudValue)
    case array([EncodedNode], ArrayShape)
    /// `unordered` marks a `Dictionary`, whose keys are sorted so the output doesn't change from run to run.
    case object([(key: String, value: EncodedNode)], unordered: Bool)
    /// A `nil` that `encodeIfPresent` skipped: left out of embedded JSON, cleared when flattened.
    case skippedNil
}

/// What an unkeyed container's elements are, beyond their values.
struct ArrayShape {
    /// A `Set`'s elements, sorted so the output doesn't change from run to run.
    var isSet = false
    /// A `Dictionary` whose keys aren't strings, written as key, value, key, value: sorted by pairs.
    var isDictionary = false
    /// Elements of an optional type: never a CloudKit list (which can't hold `nil`), whether or not one is `nil`,
    /// so that the field's type doesn't depend on the data.
    var hasOptionalElements = false

    static let list = ArrayShape()
}

/// A place in a value being encoded: a finished node, or a container still being written to.
///
/// Containers are reference types because `Encoder` hands out nested containers that are written to after the
/// call that made them returns.
enum NodeSlot {
    case node(EncodedNode)
    case array(ArrayBuilder)
    case object(ObjectBuilder)
    /// What a `superEncoder` or a nested value's encoder writes, read when the tree is finished.
    case encoder(NodeEncoder)

    /// The finished node.
    func freeze() -> EncodedNode {
        switch self {
        case .node(let node): node
        case .array(let array): .array(array.elements.map { $0.freeze() }, array.shape)
        case .object(let object):
            .object(object.entries.map { ($0.key, $0.value.freeze()) }, unordered: object.isUnordered)
        case .encoder(let encoder): encoder.slot?.freeze() ?? .object([], unordered: false)
        }
    }
}

/// An unkeyed container's elements, in order.
final class ArrayBuilder {
    var elements: [NodeSlot] = []
    var shape = ArrayShape.list
}

/// A keyed container's entries, in the order their keys were first written.
final class ObjectBuilder {
    private(set) var entries: [(key: String, value: NodeSlot)] = []
    private var positions: [String: Int] = [:]
    var isUnordered = false

    /// Sets the entry for a key; writing a key again replaces its value in place, as Foundation's coders do.
    func set(_ slot: NodeSlot, forKey key: String) {
        if let position = positions[key] {
            entries[position].value = slot
        } else {
            positions[key] = entries.count
            entries.append((key, slot))
        }
    }

    /// The slot of a key, if it has been written.
    func slot(forKey key: String) -> NodeSlot? {
        positions[key].map { entries[$0].value }
    }
}

/// A `Set`, whose iteration order changes from run to run; the encoder sorts its elements.
protocol UnorderedSet {}
extension Set: UnorderedSet {}

/// A `Dictionary`, whose iteration order changes from run to run; the encoder sorts its keys.
protocol UnorderedDictionary {}
extension Dictionary: UnorderedDictionary {}
