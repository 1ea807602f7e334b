import Foundation

extension CloudRecord {
    /// What the server keeps about a saved record.
    ///
    /// A model keeps a record's system fields by declaring a property of this type (usually optional):
    ///
    /// ```swift
    /// struct Note: CKCodable, Identifiable {
    ///     var id: String
    ///     var text: String
    ///     var systemFields: CloudRecord.SystemFields?
    /// }
    /// ```
    ///
    /// The decoder fills the property in from the fetched record and the encoder puts it back on the record it
    /// makes, whatever the property's name. A record with system fields is an update: saving it sends its change
    /// tag, so the server applies the change instead of reporting a conflict, and a `nil` optional clears the
    /// server's value instead of leaving it in place.
    public struct SystemFields: Sendable, Hashable, Codable {
        /// The server's tag for the record's current version; a save of an older version conflicts.
        public var changeTag: String?

        /// When the record was first saved.
        public var creationDate: Date?

        /// The record name of the user who first saved the record.
        public var creatorUserRecordName: String?

        /// When the record was last saved.
        public var modificationDate: Date?

        /// The record name of the user who last saved the record.
        public var lastModifiedUserRecordName: String?

        /// The device that last saved the record, as CloudKit Web Services reports it.
        public var modifiedByDevice: String?

        /// The ID of the share that covers the record, as `CKRecord.share`: set by the server on a shared
        /// hierarchy's root record (a record below the root, or in a zone-wide share, has none of its own).
        public var shareID: CloudRecord.ID?

        /// CloudKit's own archive of the record's system fields (`CKRecord.encodeSystemFields(with:)`), kept so
        /// that a record made on an Apple platform keeps everything CloudKit stores about it.
        public var archivedData: Data?

        /// Creates system fields; every part is optional because each backend reports a different subset.
        public init(
            changeTag: String? = nil,
            creationDate: Date? = nil,
            creatorUserRecordName: String? = nil,
            modificationDate: Date? = nil,
            lastModifiedUserRecordName: String? = nil,
            modifiedByDevice: String? = nil,
            archivedData: Data? = nil,
            shareID: CloudRecord.ID? = nil
        ) {
            self.changeTag = changeTag
            self.creationDate = creationDate
            self.creatorUserRecordName = creatorUserRecordName
            self.modificationDate = modificationDate
            self.lastModifiedUserRecordName = lastModifiedUserRecordName
            self.modifiedByDevice = modifiedByDevice
            self.archivedData = archivedData
            self.shareID = shareID
        }
    }
}
