import Foundation
import NestedCloudKitCodable
import PropertyBased
import Testing

@testable import NestedCloudKitSync

/// On random chores and random queries, the store's SQL gives what a filter, sort and limit over every record in
/// memory gives, under SQLite's rules (written again here, independently of the store's SQL): every comparator,
/// `nil`, lists, references, dates, unicode. A failure reports the seed that replays it.
@Suite("Store: queries equal the same query in memory")
struct QueryProperties {
    @Test func randomQueriesOnRandomChores() async {
        await propertyCheck(count: 25, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            do {
                try await Self.check(&random, seed: seed)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    private static let titles = ["", "a", "A", "ab", "b", "é", "e\u{301}", "Zoë", "a\"b", "a'b", "日本", "🙂", "ab c"]
    private static let tags = ["x", "y", "z", "é"]

    private static func check(_ random: inout SplitMix64, seed: UInt64) async throws {
        let store = try SyncStore.inMemory()
        var chores: [Chore] = []
        for index in 0..<Int(random.next() % 25) {
            let tagCount = Int(random.next() % 3)
            let chore = Chore(
                id: "c\(random.next() % 1000)-\(index)", title: pick(titles, &random), isDone: random.next() % 2 == 0,
                priority: Int(random.next() % 7) - 3, score: [-1.5, 0, 0.25, 2, 1e9][Int(random.next() % 5)],
                due: random.next() % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(random.next() % 4) * 1000.5),
                tags: (0..<tagCount).map { _ in pick(tags, &random) },
                project: random.next() % 3 == 0
                    ? nil
                    : CloudLazyReference(
                        recordID: CloudRecord.ID(recordName: "p\(random.next() % 2)", zoneID: SyncStore.defaultZoneID)))
            chores.append(chore)
            try await store.save(chore)
        }
        if random.next() % 2 == 0 { try await store.declareIndexes(for: [Chore.self]) }
        let records = try await store.records(matching: ModelQuery(Chore.self))
        for _ in 0..<20 {
            var query = ModelQuery(Chore.self)
            if random.next() % 5 != 0 { query = query.filter(filter(&random, depth: 0)) }
            let sortKeys = Int(random.next() % 3)
            query.sortOrder = (0..<sortKeys).map { _ in
                let field = pick(sortable, &random)
                return random.next() % 2 == 0 ? .ascending(field) : .descending(field)
            }
            if random.next() % 2 == 0 { query = query.limit(Int(random.next() % 6), offset: Int(random.next() % 4)) }
            let expected = InMemoryQuery.run(query, on: records).map(\.id.recordName)
            let found = try await store.records(matching: query).map(\.id.recordName)
            #expect(found == expected, "seed \(seed): \(query)")
            #expect(try await store.count(query) == expected.count, "seed \(seed): \(query)")
            #expect(try await store.fetch(query).map(\.id) == expected, "seed \(seed): \(query)")
        }
    }

    private static let sortable: [QueryField<Chore>] = [
        .key(.title), .key(.isDone), .key(.priority), .key(.score), .key(.due), .recordName,
    ]

    private static func pick<T>(_ values: [T], _ random: inout SplitMix64) -> T {
        values[Int(random.next() % UInt64(values.count))]
    }

    private static func filter(_ random: inout SplitMix64, depth: Int) -> ModelFilter<Chore> {
        let choice = random.next() % (depth < 2 ? 16 : 13)
        switch choice {
        case 0: return .equals(.title, pick(titles, &random))
        case 1: return .notEquals(.priority, Int(random.next() % 7) - 3)
        case 2: return .lessThan(.score, [-1.0, 0, 0.25, 1.5, 3][Int(random.next() % 5)])
        case 3: return .greaterThanOrEquals(.title, pick(titles, &random))
        case 4: return .lessThanOrEquals(.due, Date(timeIntervalSince1970: Double(random.next() % 4) * 1000.5))
        case 5: return .greaterThan(.priority, Int(random.next() % 7) - 3)
        case 6: return .isIn(.title, (0..<Int(random.next() % 3)).map { _ in pick(titles, &random) })
        case 7: return .notIn(.priority, (0..<Int(random.next() % 3)).map { _ in Int(random.next() % 7) - 3 })
        case 8: return .beginsWith(.title, pick(["", "a", "A", "e", "日", "Zo"], &random))
        case 9: return .contains(.tags, pick(tags, &random))
        case 10: return .references(.project, recordName: "p\(random.next() % 3)")
        case 11: return random.next() % 2 == 0 ? .isNil(.due) : .isNotNil(.project)
        case 12: return .equals(.isDone, random.next() % 2 == 0)
        case 13: return filter(&random, depth: depth + 1) && filter(&random, depth: depth + 1)
        case 14: return filter(&random, depth: depth + 1) || filter(&random, depth: depth + 1)
        default: return !filter(&random, depth: depth + 1)
        }
    }
}

/// A query run over records in memory with SQLite's rules: three-valued logic (a missing field is unknown, and
/// unknown isn't a match), numbers before text, text by UTF-8 bytes, `nil` first in ascending order.
enum InMemoryQuery {
    indirect enum Value: Equatable {
        case integer(Int64)
        case real(Double)
        case text(String)
        case list([Value])

        var rank: Int {
            switch self {
            case .integer, .real: 1
            case .text: 2
            case .list: 3
            }
        }
    }

    static func value(_ cloud: CloudValue?) -> Value? {
        switch cloud {
        case .string(let text)?: .text(text)
        case .int64(let number)?: .integer(number)
        case .double(let number)?: .real(number)
        case .date(let date)?: .real(date.timeIntervalSince1970)
        case .reference(let reference)?: .text(reference.recordID.recordName)
        case .stringList(let texts)?: .list(texts.map(Value.text))
        case .referenceList(let references)?: .list(references.map { .text($0.recordID.recordName) })
        default: nil
        }
    }

    static func field(_ target: QueryField<Chore>.Target, of record: CloudRecord) -> Value? {
        switch target {
        case .field(let name, _): value(record.fields[name])
        case .recordName: .text(record.id.recordName)
        case .creationDate, .modificationDate: nil
        }
    }

    /// SQLite's order of two non-null values.
    static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        if lhs.rank != rhs.rank { return lhs.rank < rhs.rank ? -1 : 1 }
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)):
            let (x, y) = (Array(a.utf8), Array(b.utf8))
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        default:
            let (a, b) = (number(lhs), number(rhs))
            return a == b ? 0 : (a < b ? -1 : 1)
        }
    }

    private static func number(_ value: Value) -> Double {
        switch value {
        case .integer(let number): Double(number)
        case .real(let number): number
        default: 0
        }
    }

    static func matches(_ node: ModelFilter<Chore>.Node, _ record: CloudRecord) -> Bool? {
        switch node {
        case .compare(let target, let comparison, let cloud):
            guard let stored = field(target, of: record), let wanted = value(cloud) else { return nil }
            let order = compare(stored, wanted)
            switch comparison {
            case .equals: return order == 0
            case .notEquals: return order != 0
            case .lessThan: return order < 0
            case .lessThanOrEquals: return order <= 0
            case .greaterThan: return order > 0
            case .greaterThanOrEquals: return order >= 0
            }
        case .isIn(let target, let clouds, let negated):
            // A record without the field matches no comparison, negated or not, an empty list's included.
            guard let stored = field(target, of: record) else { return nil }
            let found = clouds.contains { value($0).map { compare(stored, $0) == 0 } ?? false }
            return negated ? !found : found
        case .beginsWith(let target, let prefix):
            guard let stored = field(target, of: record) else { return nil }
            guard case .text(let text) = stored else { return false }
            return text.unicodeScalars.starts(with: prefix.unicodeScalars)
        case .listContains(let target, let cloud):
            guard let stored = field(target, of: record), let wanted = value(cloud) else { return nil }
            if case .list(let elements) = stored { return elements.contains { compare($0, wanted) == 0 } }
            return compare(stored, wanted) == 0
        case .references(let target, let id):
            guard let stored = field(target, of: record) else { return nil }
            let wanted = Value.text(id.recordName)
            if case .list(let elements) = stored { return elements.contains(wanted) }
            return stored == wanted
        case .isNil(let target, let isNil):
            return (field(target, of: record) == nil) == isNil
        case .and(let nodes):
            let results = nodes.map { matches($0, record) }
            if results.contains(false) { return false }
            return results.contains(nil) ? nil : true
        case .or(let nodes):
            let results = nodes.map { matches($0, record) }
            if results.contains(true) { return true }
            return results.contains(nil) ? nil : false
        case .not(let node):
            return matches(node, record).map { !$0 }
        case .invalid:
            return nil
        }
    }

    static func run(_ query: ModelQuery<Chore>, on records: [CloudRecord]) -> [CloudRecord] {
        var found = records.filter { record in query.filter.map { matches($0.node, record) == true } ?? true }
        found.sort { lhs, rhs in
            for key in query.sortOrder {
                let (a, b) = (field(key.field.target, of: lhs), field(key.field.target, of: rhs))
                let order: Int
                switch (a, b) {
                case (nil, nil): order = 0
                case (nil, _): order = -1
                case (_, nil): order = 1
                case (let a?, let b?): order = compare(a, b)
                }
                if order != 0 { return key.descending ? order > 0 : order < 0 }
            }
            // Equal keys by record name, ascending whatever the keys' direction.
            return compare(.text(lhs.id.recordName), .text(rhs.id.recordName)) < 0
        }
        let start = min(query.offset, found.count)
        let end = query.limit.map { min(found.count, start + $0) } ?? found.count
        return Array(found[start..<end])
    }
}
