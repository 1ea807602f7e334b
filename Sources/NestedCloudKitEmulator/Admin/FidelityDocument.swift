/// FIDELITY.md as the fidelity list renders it; a test keeps the committed file equal to this.
package enum FidelityDocument {
    /// The Markdown of FIDELITY.md: its introduction, then a table of the entries per area.
    package static var markdown: String {
        var lines = [
            "# Fidelity of the CloudKit emulator",
            "",
            "What `cloudkit-emulator` serves of CloudKit Web Services, and how each ambiguity in Apple's documentation",
            "was resolved. `GET /emulator/v1/fidelity` reports the same list; `swift run cloudkit-emulator --print-fidelity`",
            "writes this file.",
            "",
        ]
        var area = ""
        for entry in Fidelity.entries {
            if entry.area != area {
                area = entry.area
                lines += ["## \(area)", "", "| Item | Status | Notes |", "|---|---|---|"]
            }
            lines.append(
                "| \(entry.item) | \(entry.status.rawValue) | \(entry.note.replacingOccurrences(of: "|", with: "\\|")) |"
            )
            if entry == Fidelity.entries.last(where: { $0.area == area }) { lines.append("") }
        }
        return lines.joined(separator: "\n")
    }
}
