#!/usr/bin/env python3
"""Lists the public API of each library module and compares it with the committed list in API/, so that growth
of the public surface is a decision, not a side effect.

The lists come from the symbol graphs the documentation step extracts (scripts/build-docs.sh writes them under
.build/<triple>/extracted-symbols/main/); run that first. Each line is a public declaration: its path
(Type.member) and its declaration as Swift spells it, sorted, so a diff shows exactly what was added, removed or
changed.

    python3 scripts/check-public-api.py           # fails, with the diff, when the API differs from API/*.txt
    python3 scripts/check-public-api.py --update  # writes API/*.txt: commit them with the change that meant it

Code behind `#if canImport(CloudKit)` isn't compiled on Linux, so the Apple bridge's API isn't in these lists; the
bridge is type-checked against stand-ins by scripts/check-apple-bridge.sh.
"""
import difflib
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = [
    "NestedCloudKitCodable", "NestedCloudKitServer", "NestedCloudKitMacros", "NestedCloudKitSQLite",
    "NestedCloudKitWebServices", "NestedCloudKitSync", "NestedCloudKitEmulator",
]


def graph_directory(module):
    candidates = glob.glob(os.path.join(ROOT, ".build", "*", "extracted-symbols", "*", module))
    candidates = [c for c in candidates if glob.glob(os.path.join(c, "*.symbols.json"))]
    if not candidates:
        return None
    # The newest extraction, if the build holds several (another triple, another package name).
    return max(candidates, key=os.path.getmtime)


def declarations(module):
    directory = graph_directory(module)
    if directory is None:
        sys.exit(f"check-public-api: no symbol graph of {module}; run scripts/build-docs.sh first")
    lines = set()
    for path in sorted(glob.glob(os.path.join(directory, "*.symbols.json"))):
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        # An extension graph (Module@Other.symbols.json) extends another module's types: name them with it.
        extended = os.path.basename(path)[: -len(".symbols.json")].partition("@")[2]
        for symbol in graph.get("symbols", []):
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            name = ".".join(symbol.get("pathComponents") or [symbol.get("names", {}).get("title", "?")])
            if extended:
                name = f"{extended}.{name}"
            declaration = "".join(fragment.get("spelling", "") for fragment in symbol.get("declarationFragments", []))
            lines.add(f"{name}: {' '.join(declaration.split())}")
    return sorted(lines)


def main():
    update = "--update" in sys.argv[1:]
    api_dir = os.path.join(ROOT, "API")
    changed = []
    for module in MODULES:
        current = declarations(module)
        path = os.path.join(api_dir, f"{module}.txt")
        text = "".join(line + "\n" for line in current)
        if update:
            os.makedirs(api_dir, exist_ok=True)
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
            print(f"{module}: {len(current)} public declarations written to API/{module}.txt")
            continue
        committed = open(path, encoding="utf-8").read().splitlines() if os.path.exists(path) else []
        if committed != current:
            changed.append(module)
            diff = difflib.unified_diff(committed, current, f"API/{module}.txt (committed)", f"{module} (built)",
                                        lineterm="", n=0)
            print("\n".join(diff))
        else:
            print(f"{module}: {len(current)} public declarations, as committed")
    if changed:
        sys.exit(
            f"\ncheck-public-api: the public API of {', '.join(changed)} changed (above). If that is meant, run "
            "python3 scripts/check-public-api.py --update and commit API/ with the change, saying why it grows.")


if __name__ == "__main__":
    main()
