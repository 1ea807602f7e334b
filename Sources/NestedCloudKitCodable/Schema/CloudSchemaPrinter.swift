import Foundation

/// Writes a ``CloudSchema`` in CloudKit's schema language, laid out as `cktool export-schema` lays it out: four
/// spaces before each record type, eight before each field, names in a column as wide as the longest, everything
/// sorted, so the same schema is always the same text.
enum CloudSchemaPrinter {
    /// The words of the language: a name spelled as one is quoted, as any name that isn't letters, digits and
    /// underscores starting with a letter.
    static let keywords: Set<String> = [
        "AS", "ASSET", "BYTES", "CREATE", "DEFINE", "DOUBLE", "ENCRYPTED", "GRANT", "INT64", "LIST", "LOCATION",
        "NUMBER", "PREFERRED", "QUERYABLE", "READ", "RECORD", "REFERENCE", "ROLE", "SCHEMA", "SEARCHABLE",
        "SORTABLE", "STRING", "TIMESTAMP", "TO", "TYPE", "WRITE",
    ]

    static func text(of schema: CloudSchema) -> String {
        var lines = ["DEFINE SCHEMA", ""]
        for role in schema.roles.sorted() {
            lines += ["    CREATE ROLE \(name(role));", ""]
        }
        for (_, type) in schema.recordTypes.sorted(by: { $0.key < $1.key }) {
            lines.append("    RECORD TYPE \(name(type.name)) (")
            let fields = type.fields.sorted { $0.key < $1.key }.map { (name($0.key), $0.value) }
            let width = (fields.map(\.0.count).max() ?? 0) + 1
            var entries = fields.map { name, field in
                name.padding(toLength: width, withPad: " ", startingAt: 0) + field.description
            }
            for (role, permissions) in type.grants.sorted(by: { $0.key < $1.key }) where !permissions.isEmpty {
                let granted = CloudSchema.RecordType.Permission.allCases.filter(permissions.contains).map(\.rawValue)
                entries.append("GRANT \(granted.joined(separator: ", ")) TO \(name(role))")
            }
            lines += entries.enumerated().map { "        " + $1 + ($0 == entries.count - 1 ? "" : ",") }
            lines += ["    );", ""]
        }
        return lines.joined(separator: "\n")
    }

    /// A name as the language writes it: bare if it can be, else in double quotes.
    static func name(_ name: String) -> String {
        isBare(name) ? name : "\"\(name)\""
    }

    static func isBare(_ name: String) -> Bool {
        RecordValidator.problem(withIdentifier: name) == nil && !keywords.contains(name.uppercased())
    }
}
