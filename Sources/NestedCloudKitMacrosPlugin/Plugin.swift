import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that serves `@CloudRecord`, `@CloudField` and `@CloudIgnored`.
@main
struct NestedCloudKitMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [CloudRecordMacro.self, CloudFieldMacro.self]
}
