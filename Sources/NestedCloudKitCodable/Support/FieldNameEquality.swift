extension String {
    /// Whether two field names are the same bytes.
    ///
    /// CloudKit compares field names byte for byte, and `==` would also look for canonically equivalent Unicode,
    /// which costs more than every other step of mapping a field. Lengths are compared first, in constant time.
    @inline(__always)
    func hasSameBytes(as other: String) -> Bool {
        let bytes = utf8, otherBytes = other.utf8
        return bytes.count == otherBytes.count && bytes.first == otherBytes.first && bytes.elementsEqual(otherBytes)
    }
}
