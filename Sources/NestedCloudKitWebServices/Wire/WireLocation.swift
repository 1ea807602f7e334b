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

    /// The dictionary of a location: every part as a request sends it, or, when `exporting`, only the parts that
    /// don't read back as ``location`` reads a missing one, so that a location read from a response is written
    /// with the parts the server sent and no invented accuracy.
    ///
    /// An altitude of 0 is kept when the vertical accuracy is known: as in `CLLocation`, a vertical accuracy of 0
    /// or more says the altitude was measured, and 0 is then sea level, not a missing part.
    init(_ location: CloudLocation, exporting: Bool = false) {
        latitude = location.latitude
        longitude = location.longitude
        horizontalAccuracy = location.horizontalAccuracy
        verticalAccuracy = location.verticalAccuracy
        altitude = location.altitude
        speed = location.speed
        course = location.course
        timestamp = location.timestamp.map(WireTimestamp.milliseconds)
        if exporting {
            // Exactly the values `location` gives a missing part, so writing and reading back is lossless.
            if location.horizontalAccuracy == 0 { horizontalAccuracy = nil }
            if location.altitude == 0 && location.verticalAccuracy < 0 { altitude = nil }
            if location.verticalAccuracy == -1 { verticalAccuracy = nil }
            if location.course == -1 { course = nil }
            if location.speed == -1 { speed = nil }
        }
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
