import Foundation
import NestedCloudKitCodable

/// Pushes for the web: `tokens/create` hands out a notification URL, which a client polls; when a subscription
/// fires, the payload CloudKit would push goes to the URLs of the subscription's owner, one payload per poll.
actor NotificationHub {
    private struct PushToken {
        var user: String
        var container: String
        var environment: EmulatorEnvironment
    }

    private var pushTokens: [String: PushToken] = [:]
    private var pending: [String: [JSONValue]] = [:]
    private var waiters: [String: [(id: UUID, continuation: CheckedContinuation<JSONValue?, Never>)]] = [:]
    /// How long a poll waits for a notification before it answers with an empty body, the courier's keepalive.
    let pollTimeout: Duration
    /// The most notifications kept for a URL nobody polls; older ones are dropped, as APNs coalesces.
    static let maximumPending = 100

    init(pollTimeout: Duration) {
        self.pollTimeout = pollTimeout
    }

    /// A new push token for `user`, already registered.
    func createToken(user: String, container: String, environment: EmulatorEnvironment) -> String {
        let token = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        pushTokens[token] = PushToken(user: user, container: container, environment: environment)
        return token
    }

    /// Registers a token made elsewhere (`tokens/register`) for `user`.
    func register(_ token: String, user: String, container: String, environment: EmulatorEnvironment) {
        pushTokens[token] = PushToken(user: user, container: container, environment: environment)
    }

    func isKnown(_ token: String) -> Bool { pushTokens[token] != nil }

    /// Set once the emulator is shutting down: polls answer at once, so that no long poll holds the shutdown.
    private var isClosing = false

    /// The next notification for `token`, waiting for one up to ``pollTimeout``; `nil` when none came.
    func poll(_ token: String) async -> JSONValue? {
        if var queue = pending[token], !queue.isEmpty {
            let first = queue.removeFirst()
            pending[token] = queue
            return first
        }
        if isClosing { return nil }
        let id = UUID()
        let timeout = pollTimeout
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(id, token: token)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters[token, default: []].append((id, continuation))
            }
        } onCancel: {
            Task { await self.expire(id, token: token) }
        }
    }

    private func expire(_ id: UUID, token: String) {
        guard let index = waiters[token]?.firstIndex(where: { $0.id == id }) else { return }
        waiters[token]?.remove(at: index).continuation.resume(returning: nil)
    }

    private func deliver(_ payload: JSONValue, to user: String, key: DatabaseKey) {
        // The push names the user it is for (`ck.ckuserid`), as CloudKit's do.
        var payload = payload
        if var root = payload.object, var ck = root["ck"]?.object {
            ck["ckuserid"] = .string(Caller.userRecordName(for: user))
            root["ck"] = .object(ck)
            payload = .object(root)
        }
        for (token, push) in pushTokens
        where push.user == user && push.container == key.container && push.environment == key.environment {
            if var queue = waiters[token], !queue.isEmpty {
                queue.removeFirst().continuation.resume(returning: payload)
                waiters[token] = queue
            } else {
                pending[token, default: []].append(payload)
                if let count = pending[token]?.count, count > Self.maximumPending {
                    pending[token]?.removeFirst(count - Self.maximumPending)
                }
            }
        }
    }

    /// Answers every waiting poll with the keepalive, and every later one at once: the server is shutting down,
    /// and a graceful shutdown waits for the requests in flight.
    func close() {
        isClosing = true
        for (_, queue) in waiters { for waiter in queue { waiter.continuation.resume(returning: nil) } }
        waiters = [:]
    }

    func reset() {
        for (_, queue) in waiters { for waiter in queue { waiter.continuation.resume(returning: nil) } }
        waiters = [:]
        pending = [:]
        pushTokens = [:]
    }

    // MARK: Firing subscriptions

    /// Fires the subscriptions of `handle`'s database that the changed records match.
    func recordsChanged(_ changes: [ChangedRecord], in handle: DatabaseHandle, coding: WireCoding) async {
        let key = handle.key
        for active in await handle.subscriptions.all {
            let subscription = active.entry.subscription
            let id = active.rule.id
            guard let owner = active.entry.owner ?? key.user else { continue }
            switch active.rule.kind {
            case .database:
                deliver(
                    payload(key: key, subscription: subscription, kind: "met", body: ["sid": .string(id)]), to: owner,
                    key: key)
            case .zone(let zone):
                guard let changed = changes.first(where: { $0.record.id.zoneID == zone }) else { continue }
                deliver(
                    payload(
                        key: key, subscription: subscription, kind: "fet",
                        body: [
                            "sid": .string(id), "zid": .string(zone.zoneName),
                            "zoid": coding.json(changed.record.id.zoneID)["ownerRecordName"] ?? .null,
                        ]), to: owner, key: key)
            case .query(let query):
                let matching = changes.filter { query.matches($0) }
                for changed in matching {
                    deliver(
                        payload(
                            key: key, subscription: subscription, kind: "qry",
                            body: [
                                "sid": .string(id), "rid": .string(changed.record.id.recordName),
                                "zid": .string(changed.record.id.zoneID.zoneName),
                                "zoid": coding.json(changed.record.id.zoneID)["ownerRecordName"] ?? .null,
                                "fo": .int(changed.change.notificationValue),
                            ]), to: owner, key: key)
                }
                // A subscription that fires once is gone after it fired; if its file can't be written, it stays and
                // may fire again, which a client must take anyway (pushes can repeat).
                if !matching.isEmpty, query.firesOnce { try? await handle.subscriptions.delete(id) }
            }
        }
    }

    /// Fires the database subscriptions of `handle`'s database: its zones changed.
    func zonesChanged(in handle: DatabaseHandle) async {
        let key = handle.key
        for active in await handle.subscriptions.all {
            guard case .database = active.rule.kind, let owner = active.entry.owner ?? key.user else { continue }
            deliver(
                payload(
                    key: key, subscription: active.entry.subscription, kind: "met",
                    body: ["sid": .string(active.rule.id)]), to: owner, key: key)
        }
    }

    private func payload(key: DatabaseKey, subscription: JSONValue, kind: String, body: [String: JSONValue])
        -> JSONValue
    {
        var body = body
        body["dbs"] = .int(key.scope.notificationValue)
        var aps: [String: JSONValue] = [:]
        let info = subscription["notificationInfo"]
        if let alert = info?["alertBody"]?.string { aps["alert"] = .string(alert) }
        if let sound = info?["soundName"]?.string { aps["sound"] = .string(sound) }
        if info?["shouldSendContentAvailable"]?.bool == true || aps.isEmpty { aps["content-available"] = 1 }
        return [
            "aps": .object(aps),
            "ck": [
                "ce": key.environment == .production ? 2 : 1, "cid": .string(key.container),
                "nid": .string(UUID().uuidString.lowercased()), kind: .object(body),
            ],
        ]
    }
}
