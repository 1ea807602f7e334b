import NestedCloudKitCodable

/// CloudKit's `.deleteSelf` rule as a walk: deleting a record deletes every record that points to it with a
/// `.deleteSelf` reference, and those that point to them, in turn. Written once for everything that applies the
/// rule: a server's modify request (`CloudModificationPlan`), and the sync store's local deletions, its
/// deletions fetched from the server, and its check for a pending save that needs a deleted record.
package enum DeleteSelfCascade {
    /// What the walk does after visiting a record.
    package enum Step {
        /// Goes on to the records that point to it.
        case descend
        /// Leaves the records that point to it, unless another path reaches them.
        case skip
        /// Ends the walk.
        case stop
    }

    /// Walks from the roots to the records that hold a `.deleteSelf` reference to a record reached, breadth first
    /// (the roots in order, then their holders in the order the store lists them, then theirs), visiting each record
    /// once.
    ///
    /// - Parameters:
    ///   - roots: Where the walk starts.
    ///   - holders: The records holding references to a record, with their actions; read before the record is
    ///     visited, so a visit may delete it.
    ///   - visit: What to do with a record reached, and where to go from it.
    package static func walk(
        from roots: [CloudRecord.ID],
        holders: (CloudRecord.ID) throws -> [(holder: CloudRecord.ID, action: CloudReference.Action)],
        visit: (CloudRecord.ID) throws -> Step
    ) rethrows {
        var pending = roots
        var next = 0
        var seen: Set<CloudRecord.ID> = []
        while next < pending.count {
            let id = pending[next]
            next += 1
            guard seen.insert(id).inserted else { continue }
            let found = try holders(id).filter { $0.action == .deleteSelf }.map(\.holder)
            switch try visit(id) {
            case .descend: pending.append(contentsOf: found)
            case .skip: continue
            case .stop: return
            }
        }
    }

    /// The targets of a record's `.deleteSelf` references, each once, in the order of its fields.
    package static func targets(of record: CloudRecord) -> [CloudRecord.ID] {
        var targets: [CloudRecord.ID] = []
        for (_, value) in record.fields {
            for reference in value.references
            where reference.action == .deleteSelf && !targets.contains(reference.recordID) {
                targets.append(reference.recordID)
            }
        }
        return targets
    }
}
