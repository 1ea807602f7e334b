import Foundation

extension CloudValue {
    /// The value as CloudKit stores it, or `nil` when CloudKit can't store it.
    ///
    /// Dates are kept to the whole millisecond, so a database returns what CloudKit would. A date that isn't
    /// finite or is out of CloudKit's range, and a location with a part that isn't finite, are refused rather than
    /// stored as something else: SQLite, like CloudKit's millisecond timestamps, has no way to keep them.
    package var storedByCloudKit: CloudValue? {
        switch self {
        case .date(let date):
            return date.isStorableInCloudKit ? .date(Self.normalizedDate(date)) : nil
        case .dateList(let dates):
            guard dates.allSatisfy(\.isStorableInCloudKit) else { return nil }
            return .dateList(dates.map(Self.normalizedDate))
        case .location(let location):
            return location.storedByCloudKit.map(CloudValue.location)
        case .locationList(let locations):
            let stored = locations.compactMap(\.storedByCloudKit)
            return stored.count == locations.count ? .locationList(stored) : nil
        default:
            return self
        }
    }
}

extension CloudLocation {
    /// The location as CloudKit stores it (its timestamp to the millisecond), or `nil` if a part isn't finite.
    package var storedByCloudKit: CloudLocation? {
        let parts = [latitude, longitude, altitude, horizontalAccuracy, verticalAccuracy, course, speed]
        guard parts.allSatisfy(\.isFinite) else { return nil }
        guard let timestamp else { return self }
        guard timestamp.isStorableInCloudKit else { return nil }
        var stored = self
        stored.timestamp = CloudValue.normalizedDate(timestamp)
        return stored
    }
}
