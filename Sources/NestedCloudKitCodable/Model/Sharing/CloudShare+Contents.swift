import Foundation

extension CloudShare {
    /// What a share's record keeps besides fields and system fields: what it shares, who may use it and where to
    /// accept it. It travels with the record (``CloudRecord/shareContents``) through every backend, so that a
    /// share is saved, fetched and synced as the record it is in CloudKit.
    package struct Contents: Sendable, Hashable, Codable {
        /// The shared hierarchy's root; `nil` for a zone-wide share.
        package var rootRecordID: CloudRecord.ID?
        package var publicPermission: Permission = .none
        package var participants: [Participant] = []
        /// Assigned by the server on the first save.
        package var url: URL?
        /// Assigned by the server on the first save: the last part of ``url``.
        package var shortGUID: String?

        package init(
            rootRecordID: CloudRecord.ID?, publicPermission: Permission = .none, participants: [Participant] = [],
            url: URL? = nil, shortGUID: String? = nil
        ) {
            self.rootRecordID = rootRecordID
            self.publicPermission = publicPermission
            self.participants = participants
            self.url = url
            self.shortGUID = shortGUID
        }
    }
}
