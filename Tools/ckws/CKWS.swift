import ArgumentParser
import Foundation

/// `ckws`: looks at a CloudKit container from a terminal, through CloudKit Web Services.
@main
struct CKWS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ckws",
        abstract: "Look at a CloudKit container from a terminal, through CloudKit Web Services.",
        discussion: """
            Authenticate with a server-to-server key (public database) or an API token and a user's web auth token \
            (any database). Options can come from the environment: CLOUDKIT_CONTAINER, CLOUDKIT_KEY_ID, \
            CLOUDKIT_KEY_FILE, CLOUDKIT_PRIVATE_KEY (the PEM text itself), CLOUDKIT_API_TOKEN, CLOUDKIT_WEB_AUTH_TOKEN.
            """,
        subcommands: [ListZones.self, Lookup.self, Query.self]
    )
}
