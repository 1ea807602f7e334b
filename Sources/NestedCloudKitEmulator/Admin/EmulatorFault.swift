import Foundation

/// A fault a test sets on the emulator: which requests it matches, and what it does to them.
public struct EmulatorFault: Sendable, Hashable, Codable {
    /// Set by the emulator when the fault is added.
    public var id: String
    /// Matches requests whose path ends with this (`records/modify`) or contains it; `nil` matches every path.
    public var path: String?
    /// Matches only requests that name this record.
    public var recordName: String?
    /// The error to answer with: a documented `serverErrorCode` such as `THROTTLED` or `TRY_AGAIN_LATER`.
    public var serverErrorCode: String?
    /// The `retryAfter` the error carries, in seconds.
    public var retryAfter: Double?
    /// A wait before the request is handled.
    public var latencyMilliseconds: Double
    /// Handle the request, then close the connection without answering: the client can't know it took effect.
    public var loseResponse: Bool
    /// How many more requests the fault applies to; `nil` for all of them until it is removed.
    public var remaining: Int?

    /// A fault for the requests that match `path` and `recordName` (all requests when both are `nil`), applied to
    /// the next `remaining` of them (`nil`: until removed). With neither an error code nor `loseResponse`, only the
    /// latency applies.
    public init(
        path: String? = nil, recordName: String? = nil, serverErrorCode: String? = nil, retryAfter: Double? = nil,
        latencyMilliseconds: Double = 0, loseResponse: Bool = false, remaining: Int? = 1
    ) {
        self.id = ""
        self.path = path
        self.recordName = recordName
        self.serverErrorCode = serverErrorCode
        self.retryAfter = retryAfter
        self.latencyMilliseconds = latencyMilliseconds
        self.loseResponse = loseResponse
        self.remaining = remaining
    }

    enum CodingKeys: String, CodingKey {
        case id, path, recordName, serverErrorCode, retryAfter, latencyMilliseconds, loseResponse, remaining
    }

    /// Reads a fault as the admin API takes it (`POST /emulator/v1/faults`): every key but the one that says what
    /// the fault does may be left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? ""
        path = try container.decodeIfPresent(String.self, forKey: .path)
        recordName = try container.decodeIfPresent(String.self, forKey: .recordName)
        serverErrorCode = try container.decodeIfPresent(String.self, forKey: .serverErrorCode)
        retryAfter = try container.decodeIfPresent(Double.self, forKey: .retryAfter)
        latencyMilliseconds = try container.decodeIfPresent(Double.self, forKey: .latencyMilliseconds) ?? 0
        loseResponse = try container.decodeIfPresent(Bool.self, forKey: .loseResponse) ?? false
        remaining = try container.decodeIfPresent(Int.self, forKey: .remaining)
    }

    func matches(_ request: EmulatorRequest) -> Bool {
        if let path, !(request.path.hasSuffix(path) || request.path.contains(path)) { return false }
        if let recordName {
            return String(decoding: request.body, as: UTF8.self).contains("\"\(recordName)\"")
        }
        return true
    }
}
