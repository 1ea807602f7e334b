import Foundation

extension CloudAsset {
    /// Why an asset's contents can't be read.
    public struct UnreadableContents: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, for example "the asset's file /dev/zero isn't a regular file".
        public let reason: String

        /// The reason, as the error prints.
        public var description: String { reason }
    }

    /// The asset's contents: its bytes in memory, or its local file's contents.
    ///
    /// Only a regular file is read (a link to one is followed): a device or a pipe named by a damaged or forged
    /// record, such as `/dev/zero`, would never finish reading.
    /// - Throws: ``UnreadableContents`` when the asset has neither bytes nor a file, or its file isn't a readable
    ///   regular file.
    public func contents() throws(UnreadableContents) -> Data {
        if let data { return data }
        let fileURL = try regularFile()
        do {
            return try Data(contentsOf: fileURL)
        } catch {
            throw UnreadableContents(reason: "the asset's file \(fileURL.path) can't be read (\(error))")
        }
    }

    /// Checks, without reading it, that the asset's file is one ``contents()`` would read: for a backend that
    /// copies the file itself and only needs to refuse a record whose file it can't read. An asset with bytes in
    /// memory passes.
    package func checkReadable() throws(UnreadableContents) {
        guard data == nil else { return }
        let fileURL = try regularFile()
        guard FileManager.default.isReadableFile(atPath: fileURL.path) else {
            throw UnreadableContents(reason: "the asset's file \(fileURL.path) can't be read")
        }
    }

    /// The asset's file, links followed, if it is a regular file.
    private func regularFile() throws(UnreadableContents) -> URL {
        guard let fileURL = fileURL?.resolvingSymlinksInPath() else {
            throw UnreadableContents(reason: "the asset has no local contents; download it first")
        }
        guard (try? fileURL.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else {
            throw UnreadableContents(reason: "the asset's file \(fileURL.path) isn't a regular file")
        }
        return fileURL
    }
}
