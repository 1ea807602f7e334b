import Foundation
import NestedCloudKitCodable

/// Records recently encoded or decoded, by their JSON bytes: a record saved again (the usual edit) is compared with
/// what the store holds without decoding that again, which costs more than the rest of a local save.
///
/// Keyed by the bytes themselves, so an entry can't go stale: the same bytes always decode to the same record,
/// whatever store or transaction they came from. Bounded by bytes (a record can hold up to 1 MB); the oldest
/// entries go first, and a record too large to be worth keeping is never kept.
///
/// `@unchecked Sendable` is sound: `entries`, `order` and `totalBytes` are only touched while `lock` is held.
final class DecodedRecordCache: @unchecked Sendable {
    static let shared = DecodedRecordCache(capacityBytes: 16 << 20, maximumEntryBytes: 64 << 10)

    private let capacityBytes: Int
    private let maximumEntryBytes: Int
    private var entries: [Key: CloudRecord] = [:]
    private var order: [Key] = []
    private var oldest = 0
    private var totalBytes = 0
    private let lock = NSLock()

    init(capacityBytes: Int, maximumEntryBytes: Int) {
        self.capacityBytes = capacityBytes
        self.maximumEntryBytes = maximumEntryBytes
    }

    /// The record the bytes encode, decoded once.
    func record(from bytes: Data, decoder: JSONDecoder) throws -> CloudRecord {
        if let record = lock.withLock({ entries[Key(bytes: bytes)] }) { return record }
        let record = try decoder.decode(CloudRecord.self, from: bytes)
        remember(record, as: bytes)
        return record
    }

    /// Notes the bytes a record was just encoded to.
    func remember(_ record: CloudRecord, as bytes: Data) {
        guard bytes.count <= maximumEntryBytes else { return }
        let key = Key(bytes: bytes)
        lock.withLock {
            guard entries.updateValue(record, forKey: key) == nil else { return }
            order.append(key)
            totalBytes += bytes.count
            while totalBytes > capacityBytes, oldest < order.count {
                let evicted = order[oldest]
                // Bytes evicted, added again and listed twice are counted once: only while present.
                if entries.removeValue(forKey: evicted) != nil { totalBytes -= evicted.bytes.count }
                oldest += 1
            }
            // Drop the evicted prefix now and then, so `order` doesn't grow without bound.
            if oldest > 1_024, oldest * 2 > order.count {
                order.removeFirst(oldest)
                oldest = 0
            }
        }
    }

    /// Bytes as a key hashed over every byte: `Data`'s own hash may read only a prefix, and the JSON of records
    /// of one type shares a long one, which would crowd every entry into a few buckets.
    private struct Key: Hashable {
        let bytes: Data

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
