import NestedCloudKitMacrosPlugin
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@CloudRecord` writes for each kind of property, and what it refuses with which message.
@Suite("@CloudRecord expansion")
struct CloudRecordExpansionTests {
    static let macros: [String: MacroSpec] = [
        "CloudRecord": MacroSpec(
            type: CloudRecordMacro.self,
            conformances: ["CloudRecordEncodable", "CloudRecordDecodable", "CloudRecordRowDecodable"]),
        "CloudField": MacroSpec(type: CloudFieldMacro.self),
        "CloudIgnored": MacroSpec(type: CloudFieldMacro.self),
    ]

    private func expect(
        _ source: String, expandsTo expected: String, diagnostics: [DiagnosticSpec] = [],
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        assertMacroExpansion(
            source, expandedSource: expected, diagnostics: diagnostics, macroSpecs: Self.macros,
            failureHandler: { failure in
                Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
            })
    }

    @Test func storedPropertiesAreWrittenAndReadInOrderUnderTheirNames() {
        expect(
            """
            @CloudRecord
            struct Note: CKCodable, Identifiable {
                var id: String
                var title: String
                var dueDate: Date?
                var tags: [String] = []
                var folder: Folder
                var children: [Note]
                var count: Optional<Int>
            }
            """,
            expandsTo: """
                struct Note: CKCodable, Identifiable {
                    var id: String
                    var title: String
                    var dueDate: Date?
                    var tags: [String] = []
                    var folder: Folder
                    var children: [Note]
                    var count: Optional<Int>
                }

                extension Note: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.title, forKey: "title")
                        try record.encodeIfPresent(self.dueDate, forKey: "dueDate")
                        try record.encode(self.tags, forKey: "tags")
                        try record.encode(self.folder, forKey: "folder")
                        try record.encode(self.children, forKey: "children")
                        try record.encodeIfPresent(self.count, forKey: "count")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.title = try record.decode(forKey: "title")
                        self.dueDate = try record.decodeIfPresent(forKey: "dueDate")
                        self.tags = try record.decodeIfPresent(forKey: "tags") ?? ([])
                        self.folder = try record.decode(forKey: "folder")
                        self.children = try record.decode(forKey: "children")
                        self.count = try record.decodeIfPresent(forKey: "count")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.title = try row.decode(forKey: "title")
                        self.dueDate = try row.decodeIfPresent(forKey: "dueDate")
                        self.tags = try row.decodeIfPresent(forKey: "tags") ?? ([])
                        self.folder = try row.decode(forKey: "folder")
                        self.children = try row.decode(forKey: "children")
                        self.count = try row.decodeIfPresent(forKey: "count")
                    }
                }
                """)
    }

    @Test func codingKeysNameTheFieldsAndLeaveOutWhatTheyDontList() {
        expect(
            """
            @CloudRecord
            public struct Song: CKCodable {
                public var title: String
                var durationInSeconds: Int
                var cachedArtwork: Data? = nil
                let kind: String = "song"
                var isLong: Bool { durationInSeconds > 600 }
                static var defaultTitle = "Untitled"
                var cloudKitIdentifier: String { title }

                enum CodingKeys: String, CodingKey {
                    case title
                    case durationInSeconds = "duration"
                    case kind
                }
            }
            """,
            expandsTo: """
                public struct Song: CKCodable {
                    public var title: String
                    var durationInSeconds: Int
                    var cachedArtwork: Data? = nil
                    let kind: String = "song"
                    var isLong: Bool { durationInSeconds > 600 }
                    static var defaultTitle = "Untitled"
                    var cloudKitIdentifier: String { title }

                    enum CodingKeys: String, CodingKey {
                        case title
                        case durationInSeconds = "duration"
                        case kind
                    }
                }

                extension Song: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    public func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.title, forKey: "title")
                        try record.encode(self.durationInSeconds, forKey: "duration")
                        try record.encode(self.kind, forKey: "kind")
                    }

                    public init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.title = try record.decode(forKey: "title")
                        self.durationInSeconds = try record.decode(forKey: "duration")
                    }

                    public init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.title = try row.decode(forKey: "title")
                        self.durationInSeconds = try row.decode(forKey: "duration")
                    }
                }
                """)
    }

    @Test func propertiesDeclaredTogetherShareTheirType() {
        expect(
            """
            @CloudRecord
            struct Point: CKCodable {
                var x, y: Double
                var label: String { didSet { } }
            }
            """,
            expandsTo: """
                struct Point: CKCodable {
                    var x, y: Double
                    var label: String { didSet { } }
                }

                extension Point: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.x, forKey: "x")
                        try record.encode(self.y, forKey: "y")
                        try record.encode(self.label, forKey: "label")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.x = try record.decode(forKey: "x")
                        self.y = try record.decode(forKey: "y")
                        self.label = try record.decode(forKey: "label")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.x = try row.decode(forKey: "x")
                        self.y = try row.decode(forKey: "y")
                        self.label = try row.decode(forKey: "label")
                    }
                }
                """)
    }

    @Test func aClassIsRefusedWithAClearMessage() {
        expect(
            """
            @CloudRecord
            final class Album: CKCodable {
                var id = ""
            }
            """,
            expandsTo: """
                final class Album: CKCodable {
                    var id = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@CloudRecord maps structs; a class or enum needs its CloudRecordMappable conformance "
                        + "written by hand (or stays Codable)", line: 1, column: 1)
            ])
    }

    @Test func aStructThatCodesItselfIsRefusedWithAClearMessage() {
        expect(
            """
            @CloudRecord
            struct Legacy: CKCodable {
                var id: String
                init(from decoder: any Decoder) throws { id = "" }
            }
            """,
            expandsTo: """
                struct Legacy: CKCodable {
                    var id: String
                    init(from decoder: any Decoder) throws { id = "" }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@CloudRecord can't follow a hand-written init(from:) or encode(to:); write the "
                        + "CloudRecordMappable conformance by hand so that it reads and writes the same fields",
                    line: 1, column: 1)
            ])
    }

    @Test func codingKeysGiveTheOrderAndWrappersAndUntypedPropertiesAreCodedAsCodableCodesThem() {
        expect(
            """
            @CloudRecord
            struct Entry: CKCodable {
                var title: String
                var `default` = 0
                @Clamped var level: Int
                @MainActor var id: String

                enum CodingKeys: String, CodingKey {
                    case id, level, `default`, title
                }
            }
            """,
            expandsTo: """
                struct Entry: CKCodable {
                    var title: String
                    var `default` = 0
                    @Clamped var level: Int
                    @MainActor var id: String

                    enum CodingKeys: String, CodingKey {
                        case id, level, `default`, title
                    }
                }

                extension Entry: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self._level, forKey: "level")
                        try record.encode(self.default, forKey: "default")
                        try record.encode(self.title, forKey: "title")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self._level = try record.decode(forKey: "level")
                        self.default = try record.decodeIfPresent(forKey: "default") ?? (0)
                        self.title = try record.decode(forKey: "title")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self._level = try row.decode(forKey: "level")
                        self.default = try row.decodeIfPresent(forKey: "default") ?? (0)
                        self.title = try row.decode(forKey: "title")
                    }
                }
                """)
    }

    @Test func propertyAttributesBecomeCodingKeysAndFieldOptions() {
        expect(
            """
            @CloudRecord
            public struct Album: CKCodable {
                var id: String
                @CloudField(name: "title") var name: String
                @CloudField(reference: .deleteSelf) var owner: Person
                @CloudField(asset: true, encrypted: false) var cover: Data
                @CloudField(encrypted: true) var `default`: String
                @CloudIgnored var isExpanded: Bool? = nil
            }
            """,
            expandsTo: """
                public struct Album: CKCodable {
                    var id: String
                    var name: String
                    var owner: Person
                    var cover: Data
                    var `default`: String
                    var isExpanded: Bool? = nil

                    enum CodingKeys: String, CodingKey {
                        case id
                        case name = "title"
                        case owner
                        case cover
                        case `default`
                    }

                    public static var cloudKitFieldOptions: NestedCloudKitCodable.CloudFieldOptions {
                        NestedCloudKitCodable.CloudFieldOptions(keyedBy: CodingKeys.self, referenceActions: [.owner: .deleteSelf], assets: [.cover], encrypted: [.`default`])
                    }
                }

                extension Album: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    public func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.name, forKey: "title")
                        try record.encode(self.owner, forKey: "owner")
                        try record.encode(self.cover, forKey: "cover")
                        try record.encode(self.default, forKey: "default")
                    }

                    public init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.name = try record.decode(forKey: "title")
                        self.owner = try record.decode(forKey: "owner")
                        self.cover = try record.decode(forKey: "cover")
                        self.default = try record.decode(forKey: "default")
                    }

                    public init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.name = try row.decode(forKey: "title")
                        self.owner = try row.decode(forKey: "owner")
                        self.cover = try row.decode(forKey: "cover")
                        self.default = try row.decode(forKey: "default")
                    }
                }
                """)
    }

    @Test func attributesThatCantApplyAreRefusedWithClearMessages() {
        expect(
            """
            @CloudRecord
            struct Note: CKCodable {
                var id: String
                @CloudField(name: "heading") var title: String
                @CloudField(reference: .deleteSelf) var folder: Folder
                @CloudField(name: prefix + "body") var body: String
                @CloudField(asset: isLarge) var attachment: Data
                @CloudIgnored var summary: String { title }
                @CloudIgnored var draft: String?

                static let cloudKitFieldOptions = CloudFieldOptions()

                enum CodingKeys: String, CodingKey {
                    case id, title, folder, body, attachment
                }
            }
            """,
            expandsTo: """
                struct Note: CKCodable {
                    var id: String
                    var title: String
                    var folder: Folder
                    var body: String
                    var attachment: Data
                    var summary: String { title }
                    var draft: String?

                    static let cloudKitFieldOptions = CloudFieldOptions()

                    enum CodingKeys: String, CodingKey {
                        case id, title, folder, body, attachment
                    }
                }

                extension Note: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.title, forKey: "title")
                        try record.encode(self.folder, forKey: "folder")
                        try record.encode(self.body, forKey: "body")
                        try record.encode(self.attachment, forKey: "attachment")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.title = try record.decode(forKey: "title")
                        self.folder = try record.decode(forKey: "folder")
                        self.body = try record.decode(forKey: "body")
                        self.attachment = try record.decode(forKey: "attachment")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.title = try row.decode(forKey: "title")
                        self.folder = try row.decode(forKey: "folder")
                        self.body = try row.decode(forKey: "body")
                        self.attachment = try row.decode(forKey: "attachment")
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@CloudField(name:) takes a string literal: the field's name must be known when the "
                        + "model compiles", line: 6, column: 23),
                DiagnosticSpec(
                    message: "@CloudField's asset:, encrypted: and parent: take true or false, written as literals",
                    line: 7, column: 24),
                DiagnosticSpec(
                    message: "@CloudIgnored applies to a stored property of a @CloudRecord struct; a computed, "
                        + "static or lazy property isn't stored in the record", line: 8, column: 5),
                DiagnosticSpec(
                    message: "this type declares CodingKeys, which name its fields: rename the field there (case "
                        + "title = \"name\") instead of with @CloudField(name:)", line: 4, column: 5),
                DiagnosticSpec(
                    message: "this type declares CodingKeys, which list its stored properties: leave the property "
                        + "out of them instead of marking it @CloudIgnored", line: 9, column: 5),
                DiagnosticSpec(
                    message: "this type declares cloudKitFieldOptions: give the field's options there, or move them "
                        + "all to @CloudField attributes, not both", line: 1, column: 1),
            ])
    }
    @Test func aParentPropertyBecomesTheOptionsParent() {
        expect(
            """
            @CloudRecord
            struct Item: CKCodable {
                var id: String
                @CloudField(parent: true) var list: CloudLazyReference<ShoppingList>
            }
            """,
            expandsTo: """
                struct Item: CKCodable {
                    var id: String
                    var list: CloudLazyReference<ShoppingList>

                    static var cloudKitFieldOptions: NestedCloudKitCodable.CloudFieldOptions {
                        NestedCloudKitCodable.CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
                    }
                }

                extension Item: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.list, forKey: "list")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.list = try record.decode(forKey: "list")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.list = try row.decode(forKey: "list")
                    }
                }
                """)
    }

    @Test func aSecondParentIsDiagnosedAndTheFirstKept() {
        expect(
            """
            @CloudRecord
            struct Item: CKCodable {
                var id: String
                @CloudField(parent: true) var list: CloudLazyReference<ShoppingList>
                @CloudField(parent: true) var shelf: CloudLazyReference<Shelf>
            }
            """,
            expandsTo: """
                struct Item: CKCodable {
                    var id: String
                    var list: CloudLazyReference<ShoppingList>
                    var shelf: CloudLazyReference<Shelf>

                    static var cloudKitFieldOptions: NestedCloudKitCodable.CloudFieldOptions {
                        NestedCloudKitCodable.CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
                    }
                }

                extension Item: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.list, forKey: "list")
                        try record.encode(self.shelf, forKey: "shelf")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.list = try record.decode(forKey: "list")
                        self.shelf = try record.decode(forKey: "shelf")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.list = try row.decode(forKey: "list")
                        self.shelf = try row.decode(forKey: "shelf")
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a record has one parent: mark only one property @CloudField(parent: true)", line: 5,
                    column: 5)
            ])
    }

    @Test func anAssetOrAParentOfATypeThatCantBeOneIsDiagnosedWithTheFix() {
        expect(
            """
            @CloudRecord
            struct Note: CKCodable {
                var id: String
                @CloudField(asset: true) var body: String
                @CloudField(parent: true) var folder: String?
                @CloudField(parent: true) var lists: [CloudLazyReference<List>]
                @CloudField(asset: true) var photo: Data?
                @CloudField(asset: true) var scans: [Foundation.URL]
                @CloudField(asset: true) var cover: Picture
            }
            """,
            expandsTo: """
                struct Note: CKCodable {
                    var id: String
                    var body: String
                    var folder: String?
                    var lists: [CloudLazyReference<List>]
                    var photo: Data?
                    var scans: [Foundation.URL]
                    var cover: Picture

                    static var cloudKitFieldOptions: NestedCloudKitCodable.CloudFieldOptions {
                        NestedCloudKitCodable.CloudFieldOptions(keyedBy: CodingKeys.self, assets: [.body, .photo, .scans, .cover], parent: .folder)
                    }
                }

                extension Note: CloudRecordEncodable, CloudRecordDecodable, CloudRecordRowDecodable {
                    func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                        try record.encode(self.id, forKey: "id")
                        try record.encode(self.body, forKey: "body")
                        try record.encodeIfPresent(self.folder, forKey: "folder")
                        try record.encode(self.lists, forKey: "lists")
                        try record.encodeIfPresent(self.photo, forKey: "photo")
                        try record.encode(self.scans, forKey: "scans")
                        try record.encode(self.cover, forKey: "cover")
                    }

                    init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                        self.id = try record.decode(forKey: "id")
                        self.body = try record.decode(forKey: "body")
                        self.folder = try record.decodeIfPresent(forKey: "folder")
                        self.lists = try record.decode(forKey: "lists")
                        self.photo = try record.decodeIfPresent(forKey: "photo")
                        self.scans = try record.decode(forKey: "scans")
                        self.cover = try record.decode(forKey: "cover")
                    }

                    init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                        self.id = try row.decode(forKey: "id")
                        self.body = try row.decode(forKey: "body")
                        self.folder = try row.decodeIfPresent(forKey: "folder")
                        self.lists = try row.decode(forKey: "lists")
                        self.photo = try row.decodeIfPresent(forKey: "photo")
                        self.scans = try row.decode(forKey: "scans")
                        self.cover = try row.decode(forKey: "cover")
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@CloudField(asset: true) stores Data, file URLs and CloudAssets (or lists of them) as "
                        + "assets, and a String can't be one: remove asset: true, or make the property Data",
                    line: 4, column: 17),
                DiagnosticSpec(
                    message: "@CloudField(parent: true) makes the one record the property references the record's "
                        + "parent, and a String? isn't a reference to one record: mark the property that holds the "
                        + "parent model, a CloudLazyReference or a CloudReference", line: 5, column: 5),
                DiagnosticSpec(
                    message: "@CloudField(parent: true) makes the one record the property references the record's "
                        + "parent, and a [CloudLazyReference<List>] isn't a reference to one record: mark the property "
                        + "that holds the parent model, a CloudLazyReference or a CloudReference", line: 6, column: 5),
                DiagnosticSpec(
                    message: "a record has one parent: mark only one property @CloudField(parent: true)", line: 6,
                    column: 5),
            ])
    }
}
