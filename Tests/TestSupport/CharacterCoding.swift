import Foundation

// The standard library doesn't make `Character` Codable; models that store one add a conformance like this.
// swift-format-ignore: AvoidRetroactiveConformances
extension Character: @retroactive Codable {
    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        guard let character = string.first, string.count == 1 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not one character"))
        }
        self = character
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(self))
    }
}
