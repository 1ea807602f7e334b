import Foundation

extension String {
    /// Whether two field names are the same bytes.
    ///
    /// CloudKit compares field names byte for byte, and `==` would also look for canonically equivalent Unicode.
    /// Lengths are compared first, in constant time; then the bytes in place, with one `memcmp`, which for the
    /// short names of fields costs a fraction of comparing them a byte at a time through `UTF8View`.
    @inline(__always)
    func hasSameBytes(as other: String) -> Bool {
        let bytes = utf8, otherBytes = other.utf8
        guard bytes.count == otherBytes.count else { return false }
        let compared = bytes.withContiguousStorageIfAvailable { buffer in
            otherBytes.withContiguousStorageIfAvailable { otherBuffer -> Bool in
                guard let start = buffer.baseAddress, let otherStart = otherBuffer.baseAddress else { return true }
                return memcmp(start, otherStart, buffer.count) == 0
            }
        }
        // Both are in contiguous memory unless one is bridged from Objective-C.
        if let compared, let compared { return compared }
        return bytes.elementsEqual(otherBytes)
    }
}
