#if canImport(CoreLocation)
import CoreLocation
import Foundation

extension CloudLocation {
    /// The portable form of a Core Location location.
    public init(_ location: CLLocation) {
        self.init(
            latitude: location.coordinate.latitude, longitude: location.coordinate.longitude,
            altitude: location.altitude,
            horizontalAccuracy: location.horizontalAccuracy, verticalAccuracy: location.verticalAccuracy,
            course: location.course, speed: location.speed, timestamp: location.timestamp
        )
    }
}

extension CLLocation {
    /// A Core Location location from the portable form; a location without a timestamp gets the current time,
    /// as `CLLocation(latitude:longitude:)` does.
    public convenience init(_ location: CloudLocation) {
        self.init(
            coordinate: CLLocationCoordinate2D(latitude: location.latitude, longitude: location.longitude),
            altitude: location.altitude, horizontalAccuracy: location.horizontalAccuracy,
            verticalAccuracy: location.verticalAccuracy, course: location.course, speed: location.speed,
            timestamp: location.timestamp ?? Date()
        )
    }
}

// `CLLocation` isn't `Codable` (a class can't gain a required initializer in an extension), so a model that keeps
// one encodes it in its own `encode(to:)`; these let it do so in one line, as a Location field.
extension KeyedEncodingContainer {
    /// Encodes a Core Location location as a Location field.
    public mutating func encode(_ location: CLLocation, forKey key: Key) throws {
        try encode(CloudLocation(location), forKey: key)
    }

    /// Encodes a Core Location location as a Location field, or `nil`.
    public mutating func encodeIfPresent(_ location: CLLocation?, forKey key: Key) throws {
        try encodeIfPresent(location.map(CloudLocation.init), forKey: key)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a Core Location location from a Location field.
    public func decode(_ type: CLLocation.Type, forKey key: Key) throws -> CLLocation {
        CLLocation(try decode(CloudLocation.self, forKey: key))
    }

    /// Decodes a Core Location location from a Location field, or `nil`.
    public func decodeIfPresent(_ type: CLLocation.Type, forKey key: Key) throws -> CLLocation? {
        try decodeIfPresent(CloudLocation.self, forKey: key).map { CLLocation($0) }
    }
}
#endif
