#!/usr/bin/env python3
"""Lists the public API of each library module and compares it with the committed list in API/, so that growth
of the public surface is a decision, not a side effect.

The lists come from the symbol graphs the documentation step extracts (scripts/build-docs.sh writes them under
.build/<triple>/extracted-symbols/main/); run that first. Each line is a public declaration: its path
(Type.member) and its declaration as Swift spells it, sorted, so a diff shows exactly what was added, removed or
changed.

    python3 scripts/check-public-api.py           # fails, with the diff, when the API differs from API/*.txt
    python3 scripts/check-public-api.py --update  # writes API/*.txt: commit them with the change that meant it

`--package` does the same for the `package` declarations, the seam the modules share (a new storage meets it, the
servers and the store build on it), against API/package/*.txt, from the symbol graphs of
`swift package dump-symbol-graph --minimum-access-level package` (under .build/<triple>/symbolgraph/): run that
first.

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
# Modules without a product, whose every declaration is internal or `package`: watched in the package lists only.
PACKAGE_ONLY_MODULES = ["NestedCloudKitRules"]


def graph_files(module, package):
    """The symbol graph files of a module: the documentation step's (public), or dump-symbol-graph's (package)."""
    if package:
        directories = glob.glob(os.path.join(ROOT, ".build", "*", "symbolgraph"))
        pattern = lambda directory: [os.path.join(directory, f"{module}.symbols.json")] + glob.glob(
            os.path.join(directory, f"{module}@*.symbols.json"))
    else:
        directories = glob.glob(os.path.join(ROOT, ".build", "*", "extracted-symbols", "*", module))
        pattern = lambda directory: glob.glob(os.path.join(directory, "*.symbols.json"))
    candidates = [directory for directory in directories if os.path.exists(pattern(directory)[0])]
    if not candidates:
        return None
    # The newest extraction, if the build holds several (another triple, another package name).
    return sorted(path for path in pattern(max(candidates, key=os.path.getmtime)) if os.path.exists(path))


def declarations(module, package):
    paths = graph_files(module, package)
    if paths is None:
        step = "swift package dump-symbol-graph --minimum-access-level package" if package else "scripts/build-docs.sh"
        sys.exit(f"check-public-api: no symbol graph of {module}; run {step} first")
    levels = ("package",) if package else ("public", "open")
    lines = set()
    for path in paths:
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        # An extension graph (Module@Other.symbols.json) extends another module's types: name them with it.
        extended = os.path.basename(path)[: -len(".symbols.json")].partition("@")[2]
        for symbol in graph.get("symbols", []):
            if symbol.get("accessLevel") not in levels:
                continue
            name = ".".join(symbol.get("pathComponents") or [symbol.get("names", {}).get("title", "?")])
            if extended:
                name = f"{extended}.{name}"
            declaration = "".join(fragment.get("spelling", "") for fragment in symbol.get("declarationFragments", []))
            lines.add(f"{name}: {' '.join(declaration.split())}")
    return sorted(lines)


def main():
    update = "--update" in sys.argv[1:]
    package = "--package" in sys.argv[1:]
    level = "package" if package else "public"
    api_dir = os.path.join(ROOT, "API", "package") if package else os.path.join(ROOT, "API")
    shown = os.path.relpath(api_dir, ROOT)
    changed = []
    for module in MODULES + (PACKAGE_ONLY_MODULES if package else []):
        current = declarations(module, package)
        path = os.path.join(api_dir, f"{module}.txt")
        text = "".join(line + "\n" for line in current)
        if update:
            os.makedirs(api_dir, exist_ok=True)
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
            print(f"{module}: {len(current)} {level} declarations written to {shown}/{module}.txt")
            continue
        committed = open(path, encoding="utf-8").read().splitlines() if os.path.exists(path) else []
        if committed != current:
            changed.append(module)
            diff = difflib.unified_diff(committed, current, f"{shown}/{module}.txt (committed)", f"{module} (built)",
                                        lineterm="", n=0)
            print("\n".join(diff))
        else:
            print(f"{module}: {len(current)} {level} declarations, as committed")
    if changed:
        flags = " --package" if package else ""
        sys.exit(
            f"\ncheck-public-api: the {level} API of {', '.join(changed)} changed (above). If that is meant, run "
            f"python3 scripts/check-public-api.py{flags} --update and commit {shown}/ with the change, saying why "
            "it grows.")


if __name__ == "__main__":
    main()
