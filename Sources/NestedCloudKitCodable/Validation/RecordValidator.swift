import Foundation

/// CloudKit's rules for names and sizes, checked before anything reaches CloudKit (which answers a bad name
/// with an Objective-C exception, not an error).
enum RecordValidator {
    /// The longest record name, record type or field name CloudKit accepts.
    static let maximumNameLength = 255

    /// CloudKit's limit on a record's field data, 1 MB; assets are stored beside the record and don't count.
    static let maximumRecordSize = 1_000_000

    /// The names of `CKRecord`'s own properties, which CloudKit doesn't accept as field names.
    static let reservedFieldNames: Set<String> = [
        "recordID", "recordType", "recordChangeTag", "creationDate", "creatorUserRecordID", "modificationDate",
        "lastModifiedUserRecordID", "parent", "share", "encryptedValues", "allKeys", "allTokens", "changedKeys",
        "description", "debugDescription",
    ]

    /// Why a record name is rejected, or `nil` if CloudKit accepts it.
    static func problem(withRecordName name: String) -> String? {
        if name.isEmpty {
            return "it is empty (a nil optional id, or a class whose Identifiable id is its ObjectIdentifier, which "
                + "changes from run to run, gives an empty name)"
        }
        if name.utf8.count > maximumNameLength { return "it is longer than \(maximumNameLength) characters" }
        // Every nested value's name comes through here: one scan, in place when the string allows it, rules out
        // both problems of its bytes.
        let isPlainASCII =
            name.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy(isPlainASCIIByte) }
            ?? name.utf8.allSatisfy(isPlainASCIIByte)
        if !isPlainASCII {
            if !name.utf8.allSatisfy({ $0 < 0x80 }) { return "it has characters outside ASCII" }
            return "it has a NUL character"
        }
        if name.utf8.first == UInt8(ascii: "_") { return "it starts with an underscore, which CloudKit reserves" }
        return nil
    }

    @inline(__always)
    private static func isPlainASCIIByte(_ byte: UInt8) -> Bool { byte != 0 && byte < 0x80 }

    /// Why a zone or owner name is rejected, or `nil`: the rule of record names, except that CloudKit's own
    /// names (`_defaultZone`, `__defaultOwner__`) start with underscores.
    static func problem(withZoneName name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > maximumNameLength { return "it is longer than \(maximumNameLength) characters" }
        if !name.utf8.allSatisfy({ $0 < 0x80 }) { return "it has characters outside ASCII" }
        if name.utf8.contains(0) { return "it has a NUL character" }
        return nil
    }

    /// Why a zone can't be created, or `nil`.
    static func problem(with zoneID: CloudRecord.ZoneID) -> String? {
        if let problem = problem(withZoneName: zoneID.zoneName) {
            return "the zone name \"\(zoneID.zoneName)\" can't be used: \(problem)"
        }
        if let problem = problem(withZoneName: zoneID.ownerName) {
            return "the owner name \"\(zoneID.ownerName)\" can't be used: \(problem)"
        }
        return nil
    }

    /// Why a record can't be stored under its names, or `nil`: what a database answers with `invalidArguments`
    /// where the encoder throws before.
    static func problem(withNamesOf record: CloudRecord) -> String? {
        if let problem = problem(withRecordName: record.id.recordName) {
            return "the record name \"\(record.id.recordName)\" can't be used: \(problem)"
        }
        // A share is CloudKit's own record type, with its own fields, whose names have a dot.
        let isShare = record.recordType == CloudShare.recordType
        if !isShare, let problem = problem(withIdentifier: record.recordType) {
            return "\(record.id)'s record type \"\(record.recordType)\" can't be used: \(problem)"
        }
        for name in record.fields.names {
            if isShare, CloudShare.FieldKey.all.contains(name) { continue }
            if let problem = problem(withIdentifier: name) {
                return "\(record.id)'s field name \"\(name)\" can't be used: \(problem)"
            }
            if isReserved(name) { return "\(record.id)'s field name \"\(name)\" is the name of a CKRecord property" }
        }
        return nil
    }

    /// Why a record type or field name is rejected (apart from reserved names), or `nil` if CloudKit accepts it.
    static func problem(withIdentifier name: String) -> String? {
        let bytes = name.utf8
        guard let first = bytes.first else { return "it is empty" }
        if bytes.count > maximumNameLength { return "it is longer than \(maximumNameLength) characters" }
        if !isASCIILetter(first) { return "it doesn't start with a letter" }
        // Every field of every record comes through here: scan the bytes in place when the string allows it.
        let allValid =
            bytes.withContiguousStorageIfAvailable { buffer in buffer.allSatisfy(isIdentifierByte) }
            ?? bytes.allSatisfy(isIdentifierByte)
        return allValid ? nil : "it has characters other than letters, digits and underscores"
    }

    @inline(__always)
    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F
    }

    static func validateRecordName(_ name: String, recordType: String, at path: CodingPath) throws {
        if let problem = problem(withRecordName: name) {
            throw CKCodableError.invalidRecordName(name, recordType: recordType, problem: problem, at: path)
        }
    }

    static func validateRecordType(_ recordType: String, at path: CodingPath) throws {
        if let problem = problem(withIdentifier: recordType) {
            throw CKCodableError.invalidRecordType(recordType, problem: problem, at: path)
        }
    }

    /// Checks a field name; its path is made only for an error.
    static func validateFieldName(_ name: String, recordID: CloudRecord.ID, at path: @autoclosure () -> FieldPath)
        throws
    {
        if let problem = problem(withIdentifier: name) {
            throw CKCodableError.invalidFieldName(name, problem: problem, recordID: recordID, at: path().path)
        }
        if isReserved(name) {
            throw CKCodableError.reservedFieldName(name, recordID: recordID, at: path().path)
        }
    }

    /// Whether the name is one of `reservedFieldNames`: a `switch` compares short strings without hashing them,
    /// which matters as every field of every record is checked.
    static func isReserved(_ name: String) -> Bool {
        // Only names of these lengths and first letters can be reserved; most names are ruled out without
        // comparing a single string.
        switch (name.utf8.count, name.utf8.first ?? 0) {
        case (5, 0x73), (6, 0x70), (7, 0x61), (7, 0x63), (8, 0x72), (9, 0x61), (10, 0x72), (11, 0x63), (11, 0x64),
            (12, 0x63), (15, 0x72), (15, 0x65), (16, 0x6D), (16, 0x64), (19, 0x63), (24, 0x6C):
            break
        default:
            return false
        }
        return switch name {
        case "recordID", "recordType", "recordChangeTag", "creationDate", "creatorUserRecordID", "modificationDate",
            "lastModifiedUserRecordID", "parent", "share", "encryptedValues", "allKeys", "allTokens", "changedKeys",
            "description", "debugDescription":
            true
        default:
            false
        }
    }

    /// The bytes a value adds to a record's field data, as near as the portable model can tell.
    static func estimatedSize(of value: CloudValue) -> Int {
        switch value {
        case .string(let string): string.utf8.count
        case .int64, .double, .date: 8
        case .bytes(let data): data.count
        case .reference(let reference): estimatedSize(of: reference)
        case .asset: 0
        case .location: locationSize
        case .stringList(let strings): strings.reduce(0) { $0 + $1.utf8.count }
        case .int64List(let values): values.count * 8
        case .doubleList(let values): values.count * 8
        case .dateList(let values): values.count * 8
        case .bytesList(let datas): datas.reduce(0) { $0 + $1.count }
        case .referenceList(let references): references.reduce(0) { $0 + estimatedSize(of: $1) }
        case .assetList: 0
        case .locationList(let locations): locations.count * locationSize
        }
    }

    /// Seven doubles and a timestamp.
    private static let locationSize = 64

    private static func estimatedSize(of reference: CloudReference) -> Int {
        reference.recordID.recordName.utf8.count + reference.recordID.zoneID.zoneName.utf8.count
            + reference.recordID.zoneID.ownerName.utf8.count + 1
    }

    @inline(__always)
    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
