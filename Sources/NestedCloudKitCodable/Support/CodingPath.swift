/// A coding path kept as a linked list, so that descending into a value costs one small allocation and the
/// array of keys is only built when an error needs it.
indirect enum CodingPath: Sendable {
    case root
    case key(any CodingKey, parent: CodingPath)
    case index(Int, parent: CodingPath)

    func appending(_ key: any CodingKey) -> CodingPath { .key(key, parent: self) }
    func appending(index: Int) -> CodingPath { .index(index, parent: self) }

    /// The keys from the root down.
    var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = self
        while true {
            switch node {
            case .root: return keys.reversed()
            case .key(let key, let parent): keys.append(key); node = parent
            case .index(let index, let parent): keys.append(IndexKey(index)); node = parent
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
