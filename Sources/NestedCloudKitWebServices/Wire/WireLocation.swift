import Foundation
import NestedCloudKitCodable

/// A location dictionary: `{latitude, longitude, horizontalAccuracy, verticalAccuracy, altitude, speed, course,
/// timestamp}`, the timestamp in milliseconds since 1970.
struct WireLocation: Codable, Hashable, Sendable {
    var latitude: Double
    var longitude: Double
    var horizontalAccuracy: Double?
    var verticalAccuracy: Double?
    var altitude: Double?
    var speed: Double?
    var course: Double?
    var timestamp: Double?

    init(_ location: CloudLocation) {
        latitude = location.latitude
        longitude = location.longitude
        horizontalAccuracy = location.horizontalAccuracy
        verticalAccuracy = location.verticalAccuracy
        altitude = location.altitude
        speed = location.speed
        course = location.course
        timestamp = location.timestamp.map(WireTimestamp.milliseconds)
    }

    /// The portable location; parts the server leaves out are unknown, as in `CLLocation`.
    var location: CloudLocation {
        CloudLocation(
            latitude: latitude, longitude: longitude, altitude: altitude ?? 0,
            horizontalAccuracy: horizontalAccuracy ?? 0, verticalAccuracy: verticalAccuracy ?? -1,
            course: course ?? -1, speed: speed ?? -1,
            timestamp: timestamp.map(WireTimestamp.date)
        )
    }
}
