/// JSON text written by hand, where building values for `JSONSerialization` would cost more than the text: the
/// encoder's embedded JSON and the sync store's queryable fields.
package enum JSONText {
    /// Appends a string as a JSON string literal: quotes, backslashes and control characters escaped, everything
    /// else as it is (JSON text is Unicode). A string with nothing to escape, the usual case, is appended whole.
    package static func appendString(_ string: String, to output: inout String) {
        output += "\""
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            output += string
        } else {
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
