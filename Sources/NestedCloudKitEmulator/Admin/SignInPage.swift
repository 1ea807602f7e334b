import Foundation

/// The sign-in page a 421's `redirectURL` points to. A developer types a test user's name; the page hands the
/// new web auth token back as CloudKit JS expects: a `message` to the window that opened it carrying `ckSession`
/// (and `ckWebAuthToken`), or, with no opener, a redirect to `returnURL` with `ckWebAuthToken` in its query.
enum SignInPage {
    static func respond(to request: EmulatorRequest, state: EmulatorState) async throws(ServerError) -> EmulatorResponse
    {
        if request.method == "POST" {
            let form = Self.form(request.body)
            guard let user = form["user"]?.trimmingCharacters(in: .whitespaces), !user.isEmpty else {
                return .html(
                    page(body: "<p class=\"error\">Type a user name.</p>" + formHTML(returnURL: form["returnURL"])),
                    status: 400)
            }
            let token = await state.tokens.issue(for: user)
            return .html(page(body: signedIn(user: user, token: token, returnURL: form["returnURL"])))
        }
        return .html(page(body: formHTML(returnURL: request.query["returnURL"])))
    }

    private static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    /// A JavaScript string literal holding `text`, safe inside a script element.
    private static func script(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    private static func formHTML(returnURL: String?) -> String {
        """
        <form method="post" action="/emulator/sign-in">
          <label>Test user <input name="user" id="user" value="alice" autofocus></label>
          <input type="hidden" name="returnURL" value="\(escaped(returnURL ?? ""))">
          <button type="submit" id="sign-in">Sign in</button>
        </form>
        <p>Any name works: each name is its own iCloud user, with its own private database.</p>
        """
    }

    private static func signedIn(user: String, token: String, returnURL: String?) -> String {
        """
        <p id="signed-in">Signed in as <strong>\(escaped(user))</strong>.</p>
        <p>Web auth token: <code id="token">\(escaped(token))</code></p>
        <script>
          const token = \(script(token));
          const returnURL = \(script(returnURL ?? ""));
          if (window.opener) {
            window.opener.postMessage({ ckSession: token, ckWebAuthToken: token }, "*");
            window.close();
          } else if (returnURL) {
            const url = new URL(returnURL);
            url.searchParams.set("ckWebAuthToken", token);
            window.location.replace(url.toString());
          }
        </script>
        """
    }

    private static func page(body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Sign in to the CloudKit emulator</title>
        <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;color:#222}
        input,button{font-size:1rem;padding:.3rem}.error{color:#b00}</style></head>
        <body><h1>CloudKit emulator</h1>\(body)</body></html>
        """
    }
}
