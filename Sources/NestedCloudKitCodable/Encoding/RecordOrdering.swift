/// Puts records in dependency order: each record after the records it references, the root last.
///
/// The order is computed from the finished records alone, walking references in field order from the root, so
/// it doesn't depend on the order in which values were reached (a `Set`'s order changes from run to run).
enum RecordOrdering {
    static func dependencyOrder(
        of records: [CloudRecord.ID: CloudRecord],
        finishingOrder: [CloudRecord.ID],
        rootID: CloudRecord.ID
    ) -> [CloudRecord] {
        // A record with no nested records, the most common graph, needs no walk.
        if records.count == 1, let root = records[rootID] { return [root] }
        var ordered: [CloudRecord] = []
        ordered.reserveCapacity(records.count)
        var reached: Set<CloudRecord.ID> = [rootID]

        // An explicit stack instead of recursion, so a long chain of records can't overflow the call stack.
        // A reference to a record already on the stack closes a cycle; it is skipped, so that record comes later.
        var stack: [(record: CloudRecord, references: [CloudRecord.ID], next: Int)] = []
        if let root = records[rootID] { stack.append((root, root.referencedRecordIDs, 0)) }
        while !stack.isEmpty {
            let top = stack.count - 1
            if stack[top].next < stack[top].references.count {
                let targetID = stack[top].references[stack[top].next]
                stack[top].next += 1
                if let target = records[targetID], reached.insert(targetID).inserted {
                    stack.append((target, target.referencedRecordIDs, 0))
                }
            } else {
                ordered.append(stack.removeLast().record)
            }
        }

        // Every record is reached from the root; this keeps any other record rather than lose it.
        if ordered.count < records.count {
            let unreached = finishingOrder.filter { !reached.contains($0) }.compactMap { records[$0] }
            ordered.insert(contentsOf: unreached, at: max(ordered.count - 1, 0))
        }
        return ordered
    }
}
