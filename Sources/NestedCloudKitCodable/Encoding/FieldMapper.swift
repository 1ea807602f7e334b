import Foundation

/// Maps an ``EncodedNode`` onto a record's fields: the value mapping of "How Values Are Stored", in one place.
///
/// A field's CloudKit type must not depend on the data, because CloudKit fixes a field's type when the field is
/// first saved: an array of optionals is always JSON (even with no `nil` in it), a dictionary always JSON, and
/// `Data` is bytes or an asset by the strategy and the field's name.
struct FieldMapper {
    let options: EncodingOptions
    /// The fields the record's type stores as assets, whatever the encoder's strategy.
    var assetFields: Set<String> = []

    /// Writes the node as the field `name` (or, for a flattened nested value, the fields under that name).
    func write(_ node: EncodedNode, named name: String, at path: FieldPath, into writer: inout FieldWriter) throws {
        switch node {
        case .null, .skippedNil:
            try writer.clear(name, at: path)
        case .array(let elements, let shape):
            if elements.isEmpty {
                // CloudKit can't create a field from an empty list; a missing list decodes as empty.
                try writer.clear(name, at: path)
            } else if let list = try listValue(of: elements, shape: shape, field: name, at: path) {
                try writer.set(list, named: name, at: path)
                for case .reference(_, let target?) in elements { writer.graph.enqueue(target) }
            } else {
                try writer.set(.string(EmbeddedJSON.text(for: node, at: path.path)), named: name, at: path)
            }
        case .object(let entries, let unordered):
            switch options.nestedValueEncodingStrategy {
            case .json:
                try writer.set(.string(EmbeddedJSON.text(for: node, at: path.path)), named: name, at: path)
            case .flattened(let separator):
                writer.mayRepeatNames = true
                let ordered = unordered ? entries.sorted { $0.key < $1.key } : entries
                for (key, value) in ordered {
                    try write(value, named: name + separator + key, at: path.appending(NamedKey(key)), into: &writer)
                }
            }
        case .list(let list):
            if list.isEmptyList {
                try writer.clear(name, at: path)
            } else {
                try writer.set(list, named: name, at: path)
            }
        case .bool(let bool): try writer.set(.int64(bool ? 1 : 0), named: name, at: path)
        case .int(let int): try writer.set(.int64(int), named: name, at: path)
        case .double(let double): try writer.set(.double(double), named: name, at: path)
        case .string(let string): try writer.set(.string(string), named: name, at: path)
        case .date(let date): try writer.set(.date(CloudValue.normalizedDate(date)), named: name, at: path)
        case .data(let data):
            let value: CloudValue =
                storesAsAsset(field: name, byteCount: data.count) ? .asset(CloudAsset(data: data)) : .bytes(data)
            try writer.set(value, named: name, at: path)
        case .url(let url):
            try writer.set(
                url.isFileURL ? .asset(CloudAsset(fileURL: url)) : .string(url.absoluteString), named: name, at: path)
        case .location(let location): try writer.set(.location(location), named: name, at: path)
        case .asset(let asset): try writer.set(.asset(asset), named: name, at: path)
        case .reference(let reference, let target):
            try writer.set(.reference(reference), named: name, at: path)
            if let target { writer.graph.enqueue(target) }
        }
    }

    /// The list of an array whose elements all map to one CloudKit type, or `nil` for an array stored as JSON.
    func listValue(of elements: [EncodedNode], shape: ArrayShape, field: String, at path: FieldPath) throws
        -> CloudValue?
    {
        guard !shape.isDictionary, !shape.hasOptionalElements, let first = elements.first else { return nil }
        let sorted = shape.isSet
        switch first {
        case .bool, .int:
            var ints: [Int64] = []
            ints.reserveCapacity(elements.count)
            for element in elements {
                switch element {
                case .int(let int): ints.append(int)
                case .bool(let bool): ints.append(bool ? 1 : 0)
                default: return nil
                }
            }
            return .int64List(sorted ? ints.sorted() : ints)
        case .double:
            guard let doubles = collect(elements, { if case .double(let double) = $0 { double } else { nil } }) else {
                return nil
            }
            return .doubleList(sorted ? doubles.sorted() : doubles)
        case .string:
            guard let strings = collect(elements, { if case .string(let string) = $0 { string } else { nil } }) else {
                return nil
            }
            return .stringList(sorted ? strings.sorted() : strings)
        case .date:
            guard
                let dates = collect(
                    elements, { if case .date(let date) = $0 { CloudValue.normalizedDate(date) } else { nil } })
            else { return nil }
            return .dateList(sorted ? dates.sorted() : dates)
        case .data:
            guard var datas = collect(elements, { if case .data(let data) = $0 { data } else { nil } }) else {
                return nil
            }
            if sorted { datas.sort { $0.lexicographicallyPrecedes($1) } }
            let total = datas.reduce(0) { $0 + $1.count }
            return storesAsAsset(field: field, byteCount: total)
                ? .assetList(datas.map { CloudAsset(data: $0) }) : .bytesList(datas)
        case .url:
            guard var urls = collect(elements, { if case .url(let url) = $0 { url } else { nil } }) else { return nil }
            if sorted { urls.sort { $0.absoluteString < $1.absoluteString } }
            let files = urls.count { $0.isFileURL }
            if files == urls.count { return .assetList(urls.map { CloudAsset(fileURL: $0) }) }
            if files == 0 { return .stringList(urls.map(\.absoluteString)) }
            throw CKCodableError.mixedURLList(at: path.path)
        case .location:
            guard var locations = collect(elements, { if case .location(let location) = $0 { location } else { nil } })
            else { return nil }
            if sorted { locations.sort { $0.sortKey.lexicographicallyPrecedes($1.sortKey) } }
            return .locationList(locations)
        case .asset:
            guard var assets = collect(elements, { if case .asset(let asset) = $0 { asset } else { nil } }) else {
                return nil
            }
            if sorted { assets.sort { $0.sortKey.lexicographicallyPrecedes($1.sortKey) } }
            return .assetList(assets)
        case .reference:
            guard
                var references = collect(
                    elements, { if case .reference(let reference, _) = $0 { reference } else { nil } })
            else { return nil }
            if sorted { references.sort { $0.sortKey.lexicographicallyPrecedes($1.sortKey) } }
            return .referenceList(references)
        case .null, .skippedNil, .array, .object, .list:
            return nil
        }
    }

    private func collect<Element>(_ nodes: [EncodedNode], _ element: (EncodedNode) -> Element?) -> [Element]? {
        var elements: [Element] = []
        elements.reserveCapacity(nodes.count)
        for node in nodes {
            guard let value = element(node) else { return nil }
            elements.append(value)
        }
        return elements
    }

    private func storesAsAsset(field: String, byteCount: Int) -> Bool {
        if !assetFields.isEmpty, assetFields.contains(field) { return true }
        return switch options.dataEncodingStrategy {
        case .bytes: false
        case .asset: true
        case .assets(let fields): fields.contains(field)
        case .automatic(let threshold): byteCount > threshold
        }
    }
}

// Orders for the elements of a `Set`, which has none of its own: every stored part takes part, so two different
// elements never tie.
extension CloudLocation {
    fileprivate var sortKey: [Double] {
        [
            latitude, longitude, altitude, horizontalAccuracy, verticalAccuracy, course, speed,
            timestamp?.timeIntervalSince1970 ?? -.infinity,
        ]
    }
}

extension CloudAsset {
    fileprivate var sortKey: [String] {
        [
            fileURL?.absoluteString ?? "", data?.base64EncodedString() ?? "", size.map { String($0) } ?? "",
            fileChecksum ?? "", referenceChecksum ?? "", wrappingKey ?? "", receipt ?? "", downloadURL ?? "",
        ]
    }
}

extension CloudReference {
    fileprivate var sortKey: [String] {
        [recordID.recordName, recordID.zoneID.zoneName, recordID.zoneID.ownerName, action.rawValue]
    }
}
