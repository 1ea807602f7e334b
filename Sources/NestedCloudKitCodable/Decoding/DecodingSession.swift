import Foundation

/// The state of one decode, and the one place that holds its speed-ups: the records in hand, what the session knows
/// of each record by slot, the values built so far, and what resolving learned.
///
/// The work is done by two others, over this state: ``GraphResolver`` walks the graph level by level, learning
/// which referenced records each model decodes (by probing its initializer) and fetching each level together;
/// ``GraphMaterializer`` then decodes every record deepest first, so that each nested value is built once, from the
/// cache, and building a deep graph costs no more stack than a shallow one. The entry points below start them.
///
/// Each record ID is hashed once, when the session first meets it; from then on the record, whether it is
/// missing, the types it was reached as and its decoded values are found at the ID's slot, by index. A graph of
/// ten thousand records is hashed ten thousand times, not ten times that.
///
/// The state isn't checked for exclusive access at run time (`@exclusivity(unchecked)`): the checks cost as much as
/// the rest of setting up a decode of one record. That is safe because one decode uses the session, on one thread,
/// and only the methods here touch the collections: each access begins and ends inside one of them, never held
/// across a call into a model (whose initializer may decode a reference, and so call back in). The resolver and the
/// materializer read and change the state through these methods alone.
final class DecodingSession {
    let options: DecodingOptions
    /// The records in hand, each once, where every decoder of a record reads it in place (by its index): a record
    /// has many reference-counted parts, and a copy or a box of its own per record would cost as much as reading
    /// it. A graph's records are taken as they are, without a copy. Records are only added between runs of a
    /// model's initializer (while resolving), never during one, so a decoder's read is never invalidated.
    @exclusivity(unchecked) private(set) var records: [CloudRecord] = []
    /// The root record's index in ``records``.
    @exclusivity(unchecked) private(set) var rootRecord = 0
    /// The root record, read in place.
    var root: CloudRecord { _read { yield records[rootRecord] } }
    /// The probe of the record being resolved, which its model's references are noted in; `nil` otherwise.
    @exclusivity(unchecked) var probe: ProbeCollector?

    /// Every record the session has met, at a slot of its own: an ID is hashed once, when it is first met, and
    /// what the session knows of the record (in hand, missing, reached, decoded) is read by index after that.
    @exclusivity(unchecked) private var slotOfID: [CloudRecord.ID: Int] = [:]
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private(set) var rootSlot = 0
    /// The root has no slot yet (``slots`` is empty) and its ID isn't in ``slotOfID``: a decode of one record that
    /// meets no reference never copies or hashes its ID. See ``indexRoot()``.
    @exclusivity(unchecked) private(set) var isRootIndexPending = false
    /// How many records are in hand: what the record limit counts.
    @exclusivity(unchecked) private(set) var recordCount = 0
    /// Records reached, and values decoded, as a second type: a slot holds the first, nearly always the only one.
    @exclusivity(unchecked) private var otherVisits: Set<SlotKey> = []
    @exclusivity(unchecked) private var otherEntries: [SlotKey: CacheEntry] = [:]

    /// Every record reached while resolving, in the order reached: shallowest first.
    @exclusivity(unchecked) private(set) var discovered: [Node] = []
    /// For each model type probed, the fields it decodes as records and as which types: other records of the type
    /// are resolved from it without running their model again.
    @exclusivity(unchecked) private var schemas: [ObjectIdentifier: [(field: String, type: any CKDecodable.Type)]] = [:]
    /// The model type whose mapping was looked up last, and its mapping (see ``mapping(of:)``).
    @exclusivity(unchecked) private var lastMapping:
        (type: ObjectIdentifier, mapping: (any CloudRecordDecodable.Type)?)?
    /// Set while a graph deeper than ``nestedDecodingDepthLimit`` is decoded deepest first: every value is kept,
    /// for its parent to find rather than decode inside itself.
    @exclusivity(unchecked) var keepsEveryValue = false
    /// Set when a record nested deeper than ``nestedDecodingDepthLimit`` while materializing.
    @exclusivity(unchecked) var nestedTooDeep = false
    /// Whether records not in hand can still be fetched (not when decoding from records in hand).
    @exclusivity(unchecked) var canFetchMore = false
    /// Records that materializing reached but resolving hadn't fetched: a model that decodes different fields in
    /// different records. They are fetched and the value built again.
    @exclusivity(unchecked) private(set) var unresolved: [Node] = []

    /// The decoder's `userInfo` as a `Decoder` gives it, converted once, when a model first asks.
    lazy var userInfo: [CodingUserInfoKey: Any] = options.userInfo.mapValues { $0 as Any }

    /// Thrown while materializing at a record that hasn't been fetched yet.
    struct NeedsMoreRecords: Error {}

    /// A record's value as a type, the error decoding it gave, or a mark that it is being decoded (to find cycles).
    enum CacheEntry {
        case decoding
        /// Decoded once, without keeping the value: nothing had reached the record before (see
        /// ``GraphMaterializer/decodeRecord(_:slot:at:nesting:)``).
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
        /// parent, and its value needn't be kept for another (see ``GraphMaterializer``).
        var timesReached: Int32 = 0

        init(id: CloudRecord.ID, record: Int? = nil) {
            self.id = id
            self.record = record
        }
    }

    /// A model type, or `nil` for a record whose model couldn't be probed.
    struct TypeKey: Hashable {
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

    // Values nested no deeper than the nested-decoding limit release within as many frames, in any order: only a
    // deeper graph needs its cache emptied shallowest first.
    deinit { if isDeep { clearCache() } }

    // MARK: Resolving and materializing

    /// Fetches every record the root's model needs, one level of the graph per round trip.
    func resolve(_ type: any CKDecodable.Type, from database: some CloudDatabase) async throws {
        try await GraphResolver(session: self).resolve(type, from: database)
    }

    /// Fetches what materializing found missing, then what those records need.
    func resolveUnresolved(from database: some CloudDatabase) async throws {
        try await GraphResolver(session: self).resolveUnresolved(from: database)
    }

    /// Adds the roots that reference other records as nodes of depth 0, to resolve with the first.
    func addRoots(_ roots: [CloudRecord], referencing: [Bool], as type: any CKDecodable.Type) -> [Node] {
        GraphResolver(session: self).addRoots(roots, referencing: referencing, as: type)
    }

    /// Resolves the roots' graphs level by level, every record of a level in one call of `fetch`.
    func resolveSynchronously(from start: [Node], fetch: CKRecordDecoder.RecordFetch) throws {
        try GraphResolver(session: self).resolveSynchronously(from: start, fetch: fetch)
    }

    /// Fetches what materializing found missing, then what those records need, in calls of `fetch`.
    func resolveUnresolvedSynchronously(fetch: CKRecordDecoder.RecordFetch) throws {
        try GraphResolver(session: self).resolveUnresolvedSynchronously(fetch: fetch)
    }

    /// Decodes the root's value from the records in hand; see ``GraphMaterializer/materializeInHand(_:)``.
    func materializeInHand<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        try GraphMaterializer(session: self).materializeInHand(Value.self)
    }

    /// Decodes the root's value, every record deepest first.
    func materialize<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        try GraphMaterializer(session: self).materialize(Value.self)
    }

    /// Decodes every root's value; a record shared by several roots is decoded once.
    func materializeRoots<Value: CKDecodable>(_ type: Value.Type, roots: [CloudRecord], referencing: [Bool]) throws
        -> [Value]
    {
        try GraphMaterializer(session: self).materializeRoots(Value.self, roots: roots, referencing: referencing)
    }

    /// The value of a referenced record, or `nil` if the record doesn't exist. While probing, a placeholder.
    func decodeReferenced<Value: CKDecodable>(
        _ type: Value.Type, reference: CloudReference, at path: CodingPath, field: String?, nesting: Int
    ) throws -> Value? {
        try GraphMaterializer(session: self).decodeReferenced(
            Value.self, reference: reference, at: path, field: field, nesting: nesting)
    }

    /// The values of a reference list's records, in order, each of which must exist. While probing, placeholders.
    func decodeRequiredReferences<Value: CKDecodable>(
        _ type: Value.Type, _ references: [CloudReference], at path: CodingPath, parent: CloudRecord.ID,
        field: String?, nesting: Int
    ) throws -> [Value] {
        try GraphMaterializer(session: self).decodeRequiredReferences(
            Value.self, references, at: path, parent: parent, field: field, nesting: nesting)
    }

    // MARK: Records in hand

    /// Puts a root decoded from the records in hand there while it is decoded (a decoder reads its record from
    /// ``records``); returns its index.
    func appendTransientRecord(_ record: CloudRecord) -> Int {
        records.append(record)
        return records.count - 1
    }

    /// Takes away the records ``appendTransientRecord(_:)`` put in hand from `count` on.
    func removeTransientRecords(from count: Int) {
        records.removeSubrange(count...)
    }

    // MARK: Slots

    /// The record's slot, made when the ID is first met: one hash either way.
    func slot(for id: CloudRecord.ID) -> Int {
        indexRoot()
        let next = slots.count
        let slot = Self.value(&slotOfID[id, default: next])
        if slot == next { slots.append(Slot(id: id)) }
        return slot
    }

    /// The slot of a record met before, or `nil`.
    func knownSlot(of id: CloudRecord.ID) -> Int? {
        indexRoot()
        return slotOfID[id]
    }

    /// Gives the root a slot, the first time anything but its own decode meets it.
    func indexRoot() {
        guard isRootIndexPending else { return }
        isRootIndexPending = false
        rootSlot = slots.count
        slots.append(Slot(id: root.id, record: rootRecord))
        slotOfID[root.id] = rootSlot
    }

    /// Makes room for this many more records met for the first time.
    func reserveSlots(_ count: Int) {
        slotOfID.reserveCapacity(slotOfID.count + count)
    }

    /// Reads a value through `inout`, so that a dictionary's defaulted subscript inserts and reads in one lookup.
    private static func value(_ value: inout Int) -> Int { value }

    /// The ID of the record at a slot.
    func id(of slot: Int) -> CloudRecord.ID { slots[slot].id }

    /// The index in ``records`` of the record at a slot, once it is in hand.
    func recordIndex(of slot: Int) -> Int? { slots[slot].record }

    /// Whether the database has no record of the slot's ID.
    func isMissing(_ slot: Int) -> Bool { slots[slot].isMissing }

    /// Notes that the database has no record of the slot's ID.
    func markMissing(_ slot: Int) { slots[slot].isMissing = true }

    /// How many references to the record resolving met.
    func timesReached(_ slot: Int) -> Int32 { slots[slot].timesReached }

    /// Counts one more reference to the record.
    func noteReached(_ slot: Int) { slots[slot].timesReached &+= 1 }

    /// Puts a record in hand, replacing one with the same ID.
    @discardableResult
    func take(_ record: consuming CloudRecord) -> Int {
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
    func takeRequested(_ record: consuming CloudRecord) -> Bool {
        guard let slot = knownSlot(of: record.id), slots[slot].isRequested, slots[slot].record == nil else {
            return false
        }
        recordCount += 1
        slots[slot].record = records.count
        records.append(record)
        slots[slot].isMissing = false
        return true
    }

    /// Whether the current level must fetch the record: it isn't in hand, known missing or asked for yet. Marks it
    /// asked for.
    func request(_ slot: Int) -> Bool {
        guard slots[slot].record == nil, !slots[slot].isMissing, !slots[slot].isRequested else { return false }
        slots[slot].isRequested = true
        return true
    }

    /// After a fetch: a requested record that didn't come is missing.
    func settle(_ slot: Int) {
        slots[slot].isRequested = false
        if slots[slot].record == nil { slots[slot].isMissing = true }
    }

    /// Marks a record reached as a type; `false` if it was already.
    func visit(_ slot: Int, as type: (any CKDecodable.Type)?) -> Bool {
        let key = TypeKey(type)
        guard let first = slots[slot].visitedAs else {
            slots[slot].visitedAs = key
            return true
        }
        return first != key && otherVisits.insert(SlotKey(slot: slot, type: key)).inserted
    }

    // MARK: What resolving learned

    /// Notes a record reached while resolving.
    func discover(_ node: Node) { discovered.append(node) }

    /// Whether resolving reached a record nested deeper than the nested-decoding limit.
    var isDeep: Bool { discovered.contains(where: { $0.depth > Self.nestedDecodingDepthLimit }) }

    /// The fields a model type decodes as records, and as which types, once a probe learned them.
    func schema(of type: any CKDecodable.Type) -> [(field: String, type: any CKDecodable.Type)]? {
        schemas[ObjectIdentifier(type)]
    }

    /// Keeps what a probe learned of a model type.
    func setSchema(_ schema: [(field: String, type: any CKDecodable.Type)], of type: any CKDecodable.Type) {
        schemas[ObjectIdentifier(type)] = schema
    }

    /// A model type's record mapping, if it has one. The type met last is remembered: a list of nested models asks
    /// for one type over and over, and the runtime's conformance lookup is a hash each time.
    func mapping(of type: any CKDecodable.Type) -> (any CloudRecordDecodable.Type)? {
        let key = ObjectIdentifier(type)
        if let last = lastMapping, last.type == key { return last.mapping }
        let mapping = type as? any CloudRecordDecodable.Type
        lastMapping = (key, mapping)
        return mapping
    }

    /// Notes a record materializing reached but resolving hadn't fetched.
    func noteUnresolved(_ node: Node) { unresolved.append(node) }

    /// The records materializing reached but resolving hadn't fetched, taken.
    func takeUnresolved() -> [Node] {
        defer { unresolved = [] }
        return unresolved
    }

    // MARK: The cache of values

    /// A slot's entry for a type.
    func entry(_ slot: Int, as key: TypeKey) -> CacheEntry? {
        if slots[slot].cachedAs == key { return slots[slot].entry }
        return otherEntries.isEmpty ? nil : otherEntries[SlotKey(slot: slot, type: key)]
    }

    /// Sets a slot's entry for a type; the entry is moved in, not copied (a copy of a boxed value is a call through
    /// its type's value witnesses).
    func setEntry(_ entry: consuming CacheEntry?, _ slot: Int, as key: TypeKey) {
        if slots[slot].cachedAs == nil || slots[slot].cachedAs == key {
            slots[slot].cachedAs = entry == nil ? nil : key
            slots[slot].entry = consume entry
        } else {
            otherEntries[SlotKey(slot: slot, type: key)] = consume entry
        }
    }

    /// Empties the cache shallowest record first. A cached value holds the values below it, and Swift releases a
    /// value whose descendants have no other owner recursively, a frame per level: in any other order, a deep
    /// chain's last entries could each take half the chain down with them.
    func clearCache() {
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

    // MARK: Locations

    func location(of node: Node) -> DecodingLocation {
        location(of: slots[node.slot].id, at: node.path)
    }

    func location(of id: CloudRecord.ID, at path: CodingPath) -> DecodingLocation {
        DecodingLocation(path: path, recordID: id, field: nil)
    }
}
