import Foundation

/// Reads CloudKit's schema language (Apple, "Integrating a Text-Based Schema into Your Workflow"):
///
/// ```
/// DEFINE SCHEMA { CREATE ROLE name ; | RECORD TYPE name ( item [, item]... ) ; }...
/// item:  name type [QUERYABLE | SEARCHABLE | SORTABLE]...  |  GRANT permission [, permission]... TO role
/// type:  primitive | LIST < primitive >
/// primitive:  ASSET | BYTES | DOUBLE | INT64 | LOCATION | REFERENCE | STRING | TIMESTAMP
///          |  ENCRYPTED { BYTES | STRING | DOUBLE | INT64 | LOCATION | TIMESTAMP }
///          |  NUMBER [PREFERRED AS { INT64 | DOUBLE }]
/// ```
///
/// Any text gives a schema or a ``CloudSchemaError`` with its line; nothing traps.
struct CloudSchemaParser {
    private struct Token {
        enum Kind: Equatable {
            case word(String, quoted: Bool)
            case symbol(Character)
            case end
        }
        var kind: Kind
        var line: Int
    }

    /// CloudKit's own roles, which grants name without creating them.
    static let builtInRoles: Set<String> = ["_creator", "_icloud", "_world"]

    private var tokens: [Token] = []
    private var position = 0
    private var tokenizingError: CloudSchemaError?

    init(_ text: String) {
        do {
            tokens = try Self.tokens(of: text)
        } catch {
            tokenizingError = error
        }
    }

    mutating func parse() throws(CloudSchemaError) -> CloudSchema {
        if let tokenizingError { throw tokenizingError }
        try expectKeyword("DEFINE")
        try expectKeyword("SCHEMA")
        var schema = CloudSchema()
        schema.recordTypes = [:]
        var grantLines: [(type: String, role: String, line: Int)] = []
        while current.kind != .end {
            if isKeyword("CREATE") {
                advance()
                try expectKeyword("ROLE")
                let (role, line) = try name(of: "a role")
                guard !Self.builtInRoles.contains(role), !schema.roles.contains(role) else {
                    throw .invalid(
                        "the role \(role) is created twice, or is one of CloudKit's own", recordType: nil, line: line,
                        fix: "Create each role once; _creator, _icloud and _world exist without CREATE ROLE")
                }
                schema.roles.insert(role)
            } else if isKeyword("RECORD") {
                advance()
                try expectKeyword("TYPE")
                let (type, grants) = try recordType()
                guard schema.recordTypes[type.name] == nil else {
                    throw .invalid(
                        "the record type \(type.name) is declared twice", recordType: type.name,
                        line: current.line, fix: "Declare each record type once, with all its fields")
                }
                schema.recordTypes[type.name] = type
                grantLines += grants.map { (type.name, $0.role, $0.line) }
            } else {
                throw .syntax("expected CREATE ROLE or RECORD TYPE, found \(describe(current))", line: current.line)
            }
            if case .symbol(";") = current.kind {
                advance()
            } else if current.kind != .end {
                throw .syntax("expected ; after the entry, found \(describe(current))", line: current.line)
            }
        }
        for grant in grantLines
        where !Self.builtInRoles.contains(grant.role) && !schema.roles.contains(grant.role) {
            throw .invalid(
                "a grant to the role \(grant.role), which the schema doesn't create", recordType: grant.type,
                line: grant.line, fix: "Add CREATE ROLE \(grant.role); or grant to _creator, _icloud or _world")
        }
        // Every container has CloudKit's Users record type, whether or not a file spells it out.
        if schema.recordTypes[CloudSchema.usersRecordType.name] == nil {
            schema.recordTypes[CloudSchema.usersRecordType.name] = CloudSchema.usersRecordType
        }
        return schema
    }

    // MARK: Record types

    private mutating func recordType() throws(CloudSchemaError) -> (
        CloudSchema.RecordType, [(role: String, line: Int)]
    ) {
        let (typeName, typeLine) = try name(of: "a record type")
        // CloudKit's share type has names of its own (`cloudkit.share`, `cloudkit.title`); a schema may list it.
        if typeName != CloudShare.recordType, let problem = RecordValidator.problem(withIdentifier: typeName) {
            throw .invalid(
                "the record type name \"\(typeName)\" isn't one CloudKit accepts: \(problem)", recordType: typeName,
                line: typeLine, fix: "Name record types with letters, digits and underscores, starting with a letter")
        }
        try expectSymbol("(")
        var type = CloudSchema.RecordType(typeName, grants: [:])
        var declared: Set<String> = []
        var grants: [(role: String, line: Int)] = []
        while true {
            if case .symbol(")") = current.kind { break }
            if isKeyword("GRANT") {
                let line = current.line
                advance()
                let (role, permissions) = try grant(in: typeName)
                type.grants[role, default: []].formUnion(permissions)
                grants.append((role, line))
            } else {
                let (name, field, line) = try field(in: typeName)
                guard declared.insert(name).inserted else {
                    throw .invalid(
                        "the field \(name) is declared twice", recordType: typeName, field: name, line: line,
                        fix: "Declare each field once, with all its indexes")
                }
                try Self.check(name, field, in: typeName, line: line)
                do {
                    try type.add(name, field)
                } catch {
                    throw .invalid(
                        "\(name) is a system field of type \(CloudSchema.RecordType.systemFieldTypes[name]?.description ?? "?"), not \(field.type)",
                        recordType: typeName, field: name, line: line, fix: "Keep the system field's type")
                }
            }
            guard case .symbol(",") = current.kind else { break }
            advance()
        }
        try expectSymbol(")")
        return (type, grants)
    }

    private mutating func grant(in typeName: String) throws(CloudSchemaError) -> (
        String, Set<CloudSchema.RecordType.Permission>
    ) {
        var permissions: Set<CloudSchema.RecordType.Permission> = []
        while true {
            guard case .word(let word, quoted: false) = current.kind,
                let permission = CloudSchema.RecordType.Permission(rawValue: word.uppercased())
            else {
                throw .syntax(
                    "expected READ, CREATE or WRITE after GRANT, found \(describe(current))", line: current.line,
                    recordType: typeName)
            }
            permissions.insert(permission)
            advance()
            guard case .symbol(",") = current.kind else { break }
            advance()
        }
        try expectKeyword("TO")
        let (role, _) = try name(of: "a role")
        return (role, permissions)
    }

    private mutating func field(in typeName: String) throws(CloudSchemaError) -> (
        String, CloudSchema.Field, Int
    ) {
        let line = current.line
        let (name, _) = try name(of: "a field or GRANT")
        var type: CloudSchema.FieldType
        if isKeyword("LIST") {
            advance()
            try expectSymbol("<")
            type = try primitive(in: typeName).asList
            try expectSymbol(">")
        } else {
            type = try primitive(in: typeName)
        }
        var indexes: CloudSchema.Indexes = []
        while case .word(let word, quoted: false) = current.kind,
            let index = CloudSchema.Indexes.ordered.first(where: { $0.1 == word.uppercased() })?.0
        {
            indexes.insert(index)
            advance()
        }
        return (name, CloudSchema.Field(type, indexes: indexes), line)
    }

    private mutating func primitive(in typeName: String) throws(CloudSchemaError) -> CloudSchema.FieldType {
        let encrypted = isKeyword("ENCRYPTED")
        if encrypted { advance() }
        guard case .word(let word, quoted: false) = current.kind,
            let base = CloudSchema.FieldType.Base(rawValue: word.uppercased())
        else {
            throw .syntax(
                "expected a field type (\(CloudSchema.FieldType.Base.allCases.map(\.rawValue).joined(separator: ", ")), "
                    + "ENCRYPTED or LIST<...>), found \(describe(current))", line: current.line, recordType: typeName)
        }
        advance()
        var preferred: CloudSchema.FieldType.Base?
        if base == .number, isKeyword("PREFERRED") {
            advance()
            try expectKeyword("AS")
            guard case .word(let word, quoted: false) = current.kind,
                let number = CloudSchema.FieldType.Base(rawValue: word.uppercased())
            else { throw .syntax("expected INT64 or DOUBLE after PREFERRED AS", line: current.line) }
            preferred = number
            advance()
        }
        return CloudSchema.FieldType(base, encrypted: encrypted, preferredNumber: preferred)
    }

    /// Refuses what CloudKit refuses of a field: a name it doesn't take, a type that doesn't exist, an index the
    /// type can't have.
    static func check(_ name: String, _ field: CloudSchema.Field, in typeName: String, line: Int?)
        throws(CloudSchemaError)
    {
        if CloudSchema.RecordType.systemFieldTypes[name] == nil, typeName != CloudShare.recordType,
            let problem = RecordValidator.problem(withIdentifier: name)
        {
            throw .invalid(
                "the field name \"\(name)\" isn't one CloudKit accepts: \(problem)", recordType: typeName, field: name,
                line: line, fix: "Name fields with letters, digits and underscores, starting with a letter")
        }
        if let problem = field.type.problem {
            throw .invalid(problem, recordType: typeName, field: name, line: line, fix: "Use one of the types listed")
        }
        let refused = field.indexes.subtracting(field.type.allowedIndexes)
        if !refused.isEmpty {
            let why =
                field.type.isEncrypted
                ? "CloudKit doesn't index encrypted fields"
                : refused.contains(.searchable) ? "only strings are searchable" : "a list has no order"
            throw .invalid(
                "\(typeName).\(name), of type \(field.type), can't be \(refused): \(why)", recordType: typeName,
                field: name, line: line,
                fix: field.type.isEncrypted
                    ? "Query a field that isn't encrypted, or drop the index" : "Drop \(refused)")
        }
    }

    // MARK: Tokens

    private var current: Token { tokens[min(position, tokens.count - 1)] }

    private mutating func advance() { position += 1 }

    private func isKeyword(_ keyword: String) -> Bool {
        if case .word(let word, quoted: false) = current.kind { return word.uppercased() == keyword }
        return false
    }

    private mutating func expectKeyword(_ keyword: String) throws(CloudSchemaError) {
        guard isKeyword(keyword) else {
            throw .syntax("expected \(keyword), found \(describe(current))", line: current.line)
        }
        advance()
    }

    private mutating func expectSymbol(_ symbol: Character) throws(CloudSchemaError) {
        guard case .symbol(symbol) = current.kind else {
            throw .syntax("expected \(symbol), found \(describe(current))", line: current.line)
        }
        advance()
    }

    private mutating func name(of what: String) throws(CloudSchemaError) -> (String, Int) {
        guard case .word(let word, _) = current.kind, !word.isEmpty else {
            throw .syntax("expected \(what), found \(describe(current))", line: current.line)
        }
        let line = current.line
        advance()
        return (word, line)
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .word(let word, let quoted): quoted ? "\"\(word)\"" : word
        case .symbol(let symbol): String(symbol)
        case .end: "the end of the text"
        }
    }

    private static func tokens(of text: String) throws(CloudSchemaError) -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var line = 1
        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }
        while let scalar = peek() {
            switch scalar {
            case "\n":
                line += 1
                index += 1
            case _ where scalar.properties.isWhitespace:
                index += 1
            case "/" where peek(1) == "/", "-" where peek(1) == "-":
                while let next = peek(), next != "\n" { index += 1 }
            case "/" where peek(1) == "*":
                let start = line
                index += 2
                while peek() != nil, !(peek() == "*" && peek(1) == "/") {
                    if peek() == "\n" { line += 1 }
                    index += 1
                }
                guard peek() != nil else { throw .syntax("a /* comment that never ends", line: start) }
                index += 2
            case "\"":
                let start = line
                index += 1
                var word = String.UnicodeScalarView()
                while let next = peek(), next != "\"" {
                    if next == "\n" { throw .syntax("a quoted name that never ends", line: start) }
                    word.append(next)
                    index += 1
                }
                guard peek() == "\"" else { throw .syntax("a quoted name that never ends", line: start) }
                index += 1
                tokens.append(Token(kind: .word(String(word), quoted: true), line: line))
            case "(", ")", ",", ";", "<", ">":
                tokens.append(Token(kind: .symbol(Character(scalar)), line: line))
                index += 1
            case _ where scalar.isWordCharacter:
                var word = String.UnicodeScalarView()
                while let next = peek(), next.isWordCharacter {
                    word.append(next)
                    index += 1
                }
                tokens.append(Token(kind: .word(String(word), quoted: false), line: line))
            default:
                throw .syntax("unexpected character \"\(Character(scalar))\"", line: line)
            }
        }
        tokens.append(Token(kind: .end, line: line))
        return tokens
    }
}

extension Unicode.Scalar {
    fileprivate var isWordCharacter: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self) || ("0"..."9").contains(self) || self == "_"
    }
}
