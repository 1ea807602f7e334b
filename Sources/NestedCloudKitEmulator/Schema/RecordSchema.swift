import Foundation
import NestedCloudKitCodable

/// A container's schema in one environment: record types, their fields' types and indexes, read from and written
/// as CloudKit's schema language (`cktool export-schema` writes the same `.ckdb` text).
struct RecordSchema: Sendable, Hashable {
    struct Field: Sendable, Hashable {
        /// The wire's type name: `STRING`, `INT64`, `ASSETID`, `STRING_LIST`...
        var type: String
        var isQueryable = false
        var isSortable = false
        var isSearchable = false
    }

    /// Fields by name, per record type; system fields (`___recordID`...) among them when the schema indexes them.
    var types: [String: [String: Field]] = [:]

    /// The schema-language name of a wire type: `ASSETID` is `ASSET`, `X_LIST` is `LIST<X>`.
    static func languageType(_ wire: String) -> String {
        if wire.hasSuffix("_LIST") { return "LIST<\(languageType(String(wire.dropLast(5))))>" }
        return wire == CloudValue.Kind.asset.rawValue ? "ASSET" : wire
    }

    static func wireType(_ language: String) -> String? {
        let upper = language.uppercased()
        if upper.hasPrefix("LIST<"), upper.hasSuffix(">") {
            return wireType(String(upper.dropFirst(5).dropLast())).map { $0 + "_LIST" }
        }
        // The language names the kinds of single values as the wire does, but for ASSET.
        if upper == "ASSET" { return CloudValue.Kind.asset.rawValue }
        guard let kind = CloudValue.Kind(rawValue: upper), !kind.isList, kind != .asset else { return nil }
        return kind.rawValue
    }

    /// Parses `DEFINE SCHEMA ... RECORD TYPE Name ( field TYPE [QUERYABLE] [SORTABLE] [SEARCHABLE], ... );`.
    /// Grants and roles are read past: the emulator doesn't enforce security roles (FIDELITY.md).
    init(parsing text: String) throws(ServerError) {
        let source = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
        var rest = Substring(source)
        while let header = rest.range(of: "RECORD TYPE", options: [.caseInsensitive]) {
            rest = rest[header.upperBound...]
            guard let open = rest.firstIndex(of: "(") else { throw .badRequest("schema: RECORD TYPE without (") }
            let name = Self.unquoted(rest[..<open].trimmingCharacters(in: .whitespacesAndNewlines))
            guard !name.isEmpty else { throw .badRequest("schema: a RECORD TYPE needs a name") }
            var depth = 0
            var close: Substring.Index?
            for index in rest[open...].indices {
                if rest[index] == "(" { depth += 1 }
                if rest[index] == ")" {
                    depth -= 1
                    if depth == 0 {
                        close = index
                        break
                    }
                }
            }
            guard let close else { throw .badRequest("schema: RECORD TYPE \(name) has no closing )") }
            var fields: [String: Field] = [:]
            for entry in Self.split(rest[rest.index(after: open)..<close]) {
                let words = entry.split(whereSeparator: \.isWhitespace).map(String.init)
                guard let first = words.first, first.uppercased() != "GRANT" else { continue }
                guard words.count >= 2, let type = Self.wireType(words[1]) else {
                    throw .badRequest(
                        "schema: record type \(name), field \(first): unknown type \(words.dropFirst().first ?? "(none)")"
                    )
                }
                let flags = Set(words.dropFirst(2).map { $0.uppercased() })
                fields[Self.unquoted(first)] = Field(
                    type: type, isQueryable: flags.contains("QUERYABLE"), isSortable: flags.contains("SORTABLE"),
                    isSearchable: flags.contains("SEARCHABLE"))
            }
            types[name] = fields
            rest = rest[close...]
        }
    }

    init() {}

    /// The schema as CloudKit's schema language.
    var text: String {
        var lines = ["DEFINE SCHEMA", ""]
        for (type, fields) in types.sorted(by: { $0.key < $1.key }) {
            lines.append("    RECORD TYPE \(type) (")
            var entries: [String] = []
            for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
                let flags = [
                    (field.isQueryable, "QUERYABLE"), (field.isSearchable, "SEARCHABLE"),
                    (field.isSortable, "SORTABLE"),
                ]
                .filter(\.0).map(\.1)
                let quoted = name.hasPrefix("___") ? "\"\(name)\"" : name
                entries.append(([quoted, Self.languageType(field.type)] + flags).joined(separator: " "))
            }
            entries += ["GRANT WRITE TO \"_creator\"", "GRANT CREATE TO \"_icloud\"", "GRANT READ TO \"_world\""]
            lines += entries.enumerated().map { "        " + $1 + ($0 == entries.count - 1 ? "" : ",") }
            lines += ["    );", ""]
        }
        return lines.joined(separator: "\n")
    }

    private static func unquoted(_ text: String) -> String {
        text.trimmingCharacters(in: CharacterSet(charactersIn: "\"").union(.whitespaces))
    }

    /// Splits on the commas outside `<>` and `()`.
    private static func split(_ text: Substring) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            switch character {
            case "<", "(": depth += 1
            case ">", ")": depth -= 1
            case "," where depth == 0:
                parts.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        parts.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
        return parts.filter { !$0.isEmpty }
    }
}
