import Foundation

/// The state of one decode: the records in hand, what the model needs, and the values built so far.
///
/// ``resolve(_:fetch:)`` walks the graph level by level. For each record it learns which referenced records the
/// model decodes, and as which types, by running the model's `init(from:)` once in probing mode, with
/// placeholders for nested records; the records one level needs are fetched together. ``materialize(_:)`` then
/// decodes every record deepest first, so that each nested value is built once, from the cache, and building a
/// deep graph costs no more stack than a shallow one.
final class DecodingSession {
    let options: DecodingOptions
    let root: CloudRecord
    private(set) var records: [CloudRecord.ID: CloudRecord]
    private var missingRecordIDs: Set<CloudRecord.ID> = []
    private(set) var probe: ProbeCollector?

    private var visited: Set<NodeKey> = []
    private var discovered: [Node] = []
    /// For each model type probed, the fields it decodes as records and as which types: other records of the type
    /// are resolved from it without running their model again.
    private var schemas: [ObjectIdentifier: [(field: String, type: any CKDecodable.Type)]] = [:]
    /// Whether records not in hand can still be fetched (not when decoding from records in hand).
    private var canFetchMore = false
    /// Records that materializing reached but resolving hadn't fetched: a model that decodes different fields in
    /// different records. They are fetched and the value built again.
    private(set) var unresolved: [Node] = []

    /// Thrown while materializing at a record that hasn't been fetched yet.
    struct NeedsMoreRecords: Error {}
    /// Each record's value per type, or a mark that it is being decoded (to find cycles): one dictionary, so a
    /// record costs two lookups.
    private var cache: [NodeKey: CacheEntry] = [:]

    private enum CacheEntry {
        case decoding
        case decoded(Result<any CKDecodable, any Error>)
    }

    /// Records nested this deep are decoded one inside another (the stack grows with each); deeper graphs are
    /// resolved first and decoded deepest first.
    static let nestedDecodingDepthLimit = 32

    /// A record to decode as a type; `type` is `nil` when the model that reaches it couldn't be probed.
    struct Node {
        let id: CloudRecord.ID
        let type: (any CKDecodable.Type)?
        let path: CodingPath
        let depth: Int
    }

    struct NodeKey: Hashable {
        let id: CloudRecord.ID
        let type: ObjectIdentifier?

        init(_ id: CloudRecord.ID, _ type: (any CKDecodable.Type)?) {
            self.id = id
            self.type = type.map { ObjectIdentifier($0) }
        }
    }

    init(options: DecodingOptions, root: CloudRecord, recordsInHand: some Sequence<CloudRecord> = []) {
        self.options = options
        self.root = root
        var records: [CloudRecord.ID: CloudRecord] = [:]
        for record in recordsInHand { records[record.id] = record }
        records[root.id] = root
        self.records = records
    }

    // MARK: Resolve

    /// Fetches every record the root's model needs, one level of the graph per round trip.
    func resolve(_ type: any CKDecodable.Type, from database: some CloudDatabase) async throws {
        canFetchMore = true
        guard root.hasReferences else { return }
        try await resolve(from: start(type), database: database)
    }

    /// Fetches what materializing found missing, then what those records need, and forgets the values built so
    /// far so the next materialization sees the new records.
    func resolveUnresolved(from database: some CloudDatabase) async throws {
        let (frontier, needed) = takeUnresolved()
        if let first = needed.first, records.count + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: location(of: first))
        }
        if !needed.isEmpty {
            let nodes = Dictionary(needed.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            do {
                try await database.fetchDistinctRecords(Array(nodes.keys)) { try receive($0, nodes: nodes) }
            } catch let error as CloudDatabaseError {
                throw CKCodableError.databaseError(error, at: location(of: needed[0]))
            } catch let error where !(error is CancellationError || error is CKCodableError) {
                throw CKCodableError.foreignDatabaseError(error, at: location(of: needed[0]))
            }
            for node in needed where records[node.id] == nil { missingRecordIDs.insert(node.id) }
        }
        try await resolve(from: frontier, database: database)
    }

    /// The records materializing found missing, as the next frontier, and those of them to fetch; the values built
    /// so far are forgotten, so the next materialization sees the new records.
    private func takeUnresolved() -> (frontier: [Node], needed: [Node]) {
        var frontier: [Node] = []
        for node in unresolved where visited.insert(NodeKey(node.id, node.type)).inserted || records[node.id] == nil {
            discovered.append(node)
            frontier.append(node)
        }
        unresolved = []
        clearCache()
        return (frontier, frontier.filter { records[$0.id] == nil && !missingRecordIDs.contains($0.id) })
    }

    deinit { clearCache() }

    /// Empties the cache shallowest record first. A cached value holds the values below it, and Swift releases a
    /// value whose descendants have no other owner recursively, a frame per level: in hash order, a deep chain's
    /// last entries could each take half the chain down with them.
    private func clearCache() {
        // Values nested no deeper than the nested-decoding limit release within as many frames: only a deeper
        // graph pays for the ordered pass.
        if discovered.contains(where: { $0.depth > Self.nestedDecodingDepthLimit }) {
            for node in discovered { cache[NodeKey(node.id, node.type)] = nil }
        }
        cache = [:]
    }

    private func resolve(from start: [Node], database: some CloudDatabase) async throws {
        var frontier = start
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            if !needed.isEmpty {
                // The requests of one level are in flight together; each is taken in as it arrives.
                let nodes = Dictionary(needed.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                do {
                    try await database.fetchDistinctRecords(needed.map(\.id)) { try receive($0, nodes: nodes) }
                } catch let error as CloudDatabaseError {
                    throw CKCodableError.databaseError(error, at: location(of: needed[0]))
                } catch let error where !(error is CancellationError || error is CKCodableError) {
                    throw CKCodableError.foreignDatabaseError(error, at: location(of: needed[0]))
                }
                for node in needed where records[node.id] == nil { missingRecordIDs.insert(node.id) }
            }
            frontier = next
        }
    }

    /// Resolves from the records in hand: a shallow graph needs nothing; a deep one is walked as `resolve` walks
    /// a database, without fetching, so that it can be decoded deepest first.
    func resolveInHand(_ type: any CKDecodable.Type) throws {
        guard root.hasReferences, referenceDepth(exceeds: Self.nestedDecodingDepthLimit) else { return }
        var frontier = start(type)
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            for node in needed where records[node.id] == nil { missingRecordIDs.insert(node.id) }
            frontier = next
        }
    }

    // MARK: Many roots, fetched synchronously

    /// Adds the roots that reference other records as nodes of depth 0, to resolve with the first; the others
    /// need nothing resolved, and ``materializeRoots(_:roots:referencing:)`` decodes them from the records in hand.
    func addRoots(_ roots: [CloudRecord], referencing: [Bool], as type: any CKDecodable.Type) -> [Node] {
        var nodes: [Node] = []
        for (record, references) in zip(roots, referencing) where references {
            records[record.id] = record
            guard visited.insert(NodeKey(record.id, type)).inserted else { continue }
            let node = Node(id: record.id, type: type, path: .root, depth: 0)
            discovered.append(node)
            nodes.append(node)
        }
        return nodes
    }

    /// Resolves the roots' graphs level by level, every record of a level in one call of `fetch`: how a local
    /// store reads many models inside one read transaction.
    func resolveSynchronously(
        from start: [Node], fetch: (_ ids: [CloudRecord.ID]) throws -> [CloudRecord]
    ) throws {
        canFetchMore = true
        var frontier = start
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            if !needed.isEmpty { try fetchSynchronously(needed, with: fetch) }
            frontier = next
        }
    }

    /// Fetches what materializing found missing, then what those records need.
    func resolveUnresolvedSynchronously(fetch: (_ ids: [CloudRecord.ID]) throws -> [CloudRecord]) throws {
        let (frontier, needed) = takeUnresolved()
        if !needed.isEmpty { try fetchSynchronously(needed, with: fetch) }
        try resolveSynchronously(from: frontier, fetch: fetch)
    }

    private func fetchSynchronously(
        _ needed: [Node], with fetch: (_ ids: [CloudRecord.ID]) throws -> [CloudRecord]
    ) throws {
        if let first = needed.first, records.count + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: location(of: first))
        }
        do {
            for record in try fetch(needed.map(\.id)) { records[record.id] = record }
        } catch let error as CloudDatabaseError {
            throw CKCodableError.databaseError(error, at: location(of: needed[0]))
        } catch let error where !(error is CancellationError || error is CKCodableError) {
            throw CKCodableError.foreignDatabaseError(error, at: location(of: needed[0]))
        }
        for node in needed where records[node.id] == nil { missingRecordIDs.insert(node.id) }
    }

    /// Decodes every root's value, every record deepest first; a record shared by several roots is decoded once.
    func materializeRoots<Value: CKDecodable>(_ type: Value.Type, roots: [CloudRecord], referencing: [Bool]) throws
        -> [Value]
    {
        probe = nil
        unresolved = []
        for node in discovered.reversed() where node.depth > 0 {
            if let type = node.type, records[node.id] != nil {
                _ = try? decodeRecord(type, id: node.id, at: node.path, nesting: 0)
            }
        }
        var values: [Value] = []
        values.reserveCapacity(roots.count)
        for (root, references) in zip(roots, referencing) {
            // A root another root references was decoded as that one's child: the same value, once.
            // A root that references others goes through the cache, so that a root another root references is
            // decoded once; one that doesn't is decoded from the record in hand, unless a root referencing it
            // already decoded it.
            let value: any CKDecodable
            if references {
                value = try decodeRecord(Value.self, id: root.id, at: .root, nesting: 0)
            } else if !cache.isEmpty, case .decoded(let result)? = cache[NodeKey(root.id, Value.self)] {
                value = try result.get()
            } else {
                value = try decode(Value.self, record: root, at: .root, nesting: 0)
            }
            guard let typed = value as? Value else {
                throw CKCodableError.typeMismatch(
                    expected: "\(Value.self)", found: "\(Swift.type(of: value))", at: location(of: root.id, at: .root))
            }
            values.append(typed)
        }
        return values
    }

    private func start(_ type: any CKDecodable.Type) -> [Node] {
        let rootNode = Node(id: root.id, type: type, path: .root, depth: 0)
        visited.insert(NodeKey(root.id, type))
        discovered.append(rootNode)
        return [rootNode]
    }

    /// The next level: the records the frontier's models reference, and those of them not in hand yet.
    private func expand(_ frontier: [Node]) throws -> (next: [Node], needed: [Node]) {
        var next: [Node] = []
        var needed: [Node] = []
        var requested: Set<CloudRecord.ID> = []
        for node in frontier {
            guard let record = records[node.id] else { continue }
            for child in children(of: record, as: node.type, at: node.path) {
                guard visited.insert(NodeKey(child.id, child.type)).inserted else { continue }
                let childNode = Node(id: child.id, type: child.type, path: child.path, depth: node.depth + 1)
                guard childNode.depth <= options.maximumDepth else {
                    throw CKCodableError.depthLimitExceeded(options.maximumDepth, at: location(of: childNode))
                }
                discovered.append(childNode)
                next.append(childNode)
                if records[child.id] == nil, !missingRecordIDs.contains(child.id), requested.insert(child.id).inserted {
                    needed.append(childNode)
                    // Checked as the level grows, so that a record listing a million references stops at the
                    // limit rather than after taking in all of them.
                    guard records.count + needed.count <= options.maximumRecordCount else {
                        throw CKCodableError.recordLimitExceeded(
                            options.maximumRecordCount, at: location(of: childNode))
                    }
                }
            }
        }
        return (next, needed)
    }

    private func receive(
        _ results: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>], nodes: [CloudRecord.ID: Node]
    ) throws {
        for (id, result) in results {
            switch result {
            case .success(let record): records[id] = record
            case .failure(.unknownItem): missingRecordIDs.insert(id)
            case .failure(let error):
                let node = nodes[id] ?? Node(id: id, type: nil, path: .root, depth: 0)
                throw CKCodableError.databaseError(error, at: location(of: node))
            }
        }
    }

    /// The records a record's model decodes: from its type's schema, or by probing it (which records the
    /// schema); if the probe can't finish, every reference of the record that it didn't reach.
    private func children(
        of record: CloudRecord, as type: (any CKDecodable.Type)?, at path: CodingPath
    ) -> [(id: CloudRecord.ID, type: (any CKDecodable.Type)?, path: CodingPath)] {
        guard record.hasReferences else { return [] }
        var found: [(id: CloudRecord.ID, type: (any CKDecodable.Type)?, path: CodingPath)] = []
        if let type, let schema = schemas[ObjectIdentifier(type)] {
            for (field, childType) in schema {
                switch record.fields[field] {
                case .reference(let reference)?:
                    found.append((reference.recordID, childType, path.appending(NamedKey(field))))
                case .referenceList(let references)?:
                    let fieldPath = path.appending(NamedKey(field))
                    for (index, reference) in references.enumerated() {
                        found.append((reference.recordID, childType, fieldPath.appending(index: index)))
                    }
                default:
                    break
                }
            }
            return found
        }
        if let type {
            let collector = ProbeCollector()
            probe = collector
            defer { probe = nil }
            do {
                _ = try type.init(
                    from: ValueDecoder(session: self, source: .record(record), path: path, record: record, field: nil))
                if let schema = collector.schema { schemas[ObjectIdentifier(type)] = schema }
                return collector.children.map { ($0.id, $0.type, $0.path) }
            } catch {
                found = collector.children.map { ($0.id, $0.type, $0.path) }
            }
        }
        let reached = Set(found.map(\.id))
        for (name, value) in record.fields {
            switch value {
            case .reference(let reference) where !reached.contains(reference.recordID):
                found.append((reference.recordID, nil, path.appending(NamedKey(name))))
            case .referenceList(let references):
                for (index, reference) in references.enumerated() where !reached.contains(reference.recordID) {
                    found.append((reference.recordID, nil, path.appending(NamedKey(name)).appending(index: index)))
                }
            default:
                break
            }
        }
        return found
    }

    /// Whether the references of the records in hand go deeper below the root than `limit`.
    private func referenceDepth(exceeds limit: Int) -> Bool {
        var seen: Set<CloudRecord.ID> = [root.id]
        var level = [root.id]
        var depth = 0
        while !level.isEmpty {
            if depth > limit { return true }
            var next: [CloudRecord.ID] = []
            for id in level {
                for target in records[id]?.referencedRecordIDs ?? [] where seen.insert(target).inserted {
                    next.append(target)
                }
            }
            level = next
            depth += 1
        }
        return false
    }

    // MARK: Materialize

    /// Decodes the root's value, every record deepest first.
    func materialize<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        probe = nil
        unresolved = []
        for node in discovered.reversed() where node.depth > 0 {
            if let type = node.type, records[node.id] != nil {
                _ = try? decodeRecord(type, id: node.id, at: node.path, nesting: 0)
            }
        }
        let value = try decodeRecord(Value.self, id: root.id, at: .root, nesting: 0, caching: false)
        guard let typed = value as? Value else {
            throw CKCodableError.typeMismatch(
                expected: "\(Value.self)", found: "\(Swift.type(of: value))", at: location(of: root.id, at: .root))
        }
        return typed
    }

    /// The value of a record, decoded once per type and cached; the result (value or error) is remembered, so a
    /// parent sees exactly what decoding the record on its own would give.
    func decodeRecord(
        _ type: any CKDecodable.Type, id: CloudRecord.ID, at path: CodingPath, nesting: Int, caching: Bool = true
    ) throws -> any CKDecodable {
        let key = NodeKey(id, type)
        switch cache[key] {
        case .decoded(let result)?: return try result.get()
        case .decoding?: throw CKCodableError.referenceCycle(id, at: location(of: id, at: path))
        case nil: break
        }
        guard let record = records[id] else { throw CKCodableError.missingRecord(id, at: location(of: id, at: path)) }
        guard nesting <= Self.nestedDecodingDepthLimit else {
            throw CKCodableError.depthLimitExceeded(Self.nestedDecodingDepthLimit, at: location(of: id, at: path))
        }
        if caching { cache[key] = .decoding }
        let result = Result<any CKDecodable, any Error> { try decode(type, record: record, at: path, nesting: nesting) }
        if caching { cache[key] = .decoded(result) }
        return try result.get()
    }

    /// Runs the model's initializer on a record, and checks the record's type.
    private func decode(_ type: any CKDecodable.Type, record: CloudRecord, at path: CodingPath, nesting: Int) throws
        -> any CKDecodable
    {
        let decoder = ValueDecoder(
            session: self, source: .record(record), path: path, record: record, field: nil, nesting: nesting)
        let value: any CKDecodable
        do {
            value = try type.init(from: decoder)
        } catch {
            throw CKCodableError.fromModel(error, recordID: record.id, recordPath: path)
        }
        guard value.cloudKitRecordType == record.recordType else {
            throw CKCodableError.recordTypeMismatch(
                expected: value.cloudKitRecordType, found: record.recordType, at: location(of: record.id, at: path))
        }
        return value
    }

    /// The value of a referenced record, or `nil` if the record doesn't exist. While probing, a placeholder.
    func decodeReferenced(
        _ type: any CKDecodable.Type, reference: CloudReference, at path: CodingPath, field: String?, nesting: Int
    ) throws -> (any CKDecodable)? {
        let id = reference.recordID
        if missingRecordIDs.contains(id) { return nil }
        if let probe {
            probe.children.append((id, type, path))
            probe.note(field: field, type: type)
            return try PlaceholderDecoder.placeholder(type)
        }
        guard records[id] != nil else {
            guard canFetchMore else { return nil }
            unresolved.append(Node(id: id, type: type, path: path, depth: 0))
            throw NeedsMoreRecords()
        }
        return try decodeRecord(type, id: id, at: path, nesting: nesting + 1)
    }

    // MARK: Locations

    private func location(of node: Node) -> DecodingLocation {
        location(of: node.id, at: node.path)
    }

    private func location(of id: CloudRecord.ID, at path: CodingPath) -> DecodingLocation {
        DecodingLocation(path: path, recordID: id, field: nil)
    }
}

/// What a probe of one record found: the records its model decodes, as which types, and from which fields.
final class ProbeCollector {
    var children: [(id: CloudRecord.ID, type: any CKDecodable.Type, path: CodingPath)] = []
    private var fieldTypes: [(field: String, type: any CKDecodable.Type)] = []
    /// Whether a record was decoded from somewhere other than a named field (the schema can't describe it).
    private var hasUnnamedRecords = false

    /// Notes that the model decodes the field as records of the type (whether or not the field is there).
    func note(field: String?, type: any CKDecodable.Type) {
        guard let field else {
            hasUnnamedRecords = true
            return
        }
        if !fieldTypes.contains(where: { $0.field == field && $0.type == type }) { fieldTypes.append((field, type)) }
    }

    /// The fields the model decodes as records, if every record came from a named field.
    var schema: [(field: String, type: any CKDecodable.Type)]? {
        hasUnnamedRecords ? nil : fieldTypes
    }
}
