import Foundation
import NestedCloudKitCodable
import Testing

/// An asset's contents come from its bytes or its regular file; anything else is an error saying why.
@Suite("CloudAsset: contents")
struct CloudAssetContentsTests {
    @Test func bytesInMemoryAreTheContents() throws {
        #expect(try CloudAsset(data: Data([1, 2, 3])).contents() == Data([1, 2, 3]))
    }

    @Test func anAssetWithNeitherBytesNorAFileSaysToDownloadIt() {
        let error = #expect(throws: CloudAsset.UnreadableContents.self) {
            try CloudAsset(size: 3, fileChecksum: "abc").contents()
        }
        #expect(error?.reason == "the asset has no local contents; download it first")
    }
}
