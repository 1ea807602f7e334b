import Foundation

extension String {
    /// Whether two field names are the same bytes.
    ///
    /// CloudKit compares field names byte for byte, and `==` would also look for canonically equivalent Unicode.
    /// Lengths are compared first, in constant time; then the bytes in place, with one `memcmp`, which for the
    /// short names of fields costs a fraction of comparing them a byte at a time through `UTF8View`.
    @inline(__always)
    package func hasSameBytes(as other: String) -> Bool {
        if hasSameRepresentation(as: other) { return true }
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

    /// Whether the two are the same string value in memory: one literal, one stored string, or the same short
    /// name stored inline. Then their bytes are the same, with nothing to read: the case of a model's field names
    /// against those of the last record of its type, which come from the same literals. Only known on 64-bit
    /// platforms, where a string is two words; elsewhere, `false`, and the bytes are compared.
    @inline(__always)
    private func hasSameRepresentation(as other: String) -> Bool {
        withUnsafeBytes(of: self) { mine in
            withUnsafeBytes(of: other) { theirs in
                guard mine.count == 16, theirs.count == 16 else { return false }
                return mine.loadUnaligned(as: UInt64.self) == theirs.loadUnaligned(as: UInt64.self)
                    && mine.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                        == theirs.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }

    /// Whether the string stored at `stored` is this same string value in memory (see
    /// `hasSameRepresentation(as:)`), read as its two words where it is, without copying it out: a copy would
    /// retain it. `stored` must point at an initialized `String`.
    @inline(__always)
    func hasSameRepresentation(asStringAt stored: UnsafeRawPointer) -> Bool {
        withUnsafeBytes(of: self) { mine in
            guard mine.count == 16, MemoryLayout<String>.size == 16 else { return false }
            return mine.loadUnaligned(as: UInt64.self) == stored.loadUnaligned(as: UInt64.self)
                && mine.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    == stored.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        }
    }
}

extension Array where Element == String {
    /// Whether the string at `index` has the same bytes as `name`; `false` past the end. Compared where the array
    /// stores it first: `self[index]` copies the string out (a retain and a release) only to compare it, a good part
    /// of checking a mapped model's key against the one its type's last record wrote there.
    @inline(__always)
    func hasSameBytes(at index: Int, as name: String) -> Bool {
        withUnsafeBufferPointer { strings in
            guard index >= 0, index < strings.count, let base = strings.baseAddress else { return false }
            if name.hasSameRepresentation(asStringAt: UnsafeRawPointer(base + index)) { return true }
            return strings[index].hasSameBytes(as: name)
        }
    }
}
