import Foundation

/// An encoder's settings, shared by every record's writer and container: a class, so that handing them to each
/// record's writer is one retain, not one per setting, and one that an encoder keeps, so that an encode doesn't
/// allocate it.
///
/// Immutable: ``CKRecordEncoder``'s setters make a new instance with ``changing(_:)``. So it is `Sendable`, though
/// ``encoderUserInfo`` holds `Any`: its values are ``Settings/userInfo``'s, which are `Sendable`, only typed as an
/// `Encoder` gives them.
final class EncodingOptions: @unchecked Sendable {
    /// The settings, as ``CKRecordEncoder`` declares them.
    struct Settings: Sendable {
        var zoneID: CloudRecord.ZoneID
        var dataEncodingStrategy: CKRecordEncoder.DataEncodingStrategy = .bytes
        var nestedValueEncodingStrategy: CKRecordEncoder.NestedValueEncodingStrategy = .json
        var decimalEncodingStrategy: CKRecordEncoder.DecimalEncodingStrategy = .string
        var nonFiniteFloatEncodingStrategy: CKRecordEncoder.NonFiniteFloatEncodingStrategy = .throw
        var userInfo: [CodingUserInfoKey: any Sendable] = [:]
        /// Whether every record lists the fields its value left out as `nil` or empty, new records too, not only
        /// records with system fields: what a store's save needs to tell a field the model cleared from one it
        /// doesn't know.
        var listsClearedFields = false
    }

    let settings: Settings
    /// The `userInfo` as an `Encoder` gives it, converted once, when the settings are made.
    let encoderUserInfo: [CodingUserInfoKey: Any]

    init(_ settings: Settings) {
        self.settings = settings
        encoderUserInfo = settings.userInfo.isEmpty ? [:] : settings.userInfo.mapValues { $0 as Any }
    }

    /// New options: these with `change` applied.
    func changing(_ change: (inout Settings) -> Void) -> EncodingOptions {
        var settings = self.settings
        change(&settings)
        return EncodingOptions(settings)
    }

    var zoneID: CloudRecord.ZoneID { settings.zoneID }
    var dataEncodingStrategy: CKRecordEncoder.DataEncodingStrategy { settings.dataEncodingStrategy }
    var nestedValueEncodingStrategy: CKRecordEncoder.NestedValueEncodingStrategy {
        settings.nestedValueEncodingStrategy
    }
    var decimalEncodingStrategy: CKRecordEncoder.DecimalEncodingStrategy { settings.decimalEncodingStrategy }
    var nonFiniteFloatEncodingStrategy: CKRecordEncoder.NonFiniteFloatEncodingStrategy {
        settings.nonFiniteFloatEncodingStrategy
    }
    var userInfo: [CodingUserInfoKey: any Sendable] { settings.userInfo }
    var listsClearedFields: Bool { settings.listsClearedFields }
}
