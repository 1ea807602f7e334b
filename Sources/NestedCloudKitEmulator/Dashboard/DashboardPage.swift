/// The dashboard served at `/`: what the emulator holds and what it has been asked, in a browser.
///
/// It is one self-contained page (inline CSS and plain JavaScript, nothing fetched from elsewhere), so the
/// emulator needs no build step, no bundler and no resources directory to serve it. Everything it shows it reads
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
    static let html: String = #"""
        <!doctype html>
        <html lang="en">
        <head>
          <meta charset="utf-8">
          <meta name="viewport" content="width=device-width, initial-scale=1">
          <title>CloudKit Emulator</title>
          <style>
            :root {
              --border: #d8dce2;
              --soft: #f6f7f9;
              --muted: #6a7280;
              --text: #1d2127;
              --link: #0a5fcc;
              --good: #1a7f37;
              --bad: #b42318;
              --bad-soft: #fdeceb;
              --flash: #fff3bf;
            }
            * { box-sizing: border-box; }
            body {
              margin: 0;
              color: var(--text);
              background: #fff;
              font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
            }
            code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
            code { font-size: 12.5px; }
            header {
              position: sticky;
              top: 0;
              z-index: 2;
              display: flex;
              flex-wrap: wrap;
              align-items: center;
              gap: 8px 14px;
              padding: 10px 20px;
              background: var(--soft);
              border-bottom: 1px solid var(--border);
            }
            h1 { margin: 0; font-size: 16px; font-weight: 600; }
            h2 { margin: 0; font-size: 15px; font-weight: 600; }
            h3 { margin: 0 0 8px; font-size: 14px; font-weight: 600; }
            .spacer { flex: 1; }
            .muted { color: var(--muted); }
            .empty { margin: 4px 0; color: var(--muted); font-style: italic; }
            .health {
              padding: 2px 10px;
              border: 1px solid var(--border);
              border-radius: 999px;
              background: #fff;
              font-size: 13px;
            }
            .health.good { color: var(--good); border-color: #b7dfc2; }
            .health.bad { color: var(--bad); border-color: #f1b8b3; }
            button, select {
              font: inherit;
              padding: 3px 10px;
              border: 1px solid var(--border);
              border-radius: 6px;
              background: #fff;
            }
            button { cursor: pointer; }
            button:hover { background: var(--soft); }
            select { max-width: 100%; }
            label { user-select: none; }
            .banner {
              margin: 12px 20px 0;
              padding: 8px 12px;
              color: var(--bad);
              background: var(--bad-soft);
              border: 1px solid #f1b8b3;
              border-radius: 6px;
            }
            .banner div + div { margin-top: 2px; }
            main {
              display: grid;
              grid-template-columns: minmax(0, 1fr);
              gap: 16px;
              padding: 16px 20px 40px;
            }
            @media (min-width: 1100px) {
              main { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); align-items: start; }
            }
            .column { display: grid; grid-template-columns: minmax(0, 1fr); gap: 16px; min-width: 0; }
            .panel { min-width: 0; border: 1px solid var(--border); border-radius: 8px; }
            .panel-head {
              display: flex;
              flex-wrap: wrap;
              align-items: center;
              gap: 6px 12px;
              padding: 8px 12px;
              background: var(--soft);
              border-bottom: 1px solid var(--border);
              border-radius: 8px 8px 0 0;
            }
            .panel-body { padding: 10px 12px; overflow-x: auto; }
            .zone + .zone { margin-top: 14px; padding-top: 12px; border-top: 1px dashed var(--border); }
            .zone h3 .muted { font-weight: 400; }
            ul.tree { margin: 0; padding: 0; list-style: none; }
            ul.tree ul.tree { margin-left: 12px; padding-left: 14px; border-left: 1px solid var(--border); }
            ul.tree > li { margin: 8px 0 0; }
            .record {
              padding: 6px 10px 8px;
              border: 1px solid var(--border);
              border-radius: 6px;
              background: #fff;
              transition: background-color 0.6s;
            }
            .record.flash { background: var(--flash); }
            .record-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 10px; }
            .record-type { font-weight: 600; }
            .record-meta { margin-top: 2px; color: var(--muted); font-size: 12px; }
            .record-stub {
              padding: 4px 10px;
              color: var(--muted);
              border: 1px dashed var(--border);
              border-radius: 6px;
              font-size: 13px;
            }
            .tag { color: var(--muted); font-size: 12px; }
            .badge {
              padding: 0 6px;
              color: var(--bad);
              background: var(--bad-soft);
              border-radius: 4px;
              font-size: 12px;
            }
            table { border-collapse: collapse; }
            table.fields { width: 100%; margin-top: 6px; font-size: 13px; }
            table.fields th, table.fields td {
              padding: 3px 8px;
              text-align: left;
              vertical-align: top;
              border-top: 1px solid #eceef1;
            }
            table.fields th { width: 1%; font-weight: 500; white-space: nowrap; }
            table.fields td.type { width: 1%; color: var(--muted); font-size: 11.5px; white-space: nowrap; }
            table.fields td.value { overflow-wrap: anywhere; white-space: pre-wrap; }
            ol.list-value { margin: 0; padding-left: 20px; }
            a { color: var(--link); text-decoration: none; }
            a:hover { text-decoration: underline; }
            table.grid { width: 100%; font-size: 13px; }
            table.grid th, table.grid td {
              padding: 4px 6px;
              text-align: left;
              vertical-align: top;
              border-bottom: 1px solid #eceef1;
            }
            table.grid th { color: var(--muted); font-weight: 500; }
            table.grid td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
            table.grid td.nowrap { white-space: nowrap; }
            table.grid td.wide { min-width: 12em; }
            .record-meta span { white-space: nowrap; }
            table.grid tr.fail td { color: var(--bad); background: var(--bad-soft); }
          </style>
        </head>
        <body>
          <header>
            <h1>CloudKit Emulator</h1>
            <span id="health" class="health" data-status="loading">loading</span>
            <span class="spacer"></span>
            <span id="updated" class="muted"></span>
            <label class="muted"><input type="checkbox" id="auto-refresh" checked> every 2 s</label>
            <button type="button" id="refresh">Refresh</button>
          </header>
          <div id="error" class="banner" role="alert" hidden></div>
          <form id="token-form" class="banner" hidden>
            <label>This emulator has an admin token: <input type="password" id="token-input" autocomplete="off"></label>
            <button type="submit">Use it</button>
            <span class="muted">or open this page as /#admin-token=TOKEN</span>
          </form>
          <noscript><div class="banner">This dashboard needs JavaScript.</div></noscript>
          <main>
            <section class="panel">
              <div class="panel-head">
                <h2>Records</h2>
                <label for="database-select" class="muted">Database</label>
                <select id="database-select"></select>
                <span class="spacer"></span>
                <button type="button" id="previous-page" disabled>Previous</button>
                <span id="page-range" class="muted"></span>
                <button type="button" id="next-page" disabled>Next</button>
              </div>
              <div id="zones" class="panel-body"><p class="empty">Loading</p></div>
            </section>
            <div class="column">
              <section class="panel">
                <div class="panel-head"><h2>Faults in force</h2></div>
                <div id="faults" class="panel-body"><p class="empty">Loading</p></div>
              </section>
              <section class="panel">
                <div class="panel-head">
                  <h2>Requests</h2>
                  <span id="requests-count" class="muted"></span>
                </div>
                <div id="requests" class="panel-body"><p class="empty">Loading</p></div>
              </section>
            </div>
          </main>
          <script>
            "use strict";

            // Everything the page shows comes from the admin API and goes into the page as text
            // (textContent, setAttribute), never as markup.
            const API = "/emulator/v1/";
            const REFRESH_MILLISECONDS = 2000;
            const MAX_REQUESTS = 100;
            const PAGE_SIZE = 100;
            const TOKEN_KEY = "cloudkit-emulator-admin-token";
            const SEP = " \u00b7 ";
            const DASH = "\u2014";

            const state = {
              databases: [],
              selectedKey: null,
              // The page of records shown: the continuation markers of the pages up to it (null for the first).
              markers: [null],
              next: null,
              recordsStamp: null, // database, page and revision last read, so an unchanged page isn't read again
              token: null,
              rendered: {}, // endpoint -> path and body last rendered, to leave the page alone when nothing changed
              errors: {}, // endpoint -> message for the banner
              busy: false,
              again: false,
            };

            function byId(id) {
              return document.getElementById(id);
            }

            function el(tag, attributes, ...children) {
              const node = document.createElement(tag);
              for (const [name, value] of Object.entries(attributes || {})) {
                if (value === undefined || value === null || value === false) continue;
                if (name === "text") node.textContent = String(value);
                else if (name === "class") node.className = value;
                else node.setAttribute(name, value === true ? "" : String(value));
              }
              for (const child of children) {
                if (child !== undefined && child !== null && child !== false) node.append(child);
              }
              return node;
            }

            function given(value) {
              return value !== undefined && value !== null;
            }

            function show(value) {
              return !given(value) || value === "" ? DASH : String(value);
            }

            // The admin token, from the URL's fragment (then taken out of the address bar) or this tab's storage.
            function readToken() {
              const match = /(?:^#|&)admin-token=([^&]*)/.exec(window.location.hash);
              if (match) {
                try {
                  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
                } catch (error) {
                  state.token = decodeURIComponent(match[1]);
                }
                history.replaceState(null, "", window.location.pathname + window.location.search);
              }
              try {
                state.token = sessionStorage.getItem(TOKEN_KEY) ?? state.token;
              } catch (error) {
                // Storage refused (a private window's settings): the token lives in this page only.
              }
            }

            function askForToken(show) {
              byId("token-form").hidden = !show;
            }

            async function fetchText(path) {
              const headers = { Accept: "application/json" };
              if (state.token) headers.Authorization = "Bearer " + state.token;
              const response = await fetch(path, { cache: "no-store", headers });
              const body = await response.text();
              if (response.status === 401) askForToken(true);
              if (!response.ok) {
                const status = ("HTTP " + response.status + " " + response.statusText).trim();
                throw new Error(status + ": " + body.slice(0, 300));
              }
              return body;
            }

            // Fetches one endpoint and renders it if it changed; a failure goes to the banner and leaves
            // what was shown before in place. `render` returns false when its answer is stale.
            async function load(name, path, render, failed) {
              try {
                const body = await fetchText(path);
                const stamp = path + "\n" + body;
                if (state.rendered[name] !== stamp) {
                  if (render(JSON.parse(body)) !== false) state.rendered[name] = stamp;
                }
                delete state.errors[name];
              } catch (error) {
                delete state.rendered[name];
                state.errors[name] = path + ": " + (error && error.message ? error.message : String(error));
                if (failed) failed(error);
              }
            }

            // Health

            function formatUptime(seconds) {
              const total = Math.floor(Number(seconds));
              if (!Number.isFinite(total)) return String(seconds);
              if (total < 60) return total + " s";
              const minutes = Math.floor(total / 60);
              if (minutes < 60) return minutes + " min " + (total % 60) + " s";
              const hours = Math.floor(minutes / 60);
              if (hours < 48) return hours + " h " + (minutes % 60) + " min";
              return Math.floor(hours / 24) + " d " + (hours % 24) + " h";
            }

            function renderHealth(data) {
              const status = String(data.status ?? "unknown");
              const parts = [status];
              if (data.version) parts.push("version " + data.version);
              if (data.environment) parts.push(data.environment);
              if (given(data.uptimeSeconds)) parts.push("up " + formatUptime(data.uptimeSeconds));
              const node = byId("health");
              node.textContent = parts.join(SEP);
              node.className = "health " + (status === "ok" ? "good" : "bad");
              node.dataset.status = status;
            }

            function healthFailed() {
              const node = byId("health");
              node.textContent = "unreachable";
              node.className = "health bad";
              node.dataset.status = "unreachable";
            }

            // Databases

            function databaseKey(database) {
              return JSON.stringify([database.container, database.environment, database.scope, database.user ?? null]);
            }

            function databaseLabel(database) {
              const parts = [database.container, database.environment, database.scope];
              if (database.user) parts.push(database.user);
              return parts.map(show).join(SEP);
            }

            function renderDatabases(data) {
              askForToken(false);
              const databases = Array.isArray(data.databases) ? data.databases : [];
              const keys = databases.map(databaseKey);
              state.databases = databases;
              if (!keys.includes(state.selectedKey)) selectDatabase(keys.length ? keys[0] : null);
              const select = byId("database-select");
              const options = databases.map((database, index) => {
                return el("option", { value: keys[index], text: databaseLabel(database) });
              });
              if (!options.length) options.push(el("option", { value: "", text: "no databases yet" }));
              select.replaceChildren(...options);
              select.disabled = !databases.length;
              select.value = state.selectedKey ?? "";
            }

            function selectedDatabase() {
              return state.databases.find((database) => databaseKey(database) === state.selectedKey) ?? null;
            }

            // Records

            function selectDatabase(key) {
              state.selectedKey = key;
              state.markers = [null];
              state.next = null;
              state.recordsStamp = null;
            }

            // Reads the page of records shown, unless the database's revision hasn't moved since it was read (the
            // emulator gives no revision for a database not opened yet: that one is read).
            async function loadRecords(force) {
              const database = selectedDatabase();
              if (!database) {
                delete state.errors.records;
                if (state.rendered.records !== "") {
                  byId("zones").replaceChildren(el("p", { class: "empty", text: "No database yet." }));
                  state.rendered.records = "";
                  renderPager(0);
                }
                return;
              }
              const key = state.selectedKey;
              const marker = state.markers[state.markers.length - 1];
              const stamp = JSON.stringify([key, marker, database.revision ?? null]);
              if (!force && given(database.revision) && stamp === state.recordsStamp) return;
              const query = new URLSearchParams({
                container: database.container ?? "",
                environment: database.environment ?? "",
                scope: database.scope ?? "",
                limit: String(PAGE_SIZE),
              });
              if (database.user) query.set("user", database.user);
              if (marker) query.set("continuation", marker);
              await load("records", API + "records?" + query.toString(), (data) => {
                if (key !== state.selectedKey || marker !== state.markers[state.markers.length - 1]) return false;
                state.recordsStamp = JSON.stringify([key, marker, given(data.revision) ? data.revision : null]);
                state.next = typeof data.continuation === "string" ? data.continuation : null;
                renderZones(data);
              });
            }

            function renderZones(data) {
              const zones = Array.isArray(data.zones) ? data.zones : [];
              const nodes = zones.map((zone, index) => renderZone(zone, index));
              if (!nodes.length) nodes.push(el("p", { class: "empty", text: "No zones in this database." }));
              byId("zones").replaceChildren(...nodes);
              const shown = zones.reduce((count, zone) => count + (Array.isArray(zone.records) ? zone.records.length : 0), 0);
              renderPager(shown);
            }

            function renderPager(shown) {
              const first = (state.markers.length - 1) * PAGE_SIZE;
              byId("page-range").textContent = shown ? "records " + (first + 1) + "\u2013" + (first + shown) : "";
              byId("previous-page").disabled = state.markers.length < 2;
              byId("next-page").disabled = !state.next;
            }

            function renderZone(zone, zoneIndex) {
              const zoneID = zone.zoneID || {};
              const records = Array.isArray(zone.records) ? zone.records : [];
              const summary = "owner " + show(zoneID.ownerRecordName) + SEP + records.length
                + (records.length === 1 ? " record" : " records") + (state.markers.length > 1 || state.next ? " on this page" : "");
              const section = el("section", { class: "zone", "data-zone-name": zoneID.zoneName ?? "" },
                el("h3", null, show(zoneID.zoneName), " ", el("span", { class: "muted", text: summary })));
              if (!records.length) {
                section.append(el("p", { class: "empty", text: "No records." }));
                return section;
              }
              const context = { zoneID, tree: buildTree(zoneID, records, zoneIndex), shown: new Set() };
              const list = el("ul", { class: "tree" });
              for (const name of context.tree.roots) list.append(renderNode(context, name, []));
              // Records caught in a reference cycle have no root above them: start from the first one left.
              for (const name of context.tree.order) {
                if (!context.shown.has(name)) list.append(renderNode(context, name, []));
              }
              section.append(list);
              return section;
            }

            function referenceValues(field) {
              if (!field || typeof field !== "object") return [];
              let values = [];
              if (field.type === "REFERENCE") values = [field.value];
              else if (field.type === "REFERENCE_LIST" && Array.isArray(field.value)) values = field.value;
              return values.filter((value) => value && typeof value === "object" && value.recordName !== undefined);
            }

            function isInZone(reference, zoneID) {
              const other = reference.zoneID;
              if (!other || typeof other !== "object") return true;
              if ((other.zoneName ?? "_defaultZone") !== (zoneID.zoneName ?? "_defaultZone")) return false;
              const a = other.ownerRecordName;
              const b = zoneID.ownerRecordName;
              return !a || !b || a === b || a === "__defaultOwner__" || b === "__defaultOwner__";
            }

            // An object graph's shape, as the encoder writes it: a record references the records it holds (a
            // school its students, its director). So a record sits under every record of its zone that references
            // it, and the roots are the records nothing on the page references: the school, above its students.
            function buildTree(zoneID, records, zoneIndex) {
              const byName = new Map();
              const order = [];
              records.forEach((record, index) => {
                const name = String(record.recordName ?? "");
                if (byName.has(name)) return;
                byName.set(name, { record, anchor: "record-" + zoneIndex + "-" + index });
                order.push(name);
              });
              const children = new Map(order.map((name) => [name, []]));
              const hasParent = new Set();
              for (const name of order) {
                const fields = byName.get(name).record.fields;
                for (const field of Object.values(fields && typeof fields === "object" ? fields : {})) {
                  for (const reference of referenceValues(field)) {
                    const child = String(reference.recordName);
                    if (child === name || !byName.has(child) || !isInZone(reference, zoneID)) continue;
                    const siblings = children.get(name);
                    if (!siblings.includes(child)) siblings.push(child);
                    hasParent.add(child);
                  }
                }
              }
              return { byName, order, children, roots: order.filter((name) => !hasParent.has(name)) };
            }

            // A record is drawn in full once; anywhere else (a second parent, or a cycle back to an
            // ancestor) it is a one-line stub that links to the full one above.
            function renderNode(context, name, ancestors) {
              const entry = context.tree.byName.get(name);
              const item = el("li");
              if (context.shown.has(name)) {
                const why = ancestors.includes(name) ? "reference cycle, shown above" : "also shown above";
                const label = show(entry.record.recordType) + " " + name;
                item.append(el("div", { class: "record-stub", "data-stub-record-name": name },
                  el("a", { class: "ref", href: "#" + entry.anchor, text: label }), SEP + why));
                return item;
              }
              context.shown.add(name);
              item.append(renderRecord(context, entry));
              const children = context.tree.children.get(name);
              if (children.length) {
                const list = el("ul", { class: "tree" });
                const path = ancestors.concat(name);
                for (const child of children) list.append(renderNode(context, child, path));
                item.append(list);
              }
              return item;
            }

            function renderRecord(context, entry) {
              const record = entry.record;
              const box = el("div", {
                class: "record",
                id: entry.anchor,
                "data-record-name": record.recordName ?? "",
                "data-record-type": record.recordType ?? "",
              });
              box.append(el("div", { class: "record-head" },
                el("span", { class: "record-type", text: show(record.recordType) }),
                el("code", { class: "record-name", text: show(record.recordName) }),
                record.recordChangeTag ? el("span", { class: "tag", text: "tag " + record.recordChangeTag }) : null,
                record.deleted ? el("span", { class: "badge", text: "deleted" }) : null,
                record.serverErrorCode ? el("span", { class: "badge", text: record.serverErrorCode }) : null));
              const meta = [stamp("created", record.created), stamp("modified", record.modified)].filter(Boolean);
              if (meta.length) {
                const line = el("div", { class: "record-meta" });
                meta.forEach((text, index) => line.append(index ? SEP : "", el("span", { text })));
                box.append(line);
              }
              box.append(renderFields(context, record.fields));
              return box;
            }

            function stamp(label, value) {
              if (!value || typeof value !== "object") return "";
              let text = label + " " + formatTimestamp(value.timestamp);
              if (value.userRecordName) text += " by " + value.userRecordName;
              return text;
            }

            function renderFields(context, fields) {
              const names = fields && typeof fields === "object" ? Object.keys(fields) : [];
              if (!names.length) return el("div", { class: "record-meta", text: "no fields" });
              const body = el("tbody");
              for (const name of names) {
                const raw = fields[name];
                const field = raw && typeof raw === "object" ? raw : { value: raw };
                body.append(el("tr", { "data-field": name },
                  el("th", { scope: "row", text: name }),
                  el("td", { class: "type", text: field.type ?? "" }),
                  el("td", { class: "value" }, formatField(context, field))));
              }
              return el("table", { class: "fields" }, body);
            }

            function formatField(context, field) {
              const type = typeof field.type === "string" ? field.type : "";
              if (!type.endsWith("_LIST")) return formatValue(context, type, field.value);
              if (!Array.isArray(field.value)) return formatValue(context, "", field.value);
              if (!field.value.length) return el("span", { class: "muted", text: "empty list" });
              const itemType = type.slice(0, -"_LIST".length);
              const list = el("ol", { class: "list-value" });
              for (const item of field.value) list.append(el("li", null, formatValue(context, itemType, item)));
              return list;
            }

            function formatValue(context, type, value) {
              switch (type) {
                case "STRING":
                  return el("span", { text: String(value) });
                case "INT64":
                case "DOUBLE":
                  return el("span", { class: "mono", text: String(value) });
                case "TIMESTAMP":
                  return el("span", { title: String(value), text: formatTimestamp(value) });
                case "BYTES":
                  return el("span", { text: formatSize(base64Size(value)) });
                case "ASSETID":
                  return formatAsset(value);
                case "REFERENCE":
                  return formatReference(context, value);
                case "LOCATION":
                  return formatLocation(value);
                default:
                  return el("code", { text: String(JSON.stringify(value)) });
              }
            }

            function formatTimestamp(value) {
              const milliseconds = typeof value === "number" ? value : Number.parseFloat(value);
              const date = new Date(milliseconds);
              const valid = Number.isFinite(milliseconds) && !Number.isNaN(date.getTime());
              return valid ? date.toISOString() : String(value);
            }

            function base64Size(value) {
              if (typeof value !== "string") return null;
              const clean = value.replace(/[^A-Za-z0-9+/=_-]/g, "");
              const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
              return Math.floor(((clean.length - padding) * 3) / 4);
            }

            function formatSize(bytes) {
              const count = Number(bytes);
              if (!given(bytes) || !Number.isFinite(count)) return "size unknown";
              if (count === 1) return "1 byte";
              if (count < 1024) return count + " bytes";
              const units = count < 1024 * 1024 ? [1024, "KB"] : [1024 * 1024, "MB"];
              return (count / units[0]).toFixed(1) + " " + units[1] + " (" + count + " bytes)";
            }

            function safeLink(url) {
              if (typeof url !== "string" || !url) return null;
              try {
                const parsed = new URL(url.split("${f}").join("asset"), window.location.href);
                return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
              } catch (error) {
                return null;
              }
            }

            function formatAsset(value) {
              if (!value || typeof value !== "object") return el("code", { text: String(JSON.stringify(value)) });
              const node = el("span", null, formatSize(value.size));
              const href = safeLink(value.downloadURL);
              if (href) {
                node.append(SEP, el("a", { href, target: "_blank", rel: "noopener noreferrer", text: "download" }));
              }
              return node;
            }

            function formatReference(context, value) {
              if (!value || typeof value !== "object") return el("code", { text: String(JSON.stringify(value)) });
              const name = String(value.recordName ?? "");
              const inZone = isInZone(value, context.zoneID);
              const target = inZone ? context.tree.byName.get(name) : undefined;
              const node = el("span", { class: "reference" });
              if (target) {
                node.append(el("a", {
                  class: "ref",
                  href: "#" + target.anchor,
                  title: show(target.record.recordType) + " " + name,
                  "data-target-record-name": name,
                  text: "\u2192 " + name,
                }));
              } else {
                const where = inZone ? "not on this page" : "in zone " + show(value.zoneID.zoneName);
                node.append(el("code", { text: name }), el("span", { class: "muted", text: " (" + where + ")" }));
              }
              if (value.action) node.append(el("span", { class: "muted", text: SEP + value.action }));
              return node;
            }

            function formatLocation(value) {
              if (!value || typeof value !== "object") return el("code", { text: String(JSON.stringify(value)) });
              let text = show(value.latitude) + ", " + show(value.longitude);
              if (given(value.horizontalAccuracy)) text += " \u00b1" + value.horizontalAccuracy + " m";
              if (given(value.altitude)) text += SEP + "altitude " + value.altitude + " m";
              return el("span", { title: JSON.stringify(value), text });
            }

            // Requests and faults

            function headRow(...titles) {
              const cells = titles.map((title) => el("th", { scope: "col", text: title }));
              return el("thead", null, el("tr", null, ...cells));
            }

            // A path as code that may break after each slash only.
            function pathCell(path, className) {
              const code = el("code");
              show(path).split("/").forEach((part, index) => {
                if (index) code.append("/", el("wbr"));
                code.append(part);
              });
              return el("td", { class: className }, code);
            }

            // The time of day of an ISO 8601 time, with the whole of it as the tooltip.
            function timeCell(time) {
              const match = /T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(String(time ?? ""));
              return el("td", { class: "nowrap", title: show(time), text: match ? match[1] : show(time) });
            }

            function cell(value, className) {
              return el("td", { class: className, text: show(value) });
            }

            function isFailure(request) {
              const status = Number(request.status);
              const code = request.serverErrorCode;
              return (Number.isFinite(status) && status >= 400) || (given(code) && code !== "");
            }

            function formatMilliseconds(value) {
              const number = Number(value);
              if (!given(value) || !Number.isFinite(number)) return null;
              return (number < 10 ? number.toFixed(1) : number.toFixed(0)) + " ms";
            }

            function renderRequests(data) {
              const requests = Array.isArray(data.requests) ? data.requests : [];
              const recent = requests.slice(-MAX_REQUESTS).reverse();
              const failures = recent.filter(isFailure).length;
              const total = given(data.count) ? data.count : requests.length;
              byId("requests-count").textContent = !requests.length ? ""
                : "newest first" + SEP + "last " + recent.length + " of " + total
                  + (failures ? SEP + failures + (failures === 1 ? " failure" : " failures") : "");
              if (!recent.length) {
                byId("requests").replaceChildren(el("p", { class: "empty", text: "No requests yet." }));
                return;
              }
              const body = el("tbody");
              for (const request of recent) {
                body.append(el("tr", { class: isFailure(request) ? "fail" : null },
                  timeCell(request.time),
                  cell(request.method),
                  pathCell(request.path, "wide"),
                  cell(request.status, "num"),
                  cell(formatMilliseconds(request.durationMilliseconds), "num"),
                  cell(request.user),
                  cell(request.serverErrorCode)));
              }
              const table = el("table", { class: "grid" },
                headRow("Time", "Method", "Path", "Status", "Duration", "User", "Error"), body);
              byId("requests").replaceChildren(table);
            }

            function renderFaults(data) {
              const faults = Array.isArray(data.faults) ? data.faults : [];
              if (!faults.length) {
                byId("faults").replaceChildren(el("p", { class: "empty", text: "none in force" }));
                return;
              }
              const body = el("tbody");
              for (const fault of faults) {
                const retryAfter = given(fault.retryAfter) ? fault.retryAfter + " s" : null;
                const loseResponse = given(fault.loseResponse) ? (fault.loseResponse ? "yes" : "no") : null;
                const remaining = given(fault.remaining) ? fault.remaining : "unlimited";
                body.append(el("tr", { "data-fault-id": fault.id ?? "" },
                  el("td", null, el("code", { text: show(fault.id) })),
                  pathCell(fault.path),
                  cell(fault.recordName),
                  cell(fault.serverErrorCode),
                  cell(fault.status, "num"),
                  cell(retryAfter, "num"),
                  cell(formatMilliseconds(fault.latencyMilliseconds), "num"),
                  cell(loseResponse),
                  cell(remaining, "num")));
              }
              const table = el("table", { class: "grid" },
                headRow("ID", "Path", "Record", "Error", "Status", "Retry after", "Latency", "Lose response",
                  "Remaining"),
                body);
              byId("faults").replaceChildren(table);
            }

            // Refreshing

            function renderErrors() {
              const messages = Object.values(state.errors);
              const banner = byId("error");
              banner.replaceChildren(...messages.map((message) => el("div", { text: message })));
              banner.hidden = !messages.length;
            }

            async function refresh(force) {
              if (state.busy) {
                state.again = true;
                return;
              }
              state.busy = true;
              try {
                delete state.errors.page;
                await Promise.all([
                  load("health", API + "health", renderHealth, healthFailed),
                  load("databases", API + "databases", renderDatabases).then(() => loadRecords(force)),
                  load("requests", API + "requests?limit=" + MAX_REQUESTS, renderRequests),
                  load("faults", API + "faults", renderFaults),
                ]);
                byId("updated").textContent = "updated " + new Date().toLocaleTimeString();
              } catch (error) {
                state.errors.page = "dashboard: " + (error && error.message ? error.message : String(error));
              } finally {
                state.busy = false;
                renderErrors();
              }
              if (state.again) {
                state.again = false;
                refresh();
              }
            }

            byId("refresh").addEventListener("click", () => {
              state.rendered = {};
              refresh(true);
            });

            function showPage() {
              delete state.rendered.records;
              byId("zones").replaceChildren(el("p", { class: "empty", text: "Loading" }));
              loadRecords(true).then(renderErrors);
            }

            byId("database-select").addEventListener("change", (event) => {
              selectDatabase(event.target.value);
              showPage();
            });

            byId("next-page").addEventListener("click", () => {
              if (!state.next) return;
              state.markers.push(state.next);
              state.next = null;
              showPage();
            });

            byId("previous-page").addEventListener("click", () => {
              if (state.markers.length < 2) return;
              state.markers.pop();
              showPage();
            });

            byId("token-form").addEventListener("submit", (event) => {
              event.preventDefault();
              state.token = byId("token-input").value.trim() || null;
              try {
                if (state.token) sessionStorage.setItem(TOKEN_KEY, state.token);
              } catch (error) {
                // Kept in this page only.
              }
              byId("token-input").value = "";
              askForToken(false);
              state.rendered = {};
              refresh(true);
            });

            document.addEventListener("click", (event) => {
              const link = event.target.closest ? event.target.closest("a.ref") : null;
              const target = link ? document.getElementById(link.getAttribute("href").slice(1)) : null;
              if (!target) return;
              event.preventDefault();
              target.scrollIntoView({ behavior: "smooth", block: "center" });
              target.classList.add("flash");
              setTimeout(() => target.classList.remove("flash"), 1200);
            });

            setInterval(() => {
              if (byId("auto-refresh").checked) refresh(false);
            }, REFRESH_MILLISECONDS);
            readToken();
            refresh(true);
          </script>
        </body>
        </html>
        """#
}
