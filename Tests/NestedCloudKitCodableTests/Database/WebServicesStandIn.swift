import CloudKitTestServer
import Foundation
import NestedCloudKitCodable

/// CloudKit Web Services as its documentation describes it, answered from an ``InMemoryCloudDatabase``, so that
/// the conformance suite runs against `CloudKitWebServicesDatabase` over real HTTP.
///
/// It reads and writes the documented JSON with `JSONSerialization`, independently of the client's Codable wire
/// types, so the two implementations of the format check each other. Like CloudKit, it names the current user's
/// zones with the user's record name (`_standInUser`), sends `UNKNOWN_LIST` for empty lists, and reports conflicts
/// without the server's record.
actor WebServicesStandIn {
    static let userRecordName = "_standInUser"

    private let database: InMemoryCloudDatabase
    private var cursors: [String: CloudQuery.Cursor] = [:]
    /// Where the client reached the stand-in, for the upload and download URLs it hands out.
    private var baseURL = ""
    /// Asset contents by checksum, and the checksum of each content: uploads, and the assets of stored records.
    private var assetContents: [String: Data] = [:]
    private var checksums: [Data: String] = [:]

    init(database: InMemoryCloudDatabase) {
        self.database = database
    }

    func respond(to request: ReceivedRequest) async -> LoopbackResponse {
        baseURL = "http://" + (request.headers["host"] ?? request.headers["Host"] ?? "127.0.0.1")
        if request.path.hasPrefix(Self.uploadPath) { return upload(request.body) }
        if request.path.hasPrefix(Self.downloadPath) {
            let checksum = String(request.path.dropFirst(Self.downloadPath.count))
            guard let contents = assetContents[checksum] else {
                return .serverError(404, "NOT_FOUND", reason: "no asset \(checksum)")
            }
            return LoopbackResponse(status: 200, body: contents)
        }
        do {
            let body = request.body.isEmpty ? [:] : try JSONDecoder().decode(ExactJSON.self, from: request.body).object
            switch request.endpoint {
            case "assets/upload": return assetUploadURLs(body)
            case "records/lookup": return try await lookUp(body)
            case "records/modify": return try await modify(body)
            case "records/query": return try await query(body)
            case "zones/list":
                return .json(["zones": try await database.allRecordZones().map { ["zoneID": Self.json($0)] }])
            case "zones/modify": return try await modifyZones(body)
            case "changes/zone": return try await zoneChanges(body)
            case "changes/database": return try await databaseChanges(body)
            case "users/caller" where !request.path.contains("/public/users/caller"):
                return .serverError(404, "NOT_FOUND", reason: "users/caller is under the public database's path")
            case "users/caller": return .json(["users": [["userRecordName": try await database.userRecordName()]]])
            case "subscriptions/list":
                return .json(["subscriptions": try await database.allSubscriptions().map { Self.json($0) }])
            case "subscriptions/modify": return try await modifySubscriptions(body)
            default: return .serverError(404, "NOT_FOUND", reason: "no endpoint \(request.endpoint)")
            }
        } catch let error as CloudDatabaseError {
            let (status, code) = Self.code(of: error)
            return .serverError(status, code, reason: Self.reason(of: error), retryAfter: error.retryAfter)
        } catch {
            return .serverError(400, "BAD_REQUEST", reason: "\(error)")
        }
    }

    // MARK: Assets

    private static let uploadPath = "/stand-in-upload/"
    private static let downloadPath = "/stand-in-download/"

    /// The asset's checksum, its contents kept for downloads and for saves that name it.
    private func checksum(of contents: Data) -> String {
        if let known = checksums[contents] { return known }
        let checksum = "checksum\(checksums.count + 1)"
        checksums[contents] = checksum
        assetContents[checksum] = contents
        return checksum
    }

    /// An upload URL for each asset the request asks to upload, as `assets/upload` answers.
    private func assetUploadURLs(_ body: [String: Any]) -> LoopbackResponse {
        let tokens = (body["tokens"] as? [[String: Any]] ?? []).map { token in
            [
                "recordName": token["recordName"] ?? "", "fieldName": token["fieldName"] ?? "",
                "url": baseURL + Self.uploadPath + UUID().uuidString,
            ]
        }
        return .json(["tokens": tokens])
    }

    /// Takes an asset's bytes and answers with the dictionary a save puts in the field.
    private func upload(_ contents: Data) -> LoopbackResponse {
        let checksum = checksum(of: contents)
        return .json([
            "singleFile": [
                "fileChecksum": checksum, "receipt": checksum, "size": contents.count, "wrappingKey": "key",
                "referenceChecksum": "ref",
            ]
        ])
    }

    /// The asset a field of a save holds: the contents an upload or an earlier save gave its checksum.
    private func asset(_ object: [String: Any]) -> CloudAsset {
        let checksum = object["receipt"] as? String ?? object["fileChecksum"] as? String
        if let checksum, let contents = assetContents[checksum] { return CloudAsset(data: contents) }
        return CloudAsset(
            size: (object["size"] as? NSNumber)?.int64Value, fileChecksum: object["fileChecksum"] as? String)
    }

    // MARK: Endpoints

    private func lookUp(_ body: [String: Any]) async throws -> LoopbackResponse {
        let zone = try Self.zoneID(body["zoneID"])
        let names = (body["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
        let ids = names.map { CloudRecord.ID(recordName: $0, zoneID: zone) }
        let results = try await database.records(for: ids, desiredKeys: body["desiredKeys"] as? [String])
        return .json(["records": ids.map { id in item(results[id], name: id.recordName) }])
    }

    private func modify(_ body: [String: Any]) async throws -> LoopbackResponse {
        let zone = try Self.zoneID(body["zoneID"])
        let atomic = body["atomic"] as? Bool ?? true
        var groups: [CloudRecordSavePolicy: [CloudRecord]] = [:]
        var deletes: [CloudRecord.ID] = []
        var order: [(name: String, isDelete: Bool)] = []
        for operation in body["operations"] as? [[String: Any]] ?? [] {
            let type = operation["operationType"] as? String ?? ""
            let wire = operation["record"] as? [String: Any] ?? [:]
            let name = wire["recordName"] as? String ?? ""
            if type == "delete" || type == "forceDelete" {
                deletes.append(CloudRecord.ID(recordName: name, zoneID: zone))
                order.append((name, true))
                continue
            }
            var record = try record(wire, zone: zone)
            if let tag = wire["recordChangeTag"] as? String {
                record.systemFields = CloudRecord.SystemFields(changeTag: tag)
            }
            let policy: CloudRecordSavePolicy
            switch type {
            case "create", "update": policy = .ifServerRecordUnchanged
            case "replace":
                // Replace clears what it doesn't send; the in-memory database clears a record's cleared fields.
                policy = .ifServerRecordUnchanged
                if let server = try? await database.record(for: record.id) {
                    record.clearedFieldNames = server.fields.names.filter { record.fields[$0] == nil }
                }
            case "forceUpdate": policy = .changedKeys
            case "forceReplace": policy = .allKeys
            default: throw CloudDatabaseError.invalidArguments("unknown operation type \(type)")
            }
            groups[policy, default: []].append(record)
            order.append((name, false))
        }
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        let policies = groups.keys.sorted { "\($0)" < "\($1)" }
        for (index, policy) in (policies.isEmpty ? [.ifServerRecordUnchanged] : policies).enumerated() {
            let results = try await database.modifyRecords(
                saving: groups[policy] ?? [], deleting: index == 0 ? deletes : [], savePolicy: policy,
                atomically: atomic
            )
            saveResults.merge(results.saveResults) { first, _ in first }
            deleteResults.merge(results.deleteResults) { first, _ in first }
        }
        let items: [[String: Any]] = order.map { name, isDelete in
            let id = CloudRecord.ID(recordName: name, zoneID: zone)
            if isDelete {
                switch deleteResults[id] {
                case .success?: return ["recordName": name, "deleted": true, "zoneID": Self.json(zone)]
                case .failure(let error)?: return Self.errorItem(error, name: name)
                case nil: return Self.errorItem(.internalError("no result"), name: name)
                }
            }
            return item(saveResults[id], name: name)
        }
        return .json(["records": items])
    }

    private func query(_ body: [String: Any]) async throws -> LoopbackResponse {
        let zone = try Self.zoneID(body["zoneID"])
        let limit = body["resultsLimit"] as? Int ?? 100
        let desiredKeys = body["desiredKeys"] as? [String]
        let page:
            (matchResults: [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)], queryCursor: CloudQuery.Cursor?)
        if let marker = body["continuationMarker"] as? String {
            guard let cursor = cursors[marker] else {
                throw CloudDatabaseError.invalidArguments("unknown continuation marker")
            }
            page = try await database.records(
                continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: limit)
        } else {
            let wire = body["query"] as? [String: Any] ?? [:]
            var predicates: [CloudQuery.Predicate] = []
            for filter in wire["filterBy"] as? [[String: Any]] ?? [] {
                guard let comparator = (filter["comparator"] as? String).flatMap(CloudQuery.Comparator.init),
                    let wireField = filter["fieldName"] as? String,
                    var value = try fieldValue(filter["fieldValue"] as? [String: Any] ?? [:])
                else { throw CloudDatabaseError.invalidArguments("unsupported filter \(filter)") }
                let field = Self.fieldName(wireField)
                if case .reference(let reference) = value, field == CloudQuery.SystemField.recordName.fieldName {
                    // `___recordID` is compared with a reference to the record; the portable query compares names.
                    value = .string(reference.recordID.recordName)
                }
                if case .reference(let reference) = value, comparator == .equals {
                    predicates.append(.references(reference.recordID, in: field))
                } else if comparator == .equals {
                    predicates.append(.equals(field: field, value: value))
                } else {
                    predicates.append(.compare(field: field, comparator, value))
                }
            }
            let sorts = (wire["sortBy"] as? [[String: Any]] ?? []).map {
                CloudQuery.SortDescriptor(
                    field: Self.fieldName($0["fieldName"] as? String ?? ""),
                    ascending: $0["ascending"] as? Bool ?? true)
            }
            let query = CloudQuery(
                recordType: wire["recordType"] as? String ?? "",
                predicate: predicates.isEmpty ? .all : predicates.count == 1 ? predicates[0] : .and(predicates),
                sortDescriptors: sorts
            )
            page = try await database.records(
                matching: query, inZoneWith: zone, desiredKeys: desiredKeys, resultsLimit: limit)
        }
        var response: [String: Any] = ["records": page.matchResults.map { item($0.1, name: $0.0.recordName) }]
        if let cursor = page.queryCursor {
            let marker = UUID().uuidString
            cursors[marker] = cursor
            response["continuationMarker"] = marker
        }
        return .json(response)
    }

    private func modifyZones(_ body: [String: Any]) async throws -> LoopbackResponse {
        var saves: [CloudRecord.ZoneID] = []
        var deletes: [CloudRecord.ZoneID] = []
        var order: [(CloudRecord.ZoneID, Bool)] = []
        for operation in body["operations"] as? [[String: Any]] ?? [] {
            let zone = try Self.zoneID((operation["zone"] as? [String: Any])?["zoneID"])
            let isCreate = operation["operationType"] as? String == "create"
            if isCreate { saves.append(zone) } else { deletes.append(zone) }
            order.append((zone, isCreate))
        }
        let results = try await database.modifyRecordZones(saving: saves, deleting: deletes)
        let items: [[String: Any]] = order.map { zone, isCreate in
            switch isCreate ? results.saveResults[zone] : results.deleteResults[zone] {
            case .success?: return ["zoneID": Self.json(zone)]
            case .failure(let error)?:
                var item = Self.errorItem(error, name: nil)
                item["zoneID"] = Self.json(zone)
                return item
            case nil: return Self.errorItem(.internalError("no result"), name: nil)
            }
        }
        return .json(["zones": items])
    }

    // MARK: Changes, the user, subscriptions

    /// `changes/zone`: each zone's changes since its token, as the in-memory database has them. The in-memory
    /// token's bytes go as the `syncToken`, in base64.
    private func zoneChanges(_ body: [String: Any]) async throws -> LoopbackResponse {
        var results: [[String: Any]] = []
        for zone in body["zones"] as? [[String: Any]] ?? [] {
            let zoneID = try Self.zoneID(zone["zoneID"])
            do {
                let changes = try await database.recordZoneChanges(
                    inZoneWith: zoneID, since: try Self.token(zone["syncToken"]),
                    desiredKeys: zone["desiredKeys"] as? [String], resultsLimit: zone["resultsLimit"] as? Int)
                let tombstones: [[String: Any]] = changes.deletions.map {
                    [
                        "recordName": $0.id.recordName, "recordType": $0.recordType, "deleted": true,
                        "zoneID": Self.json($0.id.zoneID),
                    ]
                }
                results.append([
                    "zoneID": Self.json(zoneID), "syncToken": changes.changeToken.data.base64EncodedString(),
                    "moreComing": changes.moreComing, "records": changes.modifications.map { json($0) } + tombstones,
                ])
            } catch let error as CloudDatabaseError {
                var item = Self.errorItem(error, name: nil)
                item["zoneID"] = Self.json(zoneID)
                results.append(item)
            }
        }
        return .json(["zones": results])
    }

    /// `changes/database`: the zones changed since the token, deleted ones flagged `deleted`, `purged` or
    /// `encryptedDataReset`.
    private func databaseChanges(_ body: [String: Any]) async throws -> LoopbackResponse {
        let changes = try await database.databaseChanges(
            since: try Self.token(body["syncToken"]), resultsLimit: body["resultsLimit"] as? Int)
        let deleted: [[String: Any]] = changes.deletions.map { deletion in
            let flag =
                switch deletion.reason {
                case .deleted: "deleted"
                case .purged: "purged"
                case .encryptedDataReset: "encryptedDataReset"
                }
            return ["zoneID": Self.json(deletion.zoneID), flag: true]
        }
        return .json([
            "zones": changes.modifiedZoneIDs.map { ["zoneID": Self.json($0)] } + deleted,
            "syncToken": changes.changeToken.data.base64EncodedString(), "moreComing": changes.moreComing,
        ])
    }

    /// The portable name of a query's field: Web Services names the system fields `___recordID`,
    /// `___createTime` and `___modTime`.
    private static func fieldName(_ wire: String) -> String {
        switch wire {
        case "___recordID": CloudQuery.SystemField.recordName.fieldName
        case "___createTime": CloudQuery.SystemField.creationDate.fieldName
        case "___modTime": CloudQuery.SystemField.modificationDate.fieldName
        default: wire
        }
    }

    private static func token(_ object: Any?) throws -> CloudChangeToken? {
        guard let string = object as? String else { return nil }
        guard let data = Data(base64Encoded: string) else {
            throw CloudDatabaseError.invalidArguments("the syncToken isn't one the stand-in gave")
        }
        return CloudChangeToken(data: data)
    }

    /// `subscriptions/modify`: creates and updates save (an existing one is `EXISTS` for a create, as CloudKit
    /// answers), deletes delete; an answer for each operation, in order.
    private func modifySubscriptions(_ body: [String: Any]) async throws -> LoopbackResponse {
        let existing = Set(try await database.allSubscriptions().map(\.id))
        var items: [[String: Any]] = []
        for operation in body["operations"] as? [[String: Any]] ?? [] {
            let wire = operation["subscription"] as? [String: Any] ?? [:]
            let id = wire["subscriptionID"] as? String ?? ""
            let type = operation["operationType"] as? String ?? ""
            func failure(_ error: CloudDatabaseError, code: String? = nil) -> [String: Any] {
                var item = Self.errorItem(error, name: nil)
                if let code { item["serverErrorCode"] = code }
                item["subscriptionID"] = id
                return item
            }
            switch type {
            case "delete":
                guard existing.contains(id) else {
                    items.append(failure(.invalidArguments("no subscription \(id)"), code: "NOT_FOUND"))
                    continue
                }
                let results = try await database.modifySubscriptions(saving: [], deleting: [id])
                if case .failure(let error)? = results.deleteResults[id] {
                    items.append(failure(error))
                } else {
                    items.append(["subscriptionID": id])
                }
            case "create", "update":
                if type == "create", existing.contains(id) {
                    items.append(failure(.invalidArguments("subscription \(id) exists"), code: "EXISTS"))
                    continue
                }
                let subscription = try Self.subscription(wire)
                let results = try await database.modifySubscriptions(saving: [subscription], deleting: [])
                switch results.saveResults[id] {
                case .success(let saved)?: items.append(Self.json(saved))
                case .failure(let error)?: items.append(failure(error))
                case nil: items.append(failure(.internalError("no result")))
                }
            default:
                throw CloudDatabaseError.invalidArguments("unknown operation type \(type)")
            }
        }
        return .json(["subscriptions": items])
    }

    private static func subscription(_ object: [String: Any]) throws -> CloudSubscription {
        let id = object["subscriptionID"] as? String ?? ""
        let info = object["notificationInfo"] as? [String: Any] ?? [:]
        let sendsContentAvailable = info["shouldSendContentAvailable"] as? Bool ?? false
        switch object["subscriptionType"] as? String {
        case "database": return CloudSubscription(id: id, kind: .database, sendsContentAvailable: sendsContentAvailable)
        case "zone":
            return CloudSubscription(
                id: id, kind: .zone(try zoneID(object["zoneID"])), sendsContentAvailable: sendsContentAvailable)
        default: throw CloudDatabaseError.invalidArguments("the stand-in takes zone and database subscriptions")
        }
    }

    private static func json(_ subscription: CloudSubscription) -> [String: Any] {
        var object: [String: Any] = [
            "subscriptionID": subscription.id,
            "notificationInfo": ["shouldSendContentAvailable": subscription.sendsContentAvailable],
        ]
        switch subscription.kind {
        case .database:
            object["subscriptionType"] = "database"
        case .zone(let zoneID):
            object["subscriptionType"] = "zone"
            object["zoneID"] = json(zoneID)
            object["zoneWide"] = true
        }
        return object
    }

    // MARK: JSON

    private func item(_ result: Result<CloudRecord, CloudDatabaseError>?, name: String) -> [String: Any] {
        switch result {
        case .success(let record)?: json(record)
        case .failure(let error)?: Self.errorItem(error, name: name)
        case nil: Self.errorItem(.internalError("no result"), name: name)
        }
    }

    private static func errorItem(_ error: CloudDatabaseError, name: String?) -> [String: Any] {
        var item: [String: Any] = ["serverErrorCode": code(of: error).code, "reason": reason(of: error)]
        if let name { item["recordName"] = name }
        if let retryAfter = error.retryAfter { item["retryAfter"] = retryAfter }
        return item
    }

    /// The reason an error dictionary gives. Web Services documents no code for an expired sync token; the client
    /// recognises `BAD_REQUEST` with a reason that says the token expired, which is what the stand-in sends.
    private static func reason(of error: CloudDatabaseError) -> String {
        if case .changeTokenExpired = error { return "sync token expired: fetch again without a syncToken" }
        return error.description
    }

    private static func code(of error: CloudDatabaseError) -> (status: Int, code: String) {
        switch error {
        case .unknownItem: (404, "NOT_FOUND")
        case .serverRecordChanged: (409, "CONFLICT")
        case .zoneNotFound, .userDeletedZone, .encryptedDataReset: (404, "ZONE_NOT_FOUND")
        case .referenceViolation: (412, "VALIDATING_REFERENCE_ERROR")
        case .batchRequestFailed: (400, "ATOMIC_ERROR")
        case .invalidArguments, .limitExceeded, .partialFailure, .changeTokenExpired: (400, "BAD_REQUEST")
        case .requestRateLimited: (429, "THROTTLED")
        case .serviceUnavailable, .networkFailure, .serverResponseLost, .accountTemporarilyUnavailable:
            (503, "TRY_AGAIN_LATER")
        case .quotaExceeded: (413, "QUOTA_EXCEEDED")
        case .permissionFailure: (403, "ACCESS_DENIED")
        case .notAuthenticated: (421, "AUTHENTICATION_REQUIRED")
        case .internalError, .operationCancelled: (500, "INTERNAL_ERROR")
        }
    }

    private static func json(_ zone: CloudRecord.ZoneID) -> [String: Any] {
        let owner = zone.ownerName == CloudRecord.ZoneID.currentUserOwnerName ? userRecordName : zone.ownerName
        return ["zoneName": zone.zoneName, "ownerRecordName": owner]
    }

    private static func zoneID(_ object: Any?) throws -> CloudRecord.ZoneID {
        guard let object = object as? [String: Any], let name = object["zoneName"] as? String else { return .default }
        let owner = object["ownerRecordName"] as? String
        return CloudRecord.ZoneID(
            zoneName: name,
            ownerName: owner == nil || owner == userRecordName ? CloudRecord.ZoneID.currentUserOwnerName : owner ?? ""
        )
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    private func json(_ record: CloudRecord) -> [String: Any] {
        var fields: [String: Any] = [:]
        for (name, value) in record.fields { fields[name] = json(value) }
        var object: [String: Any] = [
            "recordName": record.id.recordName, "recordType": record.recordType, "fields": fields,
            "zoneID": Self.json(record.id.zoneID), "pluginFields": [:],
        ]
        if let system = record.systemFields {
            object["recordChangeTag"] = system.changeTag
            var created: [String: Any] = [:]
            created["timestamp"] = system.creationDate.map(Self.milliseconds)
            created["userRecordName"] = system.creatorUserRecordName
            var modified: [String: Any] = [:]
            modified["timestamp"] = system.modificationDate.map(Self.milliseconds)
            modified["userRecordName"] = system.lastModifiedUserRecordName
            modified["deviceID"] = system.modifiedByDevice
            object["created"] = created
            object["modified"] = modified
        }
        return object
    }

    private func json(_ value: CloudValue) -> [String: Any] {
        func reference(_ reference: CloudReference) -> [String: Any] {
            let action =
                switch reference.action {
                case .none: "NONE"
                case .deleteSelf: "DELETE_SELF"
                case .validate: "VALIDATE"
                }
            return [
                "recordName": reference.recordID.recordName, "zoneID": Self.json(reference.recordID.zoneID),
                "action": action,
            ]
        }
        func location(_ location: CloudLocation) -> [String: Any] {
            var object: [String: Any] = [
                "latitude": location.latitude, "longitude": location.longitude, "altitude": location.altitude,
                "horizontalAccuracy": location.horizontalAccuracy, "verticalAccuracy": location.verticalAccuracy,
                "course": location.course, "speed": location.speed,
            ]
            object["timestamp"] = location.timestamp.map(Self.milliseconds)
            return object
        }
        func asset(_ asset: CloudAsset) -> [String: Any] {
            var object: [String: Any] = [:]
            object["size"] = asset.size ?? asset.data.map { Int64($0.count) }
            object["fileChecksum"] = asset.fileChecksum
            object["downloadURL"] = asset.downloadURL
            if let contents = asset.data {
                let checksum = checksum(of: contents)
                object["fileChecksum"] = checksum
                object["downloadURL"] = baseURL + Self.downloadPath + checksum
            }
            return object
        }
        let type = value.kind.rawValue
        let wireValue: Any =
            switch value {
            case .string(let string): string
            case .int64(let int): int
            case .double(let double): double
            case .date(let date): Self.milliseconds(date)
            case .bytes(let data): data.base64EncodedString()
            case .reference(let value): reference(value)
            case .asset(let value): asset(value)
            case .location(let value): location(value)
            case .stringList(let list): list
            case .int64List(let list): list
            case .doubleList(let list): list
            case .dateList(let list): list.map(Self.milliseconds)
            case .bytesList(let list): list.map { $0.base64EncodedString() }
            case .referenceList(let list): list.map(reference)
            case .assetList(let list): list.map(asset)
            case .locationList(let list): list.map(location)
            }
        if let list = wireValue as? [Any], list.isEmpty { return ["type": "UNKNOWN_LIST", "value": [Any]()] }
        return ["type": type, "value": wireValue]
    }

    private func record(_ object: [String: Any], zone: CloudRecord.ZoneID) throws -> CloudRecord {
        guard let name = object["recordName"] as? String, let type = object["recordType"] as? String else {
            throw CloudDatabaseError.invalidArguments("a record needs recordName and recordType")
        }
        var record = CloudRecord(recordType: type, id: CloudRecord.ID(recordName: name, zoneID: zone))
        for (field, item) in (object["fields"] as? [String: [String: Any]] ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let value = try fieldValue(item) {
                record.fields[field] = value
            } else {
                record.clearedFieldNames.append(field)
            }
        }
        return record
    }

    private func fieldValue(_ item: [String: Any]) throws -> CloudValue? {
        let value = item["value"]
        if value == nil || value is NSNull { return nil }
        guard let type = item["type"] as? String else { throw CloudDatabaseError.invalidArguments("an untyped field") }
        func number(_ any: Any?) throws -> NSNumber {
            guard let number = any as? NSNumber else {
                throw CloudDatabaseError.invalidArguments("\(type) needs a number")
            }
            return number
        }
        func date(_ any: Any?) throws -> Date { Date(timeIntervalSince1970: try number(any).doubleValue / 1000) }
        func bytes(_ any: Any?) throws -> Data {
            guard let text = any as? String, let data = Data(base64Encoded: text) else {
                throw CloudDatabaseError.invalidArguments("bad BYTES")
            }
            return data
        }
        func reference(_ any: Any?) throws -> CloudReference {
            let object = any as? [String: Any] ?? [:]
            let action: CloudReference.Action =
                switch object["action"] as? String {
                case "DELETE_SELF": .deleteSelf
                case "VALIDATE": .validate
                default: .none
                }
            return CloudReference(
                recordID: CloudRecord.ID(
                    recordName: object["recordName"] as? String ?? "", zoneID: try Self.zoneID(object["zoneID"])),
                action: action
            )
        }
        func location(_ any: Any?) throws -> CloudLocation {
            let object = any as? [String: Any] ?? [:]
            func part(_ key: String, _ fallback: Double) -> Double {
                (object[key] as? NSNumber)?.doubleValue ?? fallback
            }
            return CloudLocation(
                latitude: part("latitude", 0), longitude: part("longitude", 0), altitude: part("altitude", 0),
                horizontalAccuracy: part("horizontalAccuracy", 0), verticalAccuracy: part("verticalAccuracy", -1),
                course: part("course", -1), speed: part("speed", -1),
                timestamp: try object["timestamp"].map(date)
            )
        }
        func list(_ any: Any?) throws -> [Any] {
            guard let list = any as? [Any] else { throw CloudDatabaseError.invalidArguments("\(type) needs a list") }
            return list
        }
        switch type {
        case "STRING": return .string(value as? String ?? "")
        case "INT64": return .int64(try number(value).int64Value)
        case "DOUBLE": return .double(try number(value).doubleValue)
        case "TIMESTAMP": return .date(try date(value))
        case "BYTES": return .bytes(try bytes(value))
        case "REFERENCE": return .reference(try reference(value))
        case "LOCATION": return .location(try location(value))
        case "STRING_LIST": return .stringList(try list(value).map { $0 as? String ?? "" })
        case "INT64_LIST": return .int64List(try list(value).map { try number($0).int64Value })
        case "DOUBLE_LIST": return .doubleList(try list(value).map { try number($0).doubleValue })
        case "TIMESTAMP_LIST": return .dateList(try list(value).map(date))
        case "BYTES_LIST": return .bytesList(try list(value).map(bytes))
        case "REFERENCE_LIST": return .referenceList(try list(value).map(reference))
        case "LOCATION_LIST": return .locationList(try list(value).map(location))
        case "ASSETID": return .asset(asset(value as? [String: Any] ?? [:]))
        case "ASSETID_LIST": return .assetList(try list(value).map { asset($0 as? [String: Any] ?? [:]) })
        default: throw CloudDatabaseError.invalidArguments("the stand-in doesn't take \(type) fields")
        }
    }
}

/// JSON parsed with `JSONDecoder`, into the `[String: Any]` form `JSONSerialization` gives: on Linux,
/// `JSONSerialization` parses some doubles a bit off (38.435489999999994 as 38.43548999999999), and the stand-in
/// must store exactly what the client sent.
private enum ExactJSON: Decodable {
    case value(Any)

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var object: [String: Any] {
        if case .value(let value) = self, let object = value as? [String: Any] { return object }
        return [:]
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var object: [String: Any] = [:]
            for key in keyed.allKeys {
                if case .value(let value) = try keyed.decode(ExactJSON.self, forKey: key) {
                    object[key.stringValue] = value
                }
            }
            self = .value(object)
        } else if var list = try? decoder.unkeyedContainer() {
            var values: [Any] = []
            while !list.isAtEnd {
                if case .value(let value) = try list.decode(ExactJSON.self) { values.append(value) }
            }
            self = .value(values)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .value(NSNull())
            } else if let bool = try? single.decode(Bool.self) {
                self = .value(bool)
            } else if let int = try? single.decode(Int64.self) {
                self = .value(NSNumber(value: int))
            } else if let double = try? single.decode(Double.self) {
                self = .value(NSNumber(value: double))
            } else {
                self = .value(try single.decode(String.self))
            }
        }
    }
}
