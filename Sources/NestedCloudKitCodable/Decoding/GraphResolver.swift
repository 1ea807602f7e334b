import Foundation

/// Walks a decode's graph level by level: for each record it learns which referenced records the model decodes, and
/// as which types, by running the model's `init(from:)` once in probing mode, with placeholders for nested records
/// (or from what a probe of the type learned before); the records one level needs are fetched together, from a
/// database, through a synchronous fetch (a local store's read), or not at all (records in hand).
///
/// It holds no state of its own: what it learns is the session's (``DecodingSession``).
struct GraphResolver {
    let session: DecodingSession

    private var options: DecodingOptions { session.options }

    /// Fetches every record the root's model needs, one level of the graph per round trip.
    func resolve(_ type: any CKDecodable.Type, from database: some CloudDatabase) async throws {
        session.canFetchMore = true
        guard session.root.hasReferences else { return }
        try await resolve(from: start(type), database: database)
    }

    /// Fetches what materializing found missing, then what those records need, and forgets the values built so
    /// far so the next materialization sees the new records.
    func resolveUnresolved(from database: some CloudDatabase) async throws {
        let (frontier, needed) = takeUnresolved()
        try await fetch(needed, from: database)
        try await resolve(from: frontier, database: database)
    }

    /// The records materializing found missing, as the next frontier, and those of them to fetch; the values built
    /// so far are forgotten, so the next materialization sees the new records.
    private func takeUnresolved() -> (frontier: [DecodingSession.Node], needed: [DecodingSession.Node]) {
        var frontier: [DecodingSession.Node] = []
        var needed: [DecodingSession.Node] = []
        for node in session.takeUnresolved()
        where session.visit(node.slot, as: node.type) || session.recordIndex(of: node.slot) == nil {
            session.discover(node)
            frontier.append(node)
            if session.request(node.slot) { needed.append(node) }
        }
        session.clearCache()
        return (frontier, needed)
    }

    private func resolve(from start: [DecodingSession.Node], database: some CloudDatabase) async throws {
        var frontier = start
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            try await fetch(needed, from: database)
            frontier = next
        }
    }

    /// Fetches the records of one level, in flight together; each is taken in as it arrives.
    private func fetch(_ needed: [DecodingSession.Node], from database: some CloudDatabase) async throws {
        guard let first = needed.first else { return }
        if session.recordCount + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: session.location(of: first))
        }
        let nodes = Dictionary(
            needed.map { (session.id(of: $0.slot), $0) }, uniquingKeysWith: { first, _ in first })
        do {
            try await database.fetchDistinctRecords(Array(nodes.keys)) { try receive($0, nodes: nodes) }
        } catch let error as CloudDatabaseError {
            throw CKCodableError.databaseError(error, at: session.location(of: first))
        } catch let error where !(error is CancellationError || error is CKCodableError) {
            throw CKCodableError.foreignDatabaseError(error, at: session.location(of: first))
        }
        for node in needed { session.settle(node.slot) }
    }

    /// Resolves from the records in hand a graph too deep to decode each record inside its parent (see
    /// ``GraphMaterializer/materializeInHand(_:)``): it is walked as `resolve` walks a database, without fetching,
    /// so that it can be decoded deepest first.
    func resolveInHand(_ type: any CKDecodable.Type) throws {
        guard session.root.hasReferences else { return }
        var frontier = start(type)
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            for node in needed { session.settle(node.slot) }
            frontier = next
        }
    }

    // MARK: Many roots, fetched synchronously

    /// Adds the roots that reference other records as nodes of depth 0, to resolve with the first; the others
    /// need nothing resolved, and ``GraphMaterializer/materializeRoots(_:roots:referencing:)`` decodes them from
    /// the records in hand.
    func addRoots(_ roots: [CloudRecord], referencing: [Bool], as type: any CKDecodable.Type)
        -> [DecodingSession.Node]
    {
        var nodes: [DecodingSession.Node] = []
        for (record, references) in zip(roots, referencing) where references {
            let slot = session.take(record)
            session.noteReached(slot)
            guard session.visit(slot, as: type) else { continue }
            let node = DecodingSession.Node(slot: slot, type: type, path: .root, depth: 0)
            session.discover(node)
            nodes.append(node)
        }
        return nodes
    }

    /// Resolves the roots' graphs level by level, every record of a level in one call of `fetch`: how a local
    /// store reads many models inside one read transaction.
    func resolveSynchronously(from start: [DecodingSession.Node], fetch: CKRecordDecoder.RecordFetch) throws {
        session.canFetchMore = true
        var frontier = start
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            if !needed.isEmpty { try fetchSynchronously(needed, with: fetch) }
            frontier = next
        }
    }

    /// Fetches what materializing found missing, then what those records need.
    func resolveUnresolvedSynchronously(fetch: CKRecordDecoder.RecordFetch) throws {
        let (frontier, needed) = takeUnresolved()
        if !needed.isEmpty { try fetchSynchronously(needed, with: fetch) }
        try resolveSynchronously(from: frontier, fetch: fetch)
    }

    private func fetchSynchronously(_ needed: [DecodingSession.Node], with fetch: CKRecordDecoder.RecordFetch) throws {
        if let first = needed.first, session.recordCount + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: session.location(of: first))
        }
        do {
            try fetch(needed.map { session.id(of: $0.slot) }) { session.takeRequested($0) }
        } catch let error as CloudDatabaseError {
            throw CKCodableError.databaseError(error, at: session.location(of: needed[0]))
        } catch let error where !(error is CancellationError || error is CKCodableError) {
            throw CKCodableError.foreignDatabaseError(error, at: session.location(of: needed[0]))
        }
        for node in needed { session.settle(node.slot) }
    }

    // MARK: Levels

    private func start(_ type: any CKDecodable.Type) -> [DecodingSession.Node] {
        session.indexRoot()
        let rootNode = DecodingSession.Node(slot: session.rootSlot, type: type, path: .root, depth: 0)
        _ = session.visit(session.rootSlot, as: type)
        session.discover(rootNode)
        return [rootNode]
    }

    /// The next level: the records the frontier's models reference, and those of them not in hand yet.
    private func expand(_ frontier: [DecodingSession.Node]) throws
        -> (next: [DecodingSession.Node], needed: [DecodingSession.Node])
    {
        var next: [DecodingSession.Node] = []
        var needed: [DecodingSession.Node] = []
        for node in frontier {
            guard let index = session.recordIndex(of: node.slot) else { continue }
            try forEachChild(of: index, as: node.type, at: node.path) { id, type, path in
                let slot = session.slot(for: id)
                session.noteReached(slot)
                guard session.visit(slot, as: type) else { return }
                let childNode = DecodingSession.Node(slot: slot, type: type, path: path, depth: node.depth + 1)
                guard childNode.depth <= options.maximumDepth else {
                    throw CKCodableError.depthLimitExceeded(options.maximumDepth, at: session.location(of: childNode))
                }
                session.discover(childNode)
                next.append(childNode)
                if session.request(slot) {
                    needed.append(childNode)
                    // Checked as the level grows, so that a record listing a million references stops at the
                    // limit rather than after taking in all of them.
                    guard session.recordCount + needed.count <= options.maximumRecordCount else {
                        throw CKCodableError.recordLimitExceeded(
                            options.maximumRecordCount, at: session.location(of: childNode))
                    }
                }
            }
        }
        return (next, needed)
    }

    private func receive(
        _ results: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>],
        nodes: [CloudRecord.ID: DecodingSession.Node]
    ) throws {
        for (id, result) in results {
            switch result {
            case .success(let record): session.take(record)
            case .failure(let error) where error.code == .unknownItem: session.markMissing(session.slot(for: id))
            case .failure(let error):
                throw CKCodableError.databaseError(error, at: session.location(of: id, at: nodes[id]?.path ?? .root))
            }
        }
    }

    /// Calls `body` with each record a record's model decodes: from its type's schema, or by probing it (which
    /// records the schema); if the probe can't finish, every reference of the record that it didn't reach.
    private func forEachChild(
        of index: Int, as type: (any CKDecodable.Type)?, at path: CodingPath,
        _ body: (_ id: CloudRecord.ID, _ type: (any CKDecodable.Type)?, _ path: CodingPath) throws -> Void
    ) throws {
        let record = session.records[index]
        guard record.hasReferences else { return }
        if let type, let schema = session.schema(of: type) {
            for (field, childType) in schema {
                switch record.fields[field] {
                case .reference(let reference)?:
                    try body(reference.recordID, childType, path.appending(NamedKey(field)))
                case .referenceList(let references)?:
                    let fieldPath = path.appending(NamedKey(field))
                    // Each reference may be a record met for the first time: room for all of them at once.
                    session.reserveSlots(references.count)
                    for index in references.indices {
                        try body(references[index].recordID, childType, fieldPath.appending(index: index))
                    }
                default:
                    break
                }
            }
            return
        }
        let (reached, finished) = probe(index, as: type, at: path)
        for child in reached { try body(child.id, child.type, child.path) }
        if finished { return }
        try forEachReference(in: record, notIn: Set(reached.map(\.id)), at: path, body)
    }

    /// Runs the model's initializer on the record in probing mode: the records it decodes (with placeholders for
    /// them), and whether it finished; a probe that finishes teaches the type's schema.
    private func probe(_ index: Int, as type: (any CKDecodable.Type)?, at path: CodingPath)
        -> (reached: [(id: CloudRecord.ID, type: (any CKDecodable.Type)?, path: CodingPath)], finished: Bool)
    {
        guard let type else { return ([], false) }
        let collector = ProbeCollector()
        session.probe = collector
        defer { session.probe = nil }
        var finished = false
        do {
            _ = try GraphMaterializer(session: session).initialize(
                type, from: ValueDecoder(session: session, source: .record, path: path, record: index, field: nil))
            if let schema = collector.schema { session.setSchema(schema, of: type) }
            finished = true
        } catch {
            finished = false
        }
        return (collector.children.map { ($0.id, $0.type, $0.path) }, finished)
    }

    /// Calls `body` with every reference of a record but those named, as records of no known type: what a model
    /// whose probe couldn't finish may decode.
    private func forEachReference(
        in record: CloudRecord, notIn reachedIDs: Set<CloudRecord.ID>, at path: CodingPath,
        _ body: (_ id: CloudRecord.ID, _ type: (any CKDecodable.Type)?, _ path: CodingPath) throws -> Void
    ) throws {
        for (name, value) in record.fields {
            switch value {
            case .reference(let reference) where !reachedIDs.contains(reference.recordID):
                try body(reference.recordID, nil, path.appending(NamedKey(name)))
            case .referenceList(let references):
                for (index, reference) in references.enumerated() where !reachedIDs.contains(reference.recordID) {
                    try body(reference.recordID, nil, path.appending(NamedKey(name)).appending(index: index))
                }
            default:
                break
            }
        }
    }
}
