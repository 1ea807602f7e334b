extension String {
    /// Whether two field names are the same bytes.
    ///
    /// CloudKit compares field names byte for byte, and `==` would also look for canonically equivalent Unicode,
    /// which costs more than every other step of mapping a field. Lengths are compared first, in constant time.
    @inline(__always)
    func hasSameBytes(as other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }
}
