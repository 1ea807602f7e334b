import Foundation

/// The state of one decode: the records in hand, what the model needs, and the values built so far.
///
/// ``resolve(_:fetch:)`` walks the graph level by level. For each record it learns which referenced records the
/// model decodes, and as which types, by running the model's `init(from:)` once in probing mode, with
/// placeholders for nested records; the records one level needs are fetched together. ``materialize(_:)`` then
/// decodes every record deepest first, so that each nested value is built once, from the cache, and building a
/// deep graph costs no more stack than a shallow one.
///
/// Each record ID is hashed once, when the session first meets it; from then on the record, whether it is
/// missing, the types it was reached as and its decoded values are found at the ID's slot, by index. A graph of
/// ten thousand records is hashed ten thousand times, not ten times that.
///
/// The session's state isn't checked for exclusive access at run time (`@exclusivity(unchecked)`): one decode uses
/// it, on one thread, and no access to it is held across a call into a model; the checks cost as much as the rest
/// of setting up a decode of one record.
final class DecodingSession {
    let options: DecodingOptions
    /// The records in hand, each once, where every decoder of a record reads it in place (by its index): a record
    /// has many reference-counted parts, and a copy or a box of its own per record would cost as much as reading
    /// it. A graph's records are taken as they are, without a copy. Records are only added between runs of a
    /// model's initializer (while resolving), never during one, so a decoder's read is never invalidated.
    @exclusivity(unchecked) private(set) var records: [CloudRecord] = []
    /// The root record's index in ``records``.
    @exclusivity(unchecked) private var rootRecord = 0
    /// The root record, read in place.
    var root: CloudRecord { _read { yield records[rootRecord] } }
    @exclusivity(unchecked) private(set) var probe: ProbeCollector?

    /// Every record the session has met, at a slot of its own: an ID is hashed once, when it is first met, and
    /// what the session knows of the record (in hand, missing, reached, decoded) is read by index after that.
    @exclusivity(unchecked) private var slotOfID: [CloudRecord.ID: Int] = [:]
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var rootSlot = 0
    /// The root has no slot yet (``slots`` is empty) and its ID isn't in ``slotOfID``: a decode of one record that
    /// meets no reference never copies or hashes its ID. See ``indexRoot()``.
    @exclusivity(unchecked) private var isRootIndexPending = false
    /// How many records are in hand: what the record limit counts.
    @exclusivity(unchecked) private var recordCount = 0
    /// Records reached, and values decoded, as a second type: a slot holds the first, nearly always the only one.
    @exclusivity(unchecked) private var otherVisits: Set<SlotKey> = []
    @exclusivity(unchecked) private var otherEntries: [SlotKey: CacheEntry] = [:]

    @exclusivity(unchecked) private var discovered: [Node] = []
    /// For each model type probed, the fields it decodes as records and as which types: other records of the type
    /// are resolved from it without running their model again.
    @exclusivity(unchecked) private var schemas: [ObjectIdentifier: [(field: String, type: any CKDecodable.Type)]] = [:]
    /// The model type whose mapping was looked up last, and its mapping (see ``mapping(of:)``).
    @exclusivity(unchecked) private var lastMapping:
        (type: ObjectIdentifier, mapping: (any CloudRecordDecodable.Type)?)?
    /// Set while a graph deeper than ``nestedDecodingDepthLimit`` is decoded deepest first: every value is kept,
    /// for its parent to find rather than decode inside itself.
    @exclusivity(unchecked) private var keepsEveryValue = false
    /// Set when a record nested deeper than ``nestedDecodingDepthLimit`` while materializing.
    @exclusivity(unchecked) private var nestedTooDeep = false
    /// Whether records not in hand can still be fetched (not when decoding from records in hand).
    @exclusivity(unchecked) private var canFetchMore = false
    /// Records that materializing reached but resolving hadn't fetched: a model that decodes different fields in
    /// different records. They are fetched and the value built again.
    @exclusivity(unchecked) private(set) var unresolved: [Node] = []

    /// The decoder's `userInfo` as a `Decoder` gives it, converted once, when a model first asks.
    lazy var userInfo: [CodingUserInfoKey: Any] = options.userInfo.mapValues { $0 as Any }

    /// Thrown while materializing at a record that hasn't been fetched yet.
    struct NeedsMoreRecords: Error {}

    /// A record's value as a type, the error decoding it gave, or a mark that it is being decoded (to find cycles).
    private enum CacheEntry {
        case decoding
        /// Decoded once, without keeping the value: nothing had reached the record before (see
        /// ``decodeRecord(_:slot:at:nesting:)``).
        case decodedOnce
        case decoded(any CKDecodable)
        case failed(any Error)

        var isDecodedOnce: Bool { if case .decodedOnce = self { true } else { false } }
    }

    /// Records nested this deep are decoded one inside another (the stack grows with each); deeper graphs are
    /// resolved first and decoded deepest first.
    static let nestedDecodingDepthLimit = 32

    /// A record to decode as a type; `type` is `nil` when the model that reaches it couldn't be probed.
    struct Node {
        let slot: Int
        let type: (any CKDecodable.Type)?
        let path: CodingPath
        let depth: Int
    }

    /// What the session knows of one record.
    private struct Slot {
        let id: CloudRecord.ID
        /// The record's index in ``records``, once it is in hand.
        var record: Int?
        /// The database has no such record.
        var isMissing = false
        /// The current level's fetch asks for it.
        var isRequested = false
        /// The first type the record was reached as; `nil` until it is reached.
        var visitedAs: TypeKey?
        /// The type of ``entry``.
        var cachedAs: TypeKey?
        var entry: CacheEntry?
        /// How many references to the record resolving met (a root counts as one): a record met once has one
        /// parent, and its value needn't be kept for another (see ``keepsValue(of:as:)``).
        var timesReached: Int32 = 0

        init(id: CloudRecord.ID, record: Int? = nil) {
            self.id = id
            self.record = record
        }

        /// Whether the current level must fetch the record: it isn't in hand, known missing or asked for yet.
        /// Marks it asked for.
        mutating func request() -> Bool {
            guard record == nil, !isMissing, !isRequested else { return false }
            isRequested = true
            return true
        }
    }

    /// A model type, or `nil` for a record whose model couldn't be probed.
    private struct TypeKey: Hashable {
        let type: ObjectIdentifier?

        init(_ type: (any CKDecodable.Type)?) { self.type = type.map { ObjectIdentifier($0) } }
    }

    private struct SlotKey: Hashable {
        let slot: Int
        let type: TypeKey
    }

    /// A session over a root record alone, the only record in hand (`records` holds just it): what most decodes
    /// are.
    ///
    /// The caller makes the array, so the record is copied once, into it. Passed on its own, the record was copied
    /// to be passed, copied into the array and released: a twentieth of decoding a flat record.
    convenience init(options: DecodingOptions, rootAlone records: [CloudRecord]) {
        self.init(options: options)
        self.records = records
        recordCount = records.count
        isRootIndexPending = true
    }

    private init(options: DecodingOptions) {
        self.options = options
    }

    /// A session over a root record and the other records in hand.
    ///
    /// The records come as an array, not any sequence: a generic initializer isn't specialized for the caller's
    /// sequence across the module boundary, and walking even an empty sequence through witness tables was a
    /// measurable part of decoding one flat record.
    convenience init(options: DecodingOptions, root: CloudRecord, recordsInHand: [CloudRecord]) {
        guard !recordsInHand.isEmpty else {
            self.init(options: options, rootAlone: [root])
            return
        }
        self.init(options: options)
        records.reserveCapacity(recordsInHand.count + 1)
        slotOfID.reserveCapacity(recordsInHand.count + 1)
        slots.reserveCapacity(recordsInHand.count + 1)
        for record in recordsInHand { take(record) }
        rootSlot = take(root)
        // `take` put the root at its slot's index, replacing a record in hand with its ID.
        if let index = slots[rootSlot].record { rootRecord = index }
    }

    /// A session over a graph's records, in hand, with the graph's index of them as the session's: each record's
    /// slot is its position, so no ID is hashed to start.
    convenience init(options: DecodingOptions, graph: CloudRecordGraph) {
        self.init(options: options)
        records = graph.records
        rootRecord = graph.records.count - 1
        slotOfID = graph.positions
        slots.reserveCapacity(graph.records.count)
        for index in graph.records.indices { slots.append(Slot(id: graph.records[index].id, record: index)) }
        recordCount = graph.records.count
        rootSlot = graph.records.count - 1
    }

    // MARK: Slots

    /// The record's slot, made when the ID is first met: one hash either way.
    private func slot(for id: CloudRecord.ID) -> Int {
        indexRoot()
        let next = slots.count
        let slot = Self.value(&slotOfID[id, default: next])
        if slot == next { slots.append(Slot(id: id)) }
        return slot
    }

    /// The slot of a record met before, or `nil`.
    private func knownSlot(of id: CloudRecord.ID) -> Int? {
        indexRoot()
        return slotOfID[id]
    }

    private func indexRoot() {
        guard isRootIndexPending else { return }
        isRootIndexPending = false
        rootSlot = slots.count
        slots.append(Slot(id: root.id, record: rootRecord))
        slotOfID[root.id] = rootSlot
    }

    /// Reads a value through `inout`, so that a dictionary's defaulted subscript inserts and reads in one lookup.
    private static func value(_ value: inout Int) -> Int { value }

    /// Puts a record in hand, replacing one with the same ID.
    @discardableResult
    private func take(_ record: consuming CloudRecord) -> Int {
        let slot = slot(for: record.id)
        if let index = slots[slot].record {
            records[index] = record
        } else {
            recordCount += 1
            slots[slot].record = records.count
            records.append(record)
        }
        slots[slot].isMissing = false
        return slot
    }

    /// Puts a fetched record in hand if the fetch asked for it and it hasn't come yet; `false` (and the record
    /// dropped) otherwise.
    private func takeRequested(_ record: consuming CloudRecord) -> Bool {
        guard let slot = knownSlot(of: record.id), slots[slot].isRequested, slots[slot].record == nil else {
            return false
        }
        recordCount += 1
        slots[slot].record = records.count
        records.append(record)
        slots[slot].isMissing = false
        return true
    }

    /// After a fetch: a requested record that didn't come is missing.
    private func settle(_ slot: Int) {
        slots[slot].isRequested = false
        if slots[slot].record == nil { slots[slot].isMissing = true }
    }

    /// Marks a record reached as a type; `false` if it was already.
    private func visit(_ slot: Int, as type: (any CKDecodable.Type)?) -> Bool {
        let key = TypeKey(type)
        guard let first = slots[slot].visitedAs else {
            slots[slot].visitedAs = key
            return true
        }
        return first != key && otherVisits.insert(SlotKey(slot: slot, type: key)).inserted
    }

    private func entry(_ slot: Int, as key: TypeKey) -> CacheEntry? {
        if slots[slot].cachedAs == key { return slots[slot].entry }
        return otherEntries.isEmpty ? nil : otherEntries[SlotKey(slot: slot, type: key)]
    }

    /// Sets a slot's entry for a type; the entry is moved in, not copied (a copy of a boxed value is a call through
    /// its type's value witnesses).
    private func setEntry(_ entry: consuming CacheEntry?, _ slot: Int, as key: TypeKey) {
        if slots[slot].cachedAs == nil || slots[slot].cachedAs == key {
            slots[slot].cachedAs = entry == nil ? nil : key
            slots[slot].entry = consume entry
        } else {
            otherEntries[SlotKey(slot: slot, type: key)] = consume entry
        }
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
        try await fetch(needed, from: database)
        try await resolve(from: frontier, database: database)
    }

    /// The records materializing found missing, as the next frontier, and those of them to fetch; the values built
    /// so far are forgotten, so the next materialization sees the new records.
    private func takeUnresolved() -> (frontier: [Node], needed: [Node]) {
        var frontier: [Node] = []
        var needed: [Node] = []
        for node in unresolved where visit(node.slot, as: node.type) || slots[node.slot].record == nil {
            discovered.append(node)
            frontier.append(node)
            if slots[node.slot].request() { needed.append(node) }
        }
        unresolved = []
        clearCache()
        return (frontier, needed)
    }

    // Values nested no deeper than the nested-decoding limit release within as many frames, in any order: only a
    // deeper graph needs its cache emptied shallowest first.
    deinit { if isDeep { clearCache() } }

    private var isDeep: Bool { discovered.contains(where: { $0.depth > Self.nestedDecodingDepthLimit }) }

    /// Empties the cache shallowest record first. A cached value holds the values below it, and Swift releases a
    /// value whose descendants have no other owner recursively, a frame per level: in any other order, a deep
    /// chain's last entries could each take half the chain down with them.
    private func clearCache() {
        // Values nested no deeper than the nested-decoding limit release within as many frames: only a deeper
        // graph pays for the ordered pass.
        if isDeep {
            for node in discovered { setEntry(nil, node.slot, as: TypeKey(node.type)) }
        }
        for index in slots.indices where slots[index].cachedAs != nil {
            slots[index].entry = nil
            slots[index].cachedAs = nil
        }
        otherEntries = [:]
    }

    private func resolve(from start: [Node], database: some CloudDatabase) async throws {
        var frontier = start
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            try await fetch(needed, from: database)
            frontier = next
        }
    }

    /// Fetches the records of one level, in flight together; each is taken in as it arrives.
    private func fetch(_ needed: [Node], from database: some CloudDatabase) async throws {
        guard let first = needed.first else { return }
        if recordCount + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: location(of: first))
        }
        let nodes = Dictionary(needed.map { (slots[$0.slot].id, $0) }, uniquingKeysWith: { first, _ in first })
        do {
            try await database.fetchDistinctRecords(Array(nodes.keys)) { try receive($0, nodes: nodes) }
        } catch let error as CloudDatabaseError {
            throw CKCodableError.databaseError(error, at: location(of: first))
        } catch let error where !(error is CancellationError || error is CKCodableError) {
            throw CKCodableError.foreignDatabaseError(error, at: location(of: first))
        }
        for node in needed { settle(node.slot) }
    }

    /// Resolves from the records in hand a graph too deep to decode each record inside its parent (see
    /// ``materializeInHand(_:)``): it is walked as `resolve` walks a database, without fetching, so that it can be
    /// decoded deepest first.
    func resolveInHand(_ type: any CKDecodable.Type) throws {
        guard root.hasReferences else { return }
        var frontier = start(type)
        while !frontier.isEmpty {
            let (next, needed) = try expand(frontier)
            for node in needed { settle(node.slot) }
            frontier = next
        }
    }

    // MARK: Many roots, fetched synchronously

    /// Adds the roots that reference other records as nodes of depth 0, to resolve with the first; the others
    /// need nothing resolved, and ``materializeRoots(_:roots:referencing:)`` decodes them from the records in hand.
    func addRoots(_ roots: [CloudRecord], referencing: [Bool], as type: any CKDecodable.Type) -> [Node] {
        var nodes: [Node] = []
        for (record, references) in zip(roots, referencing) where references {
            let slot = take(record)
            slots[slot].timesReached &+= 1
            guard visit(slot, as: type) else { continue }
            let node = Node(slot: slot, type: type, path: .root, depth: 0)
            discovered.append(node)
            nodes.append(node)
        }
        return nodes
    }

    /// Resolves the roots' graphs level by level, every record of a level in one call of `fetch`: how a local
    /// store reads many models inside one read transaction.
    func resolveSynchronously(
        from start: [Node], fetch: CKRecordDecoder.RecordFetch
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
    func resolveUnresolvedSynchronously(fetch: CKRecordDecoder.RecordFetch) throws {
        let (frontier, needed) = takeUnresolved()
        if !needed.isEmpty { try fetchSynchronously(needed, with: fetch) }
        try resolveSynchronously(from: frontier, fetch: fetch)
    }

    private func fetchSynchronously(
        _ needed: [Node], with fetch: CKRecordDecoder.RecordFetch
    ) throws {
        if let first = needed.first, recordCount + needed.count > options.maximumRecordCount {
            throw CKCodableError.recordLimitExceeded(options.maximumRecordCount, at: location(of: first))
        }
        do {
            try fetch(needed.map { slots[$0.slot].id }) { takeRequested($0) }
        } catch let error as CloudDatabaseError {
            throw CKCodableError.databaseError(error, at: location(of: needed[0]))
        } catch let error where !(error is CancellationError || error is CKCodableError) {
            throw CKCodableError.foreignDatabaseError(error, at: location(of: needed[0]))
        }
        for node in needed { settle(node.slot) }
    }

    /// Decodes every root's value; a record shared by several roots is decoded once.
    func materializeRoots<Value: CKDecodable>(_ type: Value.Type, roots: [CloudRecord], referencing: [Bool]) throws
        -> [Value]
    {
        probe = nil
        unresolved = []
        // A root that references nothing but that another root references was reached once more, as a root: so
        // counted, its value is kept for the other (see `keepsValue(of:as:)`).
        let reachedRootSlots: [Int?] =
            discovered.isEmpty ? [] : zip(roots, referencing).map { $1 ? nil : knownSlot(of: $0.id) }
        for case let slot? in reachedRootSlots { slots[slot].timesReached &+= 1 }
        decodeDeepestFirst()
        var values: [Value] = []
        values.reserveCapacity(roots.count)
        // A root decoded from the records in hand is put there only while it is decoded: a decoder reads its
        // record from ``records``.
        let rootsInHand = records.count
        defer { records.removeSubrange(rootsInHand...) }
        for (index, (root, references)) in zip(roots, referencing).enumerated() {
            // A root that references others, or that another root references, goes through the cache, so that it
            // is decoded once; any other root is decoded from the record in hand.
            if references {
                values.append(try decodeRecord(Value.self, slot: slot(for: root.id), at: .root, nesting: 0))
            } else if !reachedRootSlots.isEmpty, let slot = reachedRootSlots[index], slots[slot].record != nil {
                values.append(try decodeRecord(Value.self, slot: slot, at: .root, nesting: 0))
            } else {
                records.append(root)
                values.append(try decode(Value.self, record: records.count - 1, at: .root, nesting: 0))
            }
        }
        return values
    }

    /// A cached entry's value, as the type it was cached as; its error, or a cycle if it is still being decoded.
    private func cached<Value: CKDecodable>(_ entry: CacheEntry, as type: Value.Type, slot: Int, at path: CodingPath)
        throws -> Value
    {
        switch entry {
        case .decoded(let value):
            guard let typed = Self.open(value, as: Value.self) else {
                throw CKCodableError.typeMismatch(
                    expected: "\(Value.self)", found: "\(Swift.type(of: value))",
                    at: location(of: slots[slot].id, at: path))
            }
            return typed
        case .failed(let error): throw error
        case .decoding: throw CKCodableError.referenceCycle(slots[slot].id, at: location(of: slots[slot].id, at: path))
        case .decodedOnce:
            // Callers decode the record again instead of asking for a value that wasn't kept.
            throw CKCodableError.typeMismatch(
                expected: "\(Value.self)", found: "a value not kept", at: location(of: slots[slot].id, at: path))
        }
    }

    /// A cached value as the type it was decoded as. A value cached under a type's key is of that type, unless the
    /// type is a class and the value a subclass's instance: only that needs a dynamic cast.
    private static func open<Value>(_ value: any CKDecodable, as type: Value.Type) -> Value? {
        func typed<Stored: CKDecodable>(_ stored: Stored) -> Value? {
            Stored.self == Value.self ? unsafeBitCast(stored, to: Value.self) : stored as? Value
        }
        return typed(value)
    }

    /// Decodes the records below the roots, deepest first, so that each is decoded with no record nested inside
    /// it: the parents find them cached, and the stack doesn't grow with the graph's depth.
    private func decodeDeepestFirst() {
        // A graph no deeper than the nested-decoding limit is decoded each record inside its parent, with no value
        // kept that only one parent needs.
        guard isDeep else { return }
        keepsEveryValue = true
        for node in discovered.reversed() where node.depth > 0 {
            if let type = node.type, slots[node.slot].record != nil {
                _ = try? decodeRecord(type, slot: node.slot, at: node.path, nesting: 0)
            }
        }
    }

    private func start(_ type: any CKDecodable.Type) -> [Node] {
        indexRoot()
        let rootNode = Node(slot: rootSlot, type: type, path: .root, depth: 0)
        _ = visit(rootSlot, as: type)
        discovered.append(rootNode)
        return [rootNode]
    }

    /// The next level: the records the frontier's models reference, and those of them not in hand yet.
    private func expand(_ frontier: [Node]) throws -> (next: [Node], needed: [Node]) {
        var next: [Node] = []
        var needed: [Node] = []
        for node in frontier {
            guard let index = slots[node.slot].record else { continue }
            try forEachChild(of: index, as: node.type, at: node.path) { id, type, path in
                let slot = slot(for: id)
                slots[slot].timesReached &+= 1
                guard visit(slot, as: type) else { return }
                let childNode = Node(slot: slot, type: type, path: path, depth: node.depth + 1)
                guard childNode.depth <= options.maximumDepth else {
                    throw CKCodableError.depthLimitExceeded(options.maximumDepth, at: location(of: childNode))
                }
                discovered.append(childNode)
                next.append(childNode)
                if slots[slot].request() {
                    needed.append(childNode)
                    // Checked as the level grows, so that a record listing a million references stops at the
                    // limit rather than after taking in all of them.
                    guard recordCount + needed.count <= options.maximumRecordCount else {
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
            case .success(let record): take(record)
            case .failure(.unknownItem): slots[slot(for: id)].isMissing = true
            case .failure(let error):
                throw CKCodableError.databaseError(error, at: location(of: id, at: nodes[id]?.path ?? .root))
            }
        }
    }

    /// Calls `body` with each record a record's model decodes: from its type's schema, or by probing it (which
    /// records the schema); if the probe can't finish, every reference of the record that it didn't reach.
    private func forEachChild(
        of index: Int, as type: (any CKDecodable.Type)?, at path: CodingPath,
        _ body: (_ id: CloudRecord.ID, _ type: (any CKDecodable.Type)?, _ path: CodingPath) throws -> Void
    ) throws {
        let record = records[index]
        guard record.hasReferences else { return }
        if let type, let schema = schemas[ObjectIdentifier(type)] {
            for (field, childType) in schema {
                switch record.fields[field] {
                case .reference(let reference)?:
                    try body(reference.recordID, childType, path.appending(NamedKey(field)))
                case .referenceList(let references)?:
                    let fieldPath = path.appending(NamedKey(field))
                    // Each reference may be a record met for the first time: room for all of them at once.
                    slotOfID.reserveCapacity(slotOfID.count + references.count)
                    for index in references.indices {
                        try body(references[index].recordID, childType, fieldPath.appending(index: index))
                    }
                default:
                    break
                }
            }
            return
        }
        var reached: [(id: CloudRecord.ID, type: (any CKDecodable.Type)?, path: CodingPath)] = []
        if let type {
            let collector = ProbeCollector()
            probe = collector
            let finished: Bool
            do {
                _ = try initialize(
                    type, from: ValueDecoder(session: self, source: .record, path: path, record: index, field: nil))
                if let schema = collector.schema { schemas[ObjectIdentifier(type)] = schema }
                finished = true
            } catch {
                finished = false
            }
            probe = nil
            reached = collector.children.map { ($0.id, $0.type, $0.path) }
            if finished {
                for child in reached { try body(child.id, child.type, child.path) }
                return
            }
        }
        let reachedIDs = Set(reached.map(\.id))
        for child in reached { try body(child.id, child.type, child.path) }
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

    // MARK: Materialize

    /// Decodes the root's value from the records in hand, each record inside its parent's initializer, without
    /// walking the graph first. Walking a graph costs about as much as decoding it, and few are deeper than
    /// ``nestedDecodingDepthLimit``: only then is the graph resolved, and decoded deepest first.
    ///
    /// The value is returned as it is, never as an optional: an optional of a type known only at run time needs
    /// its metadata looked up, which cost a twentieth of decoding a flat record.
    func materializeInHand<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        do {
            let value = try materialize(Value.self)
            if !nestedTooDeep { return value }
        } catch {
            if !nestedTooDeep { throw error }
        }
        // Whatever the models made of the error (a `try?` can turn it into a nil), the values built are discarded.
        nestedTooDeep = false
        clearCache()
        try resolveInHand(Value.self)
        return try materialize(Value.self)
    }

    /// Decodes the root's value, every record deepest first.
    func materialize<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        probe = nil
        unresolved = []
        // Nothing has met the root but this: no reference to it, no value of it, nothing to decode first.
        if isRootIndexPending { return try decode(Value.self, record: rootRecord, at: .root, nesting: 0) }
        decodeDeepestFirst()
        // The root's value isn't cached (nothing else holds it), and is built as its own type, not boxed as any
        // model: unless a reference back to the root decoded it already, or is decoding it (a cycle).
        if let entry = entry(rootSlot, as: TypeKey(Value.self)), !entry.isDecodedOnce {
            return try cached(entry, as: Value.self, slot: rootSlot, at: .root)
        }
        // A record that references the root needs it marked as being decoded, to find the cycle.
        if slots[rootSlot].timesReached > 0, slots[rootSlot].record != nil {
            return try decodeRecord(Value.self, slot: rootSlot, at: .root, nesting: 0)
        }
        return try decode(Value.self, record: slots[rootSlot].record ?? rootRecord, at: .root, nesting: 0)
    }

    /// The value of a record, decoded once per type and cached; the result (value or error) is remembered, so a
    /// parent sees exactly what decoding the record on its own would give.
    ///
    /// Where references weren't counted (records in hand decoded without resolving, see ``materializeInHand(_:)``),
    /// a struct's value is kept only once the record is reached a second time: most records of a graph are reached
    /// once, and keeping each value boxed it as any model (an allocation) and copied it back, a fifth of decoding
    /// a graph. A record reached again is decoded a second time, and its value kept from then on; the mark the
    /// first decode leaves still finds a cycle. Where resolving counted the references, a record reached more than
    /// once is kept from the first decode. A class instance is always kept, so that it is one instance however it
    /// is reached.
    private func decodeRecord<Value: CKDecodable>(_ type: Value.Type, slot: Int, at path: CodingPath, nesting: Int)
        throws -> Value
    {
        let key = TypeKey(Value.self)
        let earlier = entry(slot, as: key)
        if let earlier, !earlier.isDecodedOnce { return try cached(earlier, as: Value.self, slot: slot, at: path) }
        guard let index = slots[slot].record else {
            throw CKCodableError.missingRecord(slots[slot].id, at: location(of: slots[slot].id, at: path))
        }
        guard nesting <= Self.nestedDecodingDepthLimit else {
            nestedTooDeep = true
            throw CKCodableError.depthLimitExceeded(
                Self.nestedDecodingDepthLimit, at: location(of: slots[slot].id, at: path))
        }
        guard keepsValue(of: slot, as: Value.self) else {
            return try decode(Value.self, record: index, at: path, nesting: nesting)
        }
        let keepsThisValue =
            earlier != nil || slots[slot].timesReached > 0 || keepsEveryValue || Value.self is AnyClass
        setEntry(.decoding, slot, as: key)
        do {
            let value = try decode(Value.self, record: index, at: path, nesting: nesting)
            setEntry(keepsThisValue ? .decoded(value) : .decodedOnce, slot, as: key)
            return value
        } catch {
            setEntry(.failed(error), slot, as: key)
            throw error
        }
    }

    /// Whether a record's value is cached. Not when resolving met exactly one reference to the record and the
    /// value is a struct: its one parent is the only one to decode it, and it can't close a cycle on its own (a
    /// cycle goes through a record met twice, or through the root, which is always cached). Keeping it would box
    /// it as any model and copy it back. A class instance is always kept, so that it is one instance however
    /// it is reached; so is every value of a graph decoded without resolving, whose references weren't counted.
    private func keepsValue<Value>(of slot: Int, as type: Value.Type) -> Bool {
        keepsEveryValue || slots[slot].timesReached != 1 || slot == rootSlot || Value.self is AnyClass
    }

    /// Runs the model's initializer on a record, and checks the record's type.
    private func decode<Value: CKDecodable>(
        _ type: Value.Type, record index: Int, at path: CodingPath, nesting: Int
    )
        throws -> Value
    {
        let decoder = ValueDecoder(
            session: self, source: .record, path: path, record: index, field: nil, nesting: nesting)
        let value: Value
        do {
            value = try initialize(type, from: decoder)
        } catch {
            throw CKCodableError.fromModel(error, recordID: records[index].id, recordPath: path)
        }
        guard value.cloudKitRecordType == records[index].recordType else {
            throw CKCodableError.recordTypeMismatch(
                expected: value.cloudKitRecordType, found: records[index].recordType,
                at: location(of: records[index].id, at: path))
        }
        return value
    }

    /// Runs a model type's initializer on a record's decoder: its record mapping if it has one, else `init(from:)`.
    /// The runtime caches the conformance lookup, so asking each time costs less than a table of our own would.
    private func initialize<Value: CKDecodable>(_ type: Value.Type, from decoder: ValueDecoder) throws -> Value {
        guard let mapping = mapping(of: Value.self) else { return try Value(from: decoder) }
        return try Self.initialize(mapping, as: Value.self, from: decoder)
    }

    /// A model type's record mapping, if it has one. The type met last is remembered: a list of nested models asks
    /// for one type over and over, and the runtime's conformance lookup is a hash each time.
    private func mapping(of type: any CKDecodable.Type) -> (any CloudRecordDecodable.Type)? {
        let key = ObjectIdentifier(type)
        if let last = lastMapping, last.type == key { return last.mapping }
        let mapping = type as? any CloudRecordDecodable.Type
        lastMapping = (key, mapping)
        return mapping
    }

    /// Runs a record mapping's initializer, as the model type it is.
    private static func initialize<Mapped: CloudRecordDecodable, Value>(
        _ mapped: Mapped.Type, as type: Value.Type, from decoder: ValueDecoder
    ) throws -> Value {
        // Mapped is Value, opened from its conformance.
        guard Mapped.self == Value.self else {
            throw CKCodableError.typeMismatch(expected: "\(Value.self)", found: "\(Mapped.self)", at: decoder.location)
        }
        // So the cast can't fail, and it moves the value: the runtime casts a type to itself by taking the value as
        // it is. `unsafeBitCast` would copy it (a retain and a release of each of its fields, a sixth of decoding a
        // flat model); `as?` needs the metadata of an optional, and a buffer to build the value in place its own,
        // each looked up in the runtime's table on every call.
        return try Mapped(fields: CloudRecordReader(decoder: decoder)) as! Value
    }

    /// The value of a referenced record, or `nil` if the record doesn't exist. While probing, a placeholder.
    func decodeReferenced<Value: CKDecodable>(
        _ type: Value.Type, reference: CloudReference, at path: CodingPath, field: String?, nesting: Int
    ) throws -> Value? {
        switch try locate(reference, as: Value.self, at: path, field: field) {
        case .slot(let slot): return try decodeRecord(Value.self, slot: slot, at: path, nesting: nesting + 1)
        case .missing: return nil
        case .placeholder: return try Value(from: PlaceholderDecoder(nesting: 0))
        }
    }

    /// The value of a referenced record that must exist, read from a field of the parent record: a missing record
    /// is ``CKCodableError/Code/missingRecord(_:)`` at that field. While probing, a placeholder.
    ///
    /// Unlike ``decodeReferenced(_:reference:at:field:nesting:)``, nothing here is optional: a mapped model's list
    /// of nested models reads each as its own type, with no optional to make or cast through.
    func decodeRequiredReference<Value: CKDecodable>(
        _ type: Value.Type, reference: CloudReference, at path: CodingPath, parent: CloudRecord.ID, field: String?,
        nesting: Int
    ) throws -> Value {
        switch try locate(reference, as: Value.self, at: path, field: field) {
        case .slot(let slot): return try decodeRecord(Value.self, slot: slot, at: path, nesting: nesting + 1)
        case .missing:
            throw CKCodableError.missingRecord(
                reference.recordID, at: DecodingLocation(path: path, recordID: parent, field: field))
        case .placeholder: return try Value(from: PlaceholderDecoder(nesting: 0))
        }
    }

    /// The values of a reference list's records, in order, each read as
    /// ``decodeRequiredReference(_:reference:at:parent:field:nesting:)`` reads one, at `path` and its index.
    func decodeRequiredReferences<Value: CKDecodable>(
        _ type: Value.Type, _ references: [CloudReference], at path: CodingPath, parent: CloudRecord.ID,
        field: String?, nesting: Int
    ) throws -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(references.count)
        for index in references.indices {
            values.append(
                try decodeRequiredReference(
                    Value.self, reference: references[index], at: path.appending(index: index), parent: parent,
                    field: field, nesting: nesting))
        }
        return values
    }

    /// Where a reference leads: a record in hand, nowhere, or (while probing) a placeholder, the reference noted.
    private enum ReferencedRecord {
        case slot(Int)
        case missing
        case placeholder
    }

    private func locate(
        _ reference: CloudReference, as type: any CKDecodable.Type, at path: CodingPath, field: String?
    ) throws -> ReferencedRecord {
        let slot = knownSlot(of: reference.recordID)
        if let slot, slots[slot].isMissing { return .missing }
        if let probe {
            probe.children.append((reference.recordID, type, path))
            probe.note(field: field, type: type)
            return .placeholder
        }
        guard let slot, slots[slot].record != nil else {
            guard canFetchMore else { return .missing }
            unresolved.append(Node(slot: self.slot(for: reference.recordID), type: type, path: path, depth: 0))
            throw NeedsMoreRecords()
        }
        return .slot(slot)
    }

    // MARK: Locations

    private func location(of node: Node) -> DecodingLocation {
        location(of: slots[node.slot].id, at: node.path)
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
