import Foundation

/// Maps an ``EncodedNode`` onto a record's fields: the value mapping of the README's table, in one place.
struct FieldMapper {
    let options: EncodingOptions

    /// Writes the node as the field `name` (or, for a flattened nested value, the fields under that name).
    func write(_ node: EncodedNode, named name: String, at path: CodingPath, into writer: inout FieldWriter) throws {
        switch node {
        case .null:
            try writer.clear(name, at: path)
        case .array(let elements, let unordered):
            if elements.isEmpty {
                // CloudKit can't create a field from an empty list; a missing list decodes as empty.
                try writer.clear(name, at: path)
            } else if let list = listValue(of: elements, unordered: unordered) {
                try writer.set(list, named: name, at: path)
            } else {
                try writer.set(.string(EmbeddedJSON.text(for: node, at: path)), named: name, at: path)
            }
        case .object(let entries, let unordered):
            switch options.nestedValueEncodingStrategy {
            case .json:
                try writer.set(.string(EmbeddedJSON.text(for: node, at: path)), named: name, at: path)
            case .flattened(let separator):
                let ordered = unordered ? entries.sorted { $0.key < $1.key } : entries
                for (key, value) in ordered {
                    try write(value, named: name + separator + key, at: path.appending(NamedKey(key)), into: &writer)
                }
            }
        case .bool(let bool): try writer.set(.int64(bool ? 1 : 0), named: name, at: path)
        case .int(let int): try writer.set(.int64(int), named: name, at: path)
        case .double(let double): try writer.set(.double(double), named: name, at: path)
        case .string(let string): try writer.set(.string(string), named: name, at: path)
        case .date(let date): try writer.set(.date(CloudValue.normalizedDate(date)), named: name, at: path)
        case .data(let data):
            try writer.set(storesAsAsset(byteCount: data.count) ? .asset(CloudAsset(data: data)) : .bytes(data),
                           named: name, at: path)
        case .url(let url):
            try writer.set(url.isFileURL ? .asset(CloudAsset(fileURL: url)) : .string(url.absoluteString),
                           named: name, at: path)
        case .location(let location): try writer.set(.location(location), named: name, at: path)
        case .asset(let asset): try writer.set(.asset(asset), named: name, at: path)
        case .reference(let reference, _): try writer.set(.reference(reference), named: name, at: path)
        }
    }

    /// The list of an array whose elements all map to one CloudKit type, or `nil` if they don't.
    func listValue(of elements: [EncodedNode], unordered: Bool) -> CloudValue? {
        guard let first = elements.first else { return nil }
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
            return .int64List(unordered ? ints.sorted() : ints)
        case .double:
            guard let doubles = collect(elements, { if case .double(let double) = $0 { double } else { nil } })
            else { return nil }
            return .doubleList(unordered ? doubles.sorted() : doubles)
        case .string:
            guard let strings = collect(elements, { if case .string(let string) = $0 { string } else { nil } })
            else { return nil }
            return .stringList(unordered ? strings.sorted() : strings)
        case .date:
            guard let dates = collect(elements, { if case .date(let date) = $0 { CloudValue.normalizedDate(date) } else { nil } })
            else { return nil }
            return .dateList(unordered ? dates.sorted() : dates)
        case .data:
            guard var datas = collect(elements, { if case .data(let data) = $0 { data } else { nil } })
            else { return nil }
            if unordered { datas.sort { $0.lexicographicallyPrecedes($1) } }
            let total = datas.reduce(0) { $0 + $1.count }
            return storesAsAsset(byteCount: total) ? .assetList(datas.map { CloudAsset(data: $0) }) : .bytesList(datas)
        case .url:
            guard var urls = collect(elements, { if case .url(let url) = $0 { url } else { nil } })
            else { return nil }
            if unordered { urls.sort { $0.absoluteString < $1.absoluteString } }
            // A list has one type: file URLs are assets only when every element is one.
            if urls.allSatisfy(\.isFileURL) { return .assetList(urls.map { CloudAsset(fileURL: $0) }) }
            return .stringList(urls.map(\.absoluteString))
        case .location:
            guard var locations = collect(elements, { if case .location(let location) = $0 { location } else { nil } })
            else { return nil }
            if unordered { locations.sort { ($0.latitude, $0.longitude, $0.altitude) < ($1.latitude, $1.longitude, $1.altitude) } }
            return .locationList(locations)
        case .asset:
            guard var assets = collect(elements, { if case .asset(let asset) = $0 { asset } else { nil } })
            else { return nil }
            if unordered { assets.sort { $0.sortKey < $1.sortKey } }
            return .assetList(assets)
        case .reference:
            guard var references = collect(elements, { if case .reference(let reference, _) = $0 { reference } else { nil } })
            else { return nil }
            if unordered { references.sort { $0.recordID.recordName < $1.recordID.recordName } }
            return .referenceList(references)
        case .null, .array, .object:
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

    private func storesAsAsset(byteCount: Int) -> Bool {
        switch options.dataEncodingStrategy {
        case .bytes: false
        case .asset: true
        case .automatic(let threshold): byteCount > threshold
        }
    }
}

private extension CloudAsset {
    /// An order for assets in a `Set`, which has none of its own.
    var sortKey: String { fileURL?.absoluteString ?? data?.base64EncodedString() ?? receipt ?? "" }
}
