/// The dashboard served at `/`: what the emulator holds and what it has been asked, in a browser.
///
/// It is one self-contained page (inline CSS and plain JavaScript, nothing fetched from elsewhere), kept as
/// `dashboard.html` beside this file and compiled into the library (`.embedInCode`), so the emulator needs no
/// bundler and no resources directory at run time, and can't fail to find its page. Everything it shows it reads
/// from the emulator's admin JSON API under `/emulator/v1/` (health, databases, records, requests, faults), the
/// same API a test or a script uses, so the page adds no server-side code paths of its own. It polls every two
/// seconds, but reads a page of records (100 at a time) again only when the database's revision moved; draws each
/// zone's records as trees rooted at the records nothing references (a school above its students); and puts every
/// value into the page as text, never as markup.
///
/// With an admin token (`--admin-token`), the page takes it from its URL's fragment (`/#admin-token=TOKEN`, which
/// no browser sends to a server or puts in a `Referer`), keeps it for the tab in `sessionStorage`, and sends it as
/// `Authorization: Bearer`; without it, the page asks for it.
enum DashboardPage {
    static let html = String(decoding: PackageResources.dashboard_html, as: UTF8.self)
}
