import Foundation

// Reading each Swift type from what the source holds: the mapping table, read backwards.
extension ValueDecoder {
    /// Decodes any value. Known types are read directly; a nested record is looked up (or, while probing, noted
    /// and stood in for); anything else decodes itself from this decoder.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try unboxKnown(type) { return try cast(value, to: T.self) }
        if let recordType = T.self as? any CKDecodable.Type {
            guard case .value(.reference(let reference)) = source else {
                if case .absent = source { throw missingValue() }
                throw CKCodableError.typeMismatch(
                    expected: "a reference to a \(T.self) record", found: sourceDescription, at: location)
            }
            guard
                let value = try session.decodeReferenced(
                    recordType, reference: reference, at: path, field: field, nesting: nesting)
            else {
                throw CKCodableError.missingRecord(reference.recordID, at: location)
            }
            return try cast(value, to: T.self)
        }
        if case .value(.referenceList(let references)) = source, let list = T.self as? any RecordListDecoding.Type,
            let values = try list.decodeRecords(references, with: self)
        {
            return try cast(values, to: T.self)
        }
        return try T(from: self)
    }

    /// Like ``unbox(_:)``, but `nil` for a missing value or, by the strategy, a reference to a missing record.
    func unboxIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        if decodeNil() { return nil }
        if let recordType = T.self as? any CKDecodable.Type, case .value(.reference(let reference)) = source {
            guard
                let value = try session.decodeReferenced(
                    recordType, reference: reference, at: path, field: field, nesting: nesting)
            else {
                if options.missingReferenceStrategy == .nilForOptionals { return nil }
                throw CKCodableError.missingRecord(reference.recordID, at: location)
            }
            return try cast(value, to: T.self)
        }
        return try unbox(type)
    }

    func cast<T>(_ value: Any, to type: T.Type) throws -> T {
        guard let typed = value as? T else {
            throw CKCodableError.typeMismatch(expected: "\(T.self)", found: "\(Swift.type(of: value))", at: location)
        }
        return typed
    }

    /// The value of a type with a direct mapping, or `nil` for other types. The type comparisons come first, so
    /// that only the matching type is ever cast.
    private func unboxKnown<T>(_ type: T.Type) throws -> Any? {
        if T.self == String.self { return try unboxString() }
        if T.self == Int.self { return try unboxInteger(Int.self) }
        if T.self == Double.self { return try unboxDouble() }
        if T.self == Bool.self { return try unboxBool() }
        if T.self == Date.self { return try unboxDate() }
        if T.self == Data.self { return try unboxData() }
        if T.self == URL.self { return try unboxURL() }
        if T.self == UUID.self { return try unboxUUID() }
        if T.self == Decimal.self { return try unboxDecimal() }
        if T.self == Float.self { return try unboxFloat() }
        if T.self == Int64.self { return try unboxInteger(Int64.self) }
        if T.self == Int32.self { return try unboxInteger(Int32.self) }
        if T.self == Int16.self { return try unboxInteger(Int16.self) }
        if T.self == Int8.self { return try unboxInteger(Int8.self) }
        if T.self == UInt.self { return try unboxInteger(UInt.self) }
        if T.self == UInt64.self { return try unboxInteger(UInt64.self) }
        if T.self == UInt32.self { return try unboxInteger(UInt32.self) }
        if T.self == UInt16.self { return try unboxInteger(UInt16.self) }
        if T.self == UInt8.self { return try unboxInteger(UInt8.self) }
        if T.self == CloudLocation.self { return try unboxLocation() }
        if T.self == CloudReference.self { return try unboxReference() }
        if T.self == CloudAsset.self { return try unboxAsset() }
        return nil
    }

    private func mismatch(_ expected: String) -> CKCodableError {
        if case .absent = source { return missingValue() }
        return CKCodableError.typeMismatch(expected: expected, found: sourceDescription, at: location)
    }

    func unboxString() throws -> String {
        switch source {
        case .value(.string(let string)), .json(.string(let string)), .recordName(let string): string
        default: throw mismatch("String")
        }
    }

    func unboxBool() throws -> Bool {
        switch source {
        case .value(.int64(let int)), .json(.int(let int)):
            guard int == 0 || int == 1 else {
                throw CKCodableError.corruptedValue("\(int) is not a boolean (0 or 1)", at: location)
            }
            return int == 1
        case .json(.bool(let bool)): return bool
        default: throw mismatch("Bool")
        }
    }

    func unboxInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let int: Int64
        switch source {
        case .value(.int64(let value)), .json(.int(let value)): int = value
        case .recordName(let name):
            guard let value = T(name) else { throw mismatch("\(T.self)") }
            return value
        default: throw mismatch("\(T.self)")
        }
        guard let value = T(exactly: int) else {
            throw CKCodableError.valueOutOfRange(String(int), type: "\(T.self)", at: location)
        }
        return value
    }

    func unboxDouble() throws -> Double {
        switch source {
        case .value(.double(let double)), .json(.double(let double)): return double
        case .value(.int64(let int)), .json(.int(let int)): return Double(int)
        case .value(.string(let string)), .json(.string(let string)):
            if case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = options
                .nonFiniteFloatDecodingStrategy
            {
                if string == positiveInfinity { return .infinity }
                if string == negativeInfinity { return -.infinity }
                if string == nan { return .nan }
            }
            throw mismatch("Double")
        default: throw mismatch("Double")
        }
    }

    func unboxFloat() throws -> Float {
        let double = try unboxDouble()
        let float = Float(double)
        guard float.isFinite || !double.isFinite else {
            throw CKCodableError.valueOutOfRange(String(double), type: "Float", at: location)
        }
        return float
    }

    func unboxDate() throws -> Date {
        switch source {
        case .value(.date(let date)): return try checked(date)
        case .json(.int(let milliseconds)): return Date(millisecondsSince1970: milliseconds)
        default: throw mismatch("Date")
        }
    }

    /// A date CloudKit could have stored. Others (NaN, infinite, beyond ±275,000 years) come only from damaged or
    /// forged records, and Foundation traps printing the farthest of them: an error here, not a crash later.
    private func checked(_ date: Date) throws -> Date {
        guard date.isStorableInCloudKit else {
            throw CKCodableError.corruptedValue(
                "the date \(date.timeIntervalSinceReferenceDate) seconds from 2001 isn't one CloudKit stores",
                at: location)
        }
        return date
    }

    func unboxData() throws -> Data {
        switch source {
        case .value(.bytes(let data)): return data
        case .value(.asset(let asset)): return try contents(of: asset)
        case .json(.string(let base64)):
            guard let data = Data(base64Encoded: base64) else {
                throw CKCodableError.corruptedValue("the string isn't Base64", at: location)
            }
            return data
        default: throw mismatch("Data")
        }
    }

    private func contents(of asset: CloudAsset) throws -> Data {
        do {
            return try asset.contents()
        } catch {
            throw CKCodableError.corruptedValue(error.reason, at: location)
        }
    }

    func unboxURL() throws -> URL {
        switch source {
        case .value(.string(let string)), .json(.string(let string)):
            guard let url = URL(string: string) else {
                throw CKCodableError.corruptedValue("\"\(string)\" isn't a URL", at: location)
            }
            return url
        case .value(.asset(let asset)):
            guard let url = asset.fileURL else {
                throw CKCodableError.corruptedValue("the asset has no local file; download it first", at: location)
            }
            return url
        default: throw mismatch("URL")
        }
    }

    func unboxUUID() throws -> UUID {
        let string = try unboxString()
        guard let uuid = UUID(uuidString: string) else {
            throw CKCodableError.corruptedValue("\"\(string)\" isn't a UUID", at: location)
        }
        return uuid
    }

    func unboxDecimal() throws -> Decimal {
        switch source {
        case .value(.string(let string)), .json(.string(let string)):
            guard let decimal = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) else {
                throw CKCodableError.corruptedValue("\"\(string)\" isn't a decimal number", at: location)
            }
            return decimal
        case .value(.double(let double)), .json(.double(let double)):
            // Through the double's shortest text, which is the number the field shows: `Decimal(Double)` traps on
            // infinity, gives NaN outside about 1e±110 and keeps binary noise (123.456 becomes 123.45599999999997952).
            guard double.isFinite,
                let decimal = Decimal(string: String(double), locale: Locale(identifier: "en_US_POSIX"))
            else {
                throw CKCodableError.valueOutOfRange(String(double), type: "Decimal", at: location)
            }
            return decimal
        case .value(.int64(let int)), .json(.int(let int)): return Decimal(int)
        default: throw mismatch("Decimal")
        }
    }

    func unboxLocation() throws -> CloudLocation {
        switch source {
        case .value(.location(let location)):
            if let timestamp = location.timestamp { _ = try checked(timestamp) }
            return location
        case .value(.string(let string)) where options.locationDecodingStrategy == .acceptingLegacyStrings:
            let parts = string.split(separator: ";", omittingEmptySubsequences: false)
            guard parts.count == 2,
                let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
                let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces)),
                latitude.isFinite, longitude.isFinite
            else {
                throw CKCodableError.corruptedValue(
                    "\"\(string)\" isn't a \"latitude;longitude\" location", at: location)
            }
            return CloudLocation(latitude: latitude, longitude: longitude)
        case .json(.object):
            return try CloudLocation(from: self)
        default: throw mismatch("CloudLocation")
        }
    }

    func unboxReference() throws -> CloudReference {
        guard case .value(.reference(let reference)) = source else { throw mismatch("CloudReference") }
        return reference
    }

    func unboxAsset() throws -> CloudAsset {
        guard case .value(.asset(let asset)) = source else { throw mismatch("CloudAsset") }
        return asset
    }
}
