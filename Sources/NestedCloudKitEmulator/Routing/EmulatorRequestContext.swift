import Hummingbird
import Logging
import NIOConcurrencyHelpers

/// What the emulator's middleware learns of a request on its way in, for the routes and the middleware after it.
///
/// Each middleware gets the context by value, so what must travel back out to an outer one (the request log wants
/// the user and the error code) goes in ``notes``, which every copy shares.
struct EmulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The request as the handlers read it, body included: set by ``RequestBodyMiddleware``.
    var request = EmulatorRequest(method: "", target: "/")
    /// Where the client reached the emulator, checked by ``HostCheckMiddleware`` before any URL is built from it.
    var baseURL = ""
    /// The database a CloudKit path names and who calls it: set by ``AuthenticationMiddleware``.
    var database: DatabaseCall?
    let notes = ExchangeNotes()

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }

    /// A context for a request handed to the router directly, without a connection (the tests' harness).
    init(logger: Logger) {
        coreContext = CoreRequestContextStorage(source: DirectSource(logger: logger))
    }

    private struct DirectSource: RequestContextSource {
        let logger: Logger
    }
}

/// The database a CloudKit path names, and who calls it.
struct DatabaseCall: Sendable {
    var container: String
    var environment: EmulatorEnvironment
    var scope: DatabaseKey.Scope
    var caller: Caller
}

/// What a request's answer was, for the request log: who made it and the error it failed with.
final class ExchangeNotes: Sendable {
    private let values = NIOLockedValueBox<(user: String?, serverErrorCode: String?)>((nil, nil))

    var user: String? {
        get { values.withLockedValue { $0.user } }
        set { values.withLockedValue { $0.user = newValue } }
    }

    var serverErrorCode: String? {
        get { values.withLockedValue { $0.serverErrorCode } }
        set { values.withLockedValue { $0.serverErrorCode = newValue } }
    }
}
