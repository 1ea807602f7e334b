import Foundation

/// A geographic location, with the same parts as CloudKit's Location type and Core Location's `CLLocation`.
///
/// As in `CLLocation`, a negative accuracy, course or speed means the value is unknown.
public struct CloudLocation: Sendable, Hashable, Codable {
    /// Latitude in degrees, positive north of the equator.
    public var latitude: Double
    /// Longitude in degrees, positive east of the prime meridian.
    public var longitude: Double
    /// Altitude in meters above sea level.
    public var altitude: Double
    /// The radius of uncertainty of the coordinate, in meters; negative when unknown.
    public var horizontalAccuracy: Double
    /// The uncertainty of the altitude, in meters; negative when unknown.
    public var verticalAccuracy: Double
    /// The direction of travel in degrees from true north; negative when unknown.
    public var course: Double
    /// The speed in meters per second; negative when unknown.
    public var speed: Double
    /// When the location was determined, if known.
    public var timestamp: Date?

    /// Creates a location; as with `CLLocation(latitude:longitude:)`, the parts not given are unknown.
    public init(
        latitude: Double,
        longitude: Double,
        altitude: Double = 0,
        horizontalAccuracy: Double = 0,
        verticalAccuracy: Double = -1,
        course: Double = -1,
        speed: Double = -1,
        timestamp: Date? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.speed = speed
        self.timestamp = timestamp
    }
}
