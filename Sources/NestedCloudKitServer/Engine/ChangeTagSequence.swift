/// The change tags of one transaction, counting up from the last one given (by the database, or by the whole
/// in-memory server): short, and unique within the database. A reference, so that the rules can take tags from a
/// transaction they only read.
package final class ChangeTagSequence {
    /// The last number given.
    package private(set) var last: Int

    package init(after last: Int) {
        self.last = last
    }

    /// The next change tag.
    package func next() -> String {
        last += 1
        return String(last, radix: 36)
    }
}
