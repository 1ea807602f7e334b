import Foundation

/// The sign-in page a 421's `redirectURL` points to. A developer types a test user's name; the page hands the
/// new web auth token back as CloudKit JS expects: a `message` to the window that opened it carrying `ckSession`
/// (and `ckWebAuthToken`), or, with no opener, a redirect to `returnURL` with `ckWebAuthToken` in its query.
///
/// A token goes only to a page the developer's app could be: a loopback origin (any port) or one given with
/// `--allowed-origin`, as CloudKit only answers the origins an API token allows. The opener's origin comes from
/// `returnURL`, an `origin` parameter, or the `Referer` CloudKit JS's popup arrives with; `postMessage` names it, so
/// no other page that opened this one receives the token.
enum SignInPage {
    static let returnURLRule =
        "returnURL must be an http or https URL on an allowed origin: loopback (localhost, 127.0.0.1, [::1]) or one given with --allowed-origin"
    static let originRule =
        "origin must be an http or https origin that is allowed: loopback (localhost, 127.0.0.1, [::1]) or one given with --allowed-origin"

    /// Where the token goes once the user signed in.
    private struct Destination {
        /// The page to return to without an opener, with the token in its query.
        var returnURL: String?
        /// The origin of the page that opened this one, which alone may receive the token by `postMessage`.
        var openerOrigin: String?

        init(returnURL: String?, origin: String?, referer: String?, origins: RequestOrigins) throws(ServerError) {
            if let returnURL, !returnURL.isEmpty {
                guard let parsed = RequestOrigins.origin(of: returnURL), origins.isAllowedApp(parsed) else {
                    throw .badRequest(SignInPage.returnURLRule)
                }
                self.returnURL = returnURL
                openerOrigin = parsed.serialized
            }
            if let origin, !origin.isEmpty {
                guard let parsed = RequestOrigins.origin(of: origin), origins.isAllowedApp(parsed) else {
                    throw .badRequest(SignInPage.originRule)
                }
                openerOrigin = parsed.serialized
            } else if openerOrigin == nil, let referer, let parsed = RequestOrigins.origin(of: referer),
                origins.isAllowedApp(parsed)
            {
                // A Referer of another origin is passed over, not refused: the page then shows the token only.
                openerOrigin = parsed.serialized
            }
        }
    }

    static func respond(to request: EmulatorRequest, state: EmulatorState) async throws(ServerError) -> EmulatorResponse
    {
        let origins = state.origins
        guard request.method == "POST" else {
            do {
                let destination = try Destination(
                    returnURL: request.query["returnURL"], origin: request.query["origin"],
                    referer: request.header("referer"), origins: origins)
                return .html(page(body: formHTML(destination)))
            } catch {
                return .html(page(body: problem(error.reason) + formHTML(nil)), status: 400)
            }
        }
        // Only the form on this page signs in: a form another site's page posts here is refused.
        if let origin = request.header("origin"), !origins.isEmulator(origin) {
            throw ServerError(
                .accessDenied, "the sign-in form is posted from the emulator's own sign-in page, not from \(origin)")
        }
        let form = Self.form(request.body)
        let destination: Destination
        do {
            destination = try Destination(
                returnURL: form["returnURL"], origin: form["origin"], referer: nil, origins: origins)
        } catch {
            return .html(page(body: problem(error.reason) + formHTML(nil)), status: 400)
        }
        guard let user = form["user"]?.trimmingCharacters(in: .whitespaces), !user.isEmpty else {
            return .html(page(body: problem("Type a user name.") + formHTML(destination)), status: 400)
        }
        do {
            try DatabaseNames.check(user: user)
        } catch {
            return .html(page(body: problem(error.reason) + formHTML(destination)), status: 400)
        }
        if form["discoverable"] == "on" {
            let given = form["givenName"]?.trimmingCharacters(in: .whitespaces) ?? ""
            let email = form["emailAddress"]?.trimmingCharacters(in: .whitespaces) ?? ""
            state.users.publish(
                user,
                as: EmulatorUserIdentity(
                    givenName: given.isEmpty ? user : given,
                    familyName: form["familyName"]?.trimmingCharacters(in: .whitespaces) ?? "",
                    emailAddress: email.isEmpty ? nil : email))
        }
        let token = await state.tokens.issue(for: user)
        return .html(page(body: signedIn(user: user, token: token, destination: destination)))
    }

    private static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// Text for an attribute value or an element's content.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// A JavaScript string literal holding `text`, safe inside a script element.
    private static func script(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    private static func problem(_ reason: String) -> String {
        "<p class=\"error\">\(escaped(reason))</p>"
    }

    private static func formHTML(_ destination: Destination?) -> String {
        """
        <form method="post" action="/emulator/sign-in">
          <label>Test user <input name="user" id="user" value="alice" autofocus></label>
          <fieldset>
            <label><input type="checkbox" name="discoverable" id="discoverable"> Others can look me up</label>
            <label>Given name <input name="givenName" id="givenName"></label>
            <label>Family name <input name="familyName" id="familyName"></label>
            <label>Email <input name="emailAddress" id="emailAddress" type="email"></label>
          </fieldset>
          <input type="hidden" name="returnURL" value="\(escaped(destination?.returnURL ?? ""))">
          <input type="hidden" name="origin" value="\(escaped(destination?.openerOrigin ?? ""))">
          <button type="submit" id="sign-in">Sign in</button>
        </form>
        <p>Each name is its own iCloud user, with its own private database: ASCII letters, digits and . _ - @ +.
        A user who can be looked up is found by users/discover and users/lookup by that email address.</p>
        """
    }

    private static func signedIn(user: String, token: String, destination: Destination) -> String {
        """
        <p id="signed-in">Signed in as <strong>\(escaped(user))</strong>.</p>
        <p>Web auth token: <code id="token">\(escaped(token))</code></p>
        <script>
          const token = \(script(token));
          const targetOrigin = \(destination.openerOrigin.map(script) ?? "null");
          const returnURL = \(script(destination.returnURL ?? ""));
          if (window.opener && targetOrigin) {
            window.opener.postMessage({ ckSession: token, ckWebAuthToken: token }, targetOrigin);
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
