import Foundation

/// A decoder's settings, shared by every decode: a class, so that starting a decode is one retain, not a copy of
/// each setting (copying and releasing them was a tenth of decoding a flat record through a mapping), and one that
/// a decoder keeps, so that a decode doesn't allocate it.
///
/// Immutable: ``CKRecordDecoder``'s setters make a new instance with ``changing(_:)``; a decoder with the default
/// settings uses ``defaults``, so even making a decoder allocates nothing.
final class DecodingOptions: Sendable {
    /// The settings, as ``CKRecordDecoder`` declares them, with its defaults.
    struct Settings: Sendable {
        var maximumDepth = 256
        var maximumRecordCount = 100_000
        var missingReferenceStrategy: CKRecordDecoder.MissingReferenceStrategy = .nilForOptionals
        var nestedValueDecodingStrategy: CKRecordDecoder.NestedValueDecodingStrategy = .json
        var nonFiniteFloatDecodingStrategy: CKRecordDecoder.NonFiniteFloatDecodingStrategy = .throw
        var locationDecodingStrategy: CKRecordDecoder.LocationDecodingStrategy = .location
        /// As the decoder has it: a `Decoder`'s `userInfo` (values of type `Any`) is converted from it when a model
        /// asks (see ``DecodingSession/userInfo``), which few do.
        var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    }

    /// The default settings, which every decoder starts with.
    static let defaults = DecodingOptions(Settings())

    let settings: Settings

    init(_ settings: Settings) {
        self.settings = settings
    }

    /// New options: these with `change` applied.
    func changing(_ change: (inout Settings) -> Void) -> DecodingOptions {
        var settings = self.settings
        change(&settings)
        return DecodingOptions(settings)
    }

    var maximumDepth: Int { settings.maximumDepth }
    var maximumRecordCount: Int { settings.maximumRecordCount }
    var missingReferenceStrategy: CKRecordDecoder.MissingReferenceStrategy { settings.missingReferenceStrategy }
    var nestedValueDecodingStrategy: CKRecordDecoder.NestedValueDecodingStrategy {
        settings.nestedValueDecodingStrategy
    }
    var nonFiniteFloatDecodingStrategy: CKRecordDecoder.NonFiniteFloatDecodingStrategy {
        settings.nonFiniteFloatDecodingStrategy
    }
    var locationDecodingStrategy: CKRecordDecoder.LocationDecodingStrategy { settings.locationDecodingStrategy }
    var userInfo: [CodingUserInfoKey: any Sendable] { settings.userInfo }
}
