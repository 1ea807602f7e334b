/// A coding path kept as a linked list, so that descending into a value costs one small allocation and the
/// array of keys is only built when an error needs it.
struct CodingPath: Sendable {
    /// The last step; `nil` at the root.
    private let last: Step?
    /// An index after ``last`` that isn't a step yet, or ``noIndex``: the path of each element of a list of models is
    /// made when the element is queued, and nearly always used only to make its fields' paths for errors that never
    /// happen. So the element's index is kept inline, and becomes a step only when a key is appended after it.
    private let trailingIndex: Int

    private static let noIndex = Int.min

    /// The path of the root value.
    static let root = CodingPath(last: nil, trailingIndex: noIndex)

    /// The path through the given keys, from the root down.
    init(keys: [any CodingKey]) {
        self = keys.reduce(CodingPath.root) { $0.appending($1) }
    }

    private init(last: Step?, trailingIndex: Int) {
        self.last = last
        self.trailingIndex = trailingIndex
    }

    func appending(_ key: any CodingKey) -> CodingPath {
        CodingPath(last: Step(.key(key), parent: lastStep), trailingIndex: Self.noIndex)
    }

    func appending(index: Int) -> CodingPath {
        guard trailingIndex == Self.noIndex else {
            return CodingPath(last: Step(.index(index), parent: lastStep), trailingIndex: Self.noIndex)
        }
        return CodingPath(last: last, trailingIndex: index)
    }

    /// The last step, the trailing index made into one.
    private var lastStep: Step? {
        trailingIndex == Self.noIndex ? last : Step(.index(trailingIndex), parent: last)
    }

    /// The keys from the root down.
    var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        if trailingIndex != Self.noIndex { keys.append(IndexKey(trailingIndex)) }
        var step = last
        while let current = step {
            switch current.element {
            case .key(let key): keys.append(key)
            case .index(let index): keys.append(IndexKey(index))
            }
            step = current.parent
        }
        return keys.reversed()
    }

    /// One step of a path, shared by every path that goes through it.
    ///
    /// A class with its own `deinit`, not an indirect enum: a reference chain 100,000 records deep has paths
    /// 200,000 steps long, and releasing one recursively, a frame per step, overflows the stack.
    private final class Step: @unchecked Sendable {
        enum Element {
            case key(any CodingKey)
            case index(Int)
        }

        let element: Element
        /// Only ever changed by `deinit`, on steps that nothing else references (unchecked `Sendable` for that).
        private(set) var parent: Step?

        init(_ element: Element, parent: Step?) {
            self.element = element
            self.parent = parent
        }

        /// Unlinks the ancestors that only this step kept alive, one at a time, so that each is released
        /// without a parent of its own to release.
        deinit {
            guard var ancestor = parent else { return }
            parent = nil
            while isKnownUniquelyReferenced(&ancestor), let next = ancestor.parent {
                ancestor.parent = nil
                ancestor = next
            }
        }
    }
}

/// A field's coding path, built only when an error needs it: most fields never fail, and building a path
/// allocates.
struct FieldPath {
    let parent: CodingPath
    let key: (any CodingKey)?

    var path: CodingPath { key.map { parent.appending($0) } ?? parent }

    func appending(_ key: any CodingKey) -> FieldPath { FieldPath(parent: path, key: key) }
    func appending(index: Int) -> FieldPath { FieldPath(parent: path.appending(index: index), key: nil) }
}

/// The key of an element of an unkeyed container, spelled as Foundation's coders spell it (`Index 3`).
struct IndexKey: CodingKey, Sendable {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

/// A coding key with any name, for the keys the coders make themselves (`super`, flattened field names).
struct NamedKey: CodingKey, Sendable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = NamedKey("super")
}

extension Array where Element == any CodingKey {
    /// The path as a Swift expression would spell it: `students[2].address.city`.
    var pathDescription: String {
        guard !isEmpty else { return "<root>" }
        var description = ""
        for key in self {
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") {
                description += "[\(index)]"
            } else {
                if !description.isEmpty { description += "." }
                description += key.stringValue
            }
        }
        return description
    }
}
