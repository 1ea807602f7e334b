/// Puts records in dependency order: each record after the records it references, the root last.
///
/// The order is computed from the finished records alone, walking references in field order from the root, so
/// it doesn't depend on the order in which values were reached (a `Set`'s order changes from run to run).
enum RecordOrdering {
    /// - Parameters:
    ///   - records: The finished records, the root first.
    ///   - position: A record's position in `records`, by its ID.
    static func dependencyOrder(of records: [CloudRecord], position: (CloudRecord.ID) -> Int?) -> [CloudRecord] {
        // A record with no nested records, the most common graph, needs no walk.
        guard records.count > 1 else { return records }
        var ordered: [CloudRecord] = []
        ordered.reserveCapacity(records.count)
        var reached = [Bool](repeating: false, count: records.count)
        reached[0] = true

        // An explicit stack instead of recursion, so a long chain of records can't overflow the call stack.
        // A reference to a record already on the stack closes a cycle; it is skipped, so that record comes later.
        var stack: [(position: Int, references: [CloudRecord.ID], next: Int)] = [(0, records[0].referencedRecordIDs, 0)]
        while !stack.isEmpty {
            let top = stack.count - 1
            if stack[top].next < stack[top].references.count {
                let targetID = stack[top].references[stack[top].next]
                stack[top].next += 1
                if let target = position(targetID), !reached[target] {
                    reached[target] = true
                    let references = records[target].referencedRecordIDs
                    // A record that references nothing, most of a graph, is finished as soon as it is reached.
                    if references.isEmpty {
                        ordered.append(records[target])
                    } else {
                        stack.append((target, references, 0))
                    }
                }
            } else {
                ordered.append(records[stack.removeLast().position])
            }
        }

        // Every record is reached from the root; this keeps any other record rather than lose it.
        if ordered.count < records.count {
            let unreached = records.indices.filter { !reached[$0] }.map { records[$0] }
            ordered.insert(contentsOf: unreached, at: max(ordered.count - 1, 0))
        }
        return ordered
    }
}
