import Foundation
import NestedCloudKitCodable

/// The page a share's URL opens (`/share/SHORT_GUID`), as iCloud's share links open one: the share's title and
/// owner, and how an app accepts it. The short GUID, 122 random bits, is the URL's only credential, as in
/// iCloud; the page shows no record, and a URL no share has is a plain 404. Not open to other origins: a page in
/// the browser can't read it.
enum SharePage {
    static let prefix = "/share/"

    static func respond(shortGUID: String, state: EmulatorState) async throws(ServerError) -> EmulatorResponse {
        guard !shortGUID.isEmpty, !shortGUID.contains("/"),
            let found = await state.registry.share(shortGUID: shortGUID)
        else {
            throw ServerError(.notFound, "no share has this URL: ask its owner to send the link again")
        }
        let share = try? CloudShare(record: found.record)
        let title = share?.title.map { "“\(SignInPage.escaped($0))”" } ?? "A shared item"
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Shared with you</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}
            code{background:#eee;padding:.1em .3em;border-radius:3px}</style></head>
            <body><h1>\(title)</h1>
            <p>Shared by <code>\(SignInPage.escaped(found.owner))</code> in container
            <code>\(SignInPage.escaped(found.container))</code> (\(found.environment.rawValue)).</p>
            <p>Open it in the app: it accepts the share with <code>records/accept</code> and the short GUID
            <code>\(SignInPage.escaped(shortGUID))</code>, then finds it in the user's shared database.</p>
            </body></html>
            """
        return .html(page)
    }
}
