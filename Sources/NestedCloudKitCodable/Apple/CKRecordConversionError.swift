#if canImport(CloudKit)
import Foundation

/// Why a portable ``CloudRecord`` can't become a `CKRecord` (``CloudRecord/ckRecord()``, and the encoder's
/// `[CKRecord]` output): the record and field it is about, and what to do.
///
/// ``CloudKitDatabase`` reports these as ``CloudDatabaseError``s: a refused record as
/// ``CloudDatabaseError/invalidArguments(_:)`` in its own result, a file that can't be written as
/// ``CloudDatabaseError/internalError(_:)`` for the whole request.
public struct CKRecordConversionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is: compare with `==`, or `switch` over it with a `default`, as a later
    /// release may add codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as logs give it.
        public let description: String

        private init(_ name: String) { description = name }

        /// The record has a change tag but no archive of CloudKit's system fields for this record at that version:
        /// it was read from another backend (SQLite, CloudKit Web Services), or its ID, type or change tag changed
        /// after CloudKit's framework fetched it. A `CKRecord` made from it would be a new record, which conflicts
        /// with the server's on save.
        public static let changeTagWithoutArchive = Code("changeTagWithoutArchive")
        /// A field marked encrypted holds a value `CKRecord.encryptedValues` refuses: a reference (CloudKit keeps
        /// references readable for the server) or an asset (CloudKit encrypts assets anyway), or a list of them.
        public static let unencryptableValue = Code("unencryptableValue")
        /// A new record's asset has no local contents (neither bytes nor a file), so there is nothing to upload.
        public static let assetWithoutContents = Code("assetWithoutContents")
        /// The bytes of an in-memory asset couldn't be written to the temporary file `CKAsset` needs.
        public static let temporaryFileNotWritable = Code("temporaryFileNotWritable")
    }

    /// What is wrong, with what the description needs. Internal, so that a new kind breaks no app's `switch`.
    enum Kind: Sendable, Hashable {
        case changeTagWithoutArchive(changeTag: String)
        case unencryptableValue(CloudValue.Kind)
        case assetWithoutContents
        case temporaryFileNotWritable(reason: String)
    }

    let kind: Kind
    /// The record that can't be converted.
    public let recordID: CloudRecord.ID
    /// The field, when the problem is one field's.
    public let field: String?

    init(_ kind: Kind, recordID: CloudRecord.ID, field: String? = nil) {
        self.kind = kind
        self.recordID = recordID
        self.field = field
    }

    /// What is wrong.
    public var code: Code {
        switch kind {
        case .changeTagWithoutArchive: .changeTagWithoutArchive
        case .unencryptableValue: .unencryptableValue
        case .assetWithoutContents: .assetWithoutContents
        case .temporaryFileNotWritable: .temporaryFileNotWritable
        }
    }

    /// What is wrong, where, and how to fix it.
    public var description: String {
        let place = field.map { "\(recordID)'s field \($0)" } ?? "\(recordID)"
        switch kind {
        case .changeTagWithoutArchive(let changeTag):
            return "\(place) has the change tag \(changeTag) but no CloudKit archive of its system fields at that "
                + "version (it was read from another backend, or its ID, type or change tag changed after it was "
                + "fetched), so it would save as a new record and conflict: save it through CloudKitDatabase, which "
                + "fetches the server's record to check the change tag, or apply the change to a record fetched "
                + "from CloudKit; to overwrite the server's record instead, set systemFields to nil and save with "
                + ".changedKeys or .allKeys"
        case .unencryptableValue(let kind):
            return "\(place) is marked encrypted but holds a \(kind) value, which CloudKit doesn't encrypt "
                + "(references stay readable for the server; assets are always encrypted): store it unencrypted"
        case .assetWithoutContents:
            return "\(place) holds an asset without local contents (no bytes and no file), so a new record has "
                + "nothing to upload: give it a file or bytes, or fetch the record's asset first"
        case .temporaryFileNotWritable(let reason):
            return "\(place) holds asset bytes that couldn't be written to a temporary file for CKAsset: \(reason); "
                + "free disk space or check that the temporary directory is writable"
        }
    }
}
#endif
