import Foundation

/// What a value encodes to before it is mapped onto fields: the encoder's intermediate value.
///
/// Keeping Swift's own kinds here (a `Bool` is still a `Bool`, a `URL` still a `URL`) lets one mapping decide
/// what each becomes, whether it ends up as a field, an element of a list, or part of embedded JSON.
indirect enum EncodedNode {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case url(URL)
    case location(CloudLocation)
    case asset(CloudAsset)
    case reference(CloudReference, recordType: String)
    /// `unordered` marks a `Set`, whose elements are sorted so the output doesn't change from run to run.
    case array([EncodedNode], unordered: Bool)
    /// `unordered` marks a `Dictionary`, whose keys are sorted for the same reason.
    case object([(key: String, value: EncodedNode)], unordered: Bool)
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
        case .array(let array): .array(array.elements.map { $0.freeze() }, unordered: array.isUnordered)
        case .object(let object):
            .object(object.entries.map { ($0.key, $0.value.freeze()) }, unordered: object.isUnordered)
        case .encoder(let encoder): encoder.slot?.freeze() ?? .object([], unordered: false)
        }
    }
}

/// An unkeyed container's elements, in order.
final class ArrayBuilder {
    var elements: [NodeSlot] = []
    var isUnordered = false
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

/// Collections whose iteration order changes from run to run; the encoder sorts what they give.
protocol UnorderedCollection {}
extension Set: UnorderedCollection {}
extension Dictionary: UnorderedCollection {}
