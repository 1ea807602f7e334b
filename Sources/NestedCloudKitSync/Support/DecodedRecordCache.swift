import Foundation
import NestedCloudKitCodable

/// Records recently encoded or decoded, by their JSON bytes: a record saved again (the usual edit) is compared with
/// what the store holds without decoding that again, which costs more than the rest of a local save.
///
/// Keyed by the bytes themselves, so an entry can't go stale: the same bytes always decode to the same record,
/// whatever store or transaction they came from. Bounded; the oldest entries go first.
///
/// `@unchecked Sendable` is sound: `entries` and `order` are only touched while `lock` is held.
final class DecodedRecordCache: @unchecked Sendable {
    static let shared = DecodedRecordCache(capacity: 4_096)

    private let capacity: Int
    private var entries: [Data: CloudRecord] = [:]
    private var order: [Data] = []
    private var oldest = 0
    private let lock = NSLock()

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The record the bytes encode, decoded once.
    func record(from bytes: Data, decoder: JSONDecoder) throws -> CloudRecord {
        if let record = lock.withLock({ entries[bytes] }) { return record }
        let record = try decoder.decode(CloudRecord.self, from: bytes)
        remember(record, as: bytes)
        return record
    }

    /// Notes the bytes a record was just encoded to.
    func remember(_ record: CloudRecord, as bytes: Data) {
        lock.withLock {
            guard entries.updateValue(record, forKey: bytes) == nil else { return }
            if order.count < capacity {
                order.append(bytes)
            } else {
                entries[order[oldest]] = nil
                order[oldest] = bytes
                oldest = (oldest + 1) % capacity
            }
        }
    }
}
