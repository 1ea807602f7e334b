import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that serves `@CloudRecord`.
@main
struct NestedCloudKitMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [CloudRecordMacro.self]
}
