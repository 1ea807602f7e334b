#!/usr/bin/env python3
"""Checks NestedCloudKitCodable.podspec against the repository: each subspec's source glob matches every source
file of its modules (Core: the core, Server: the simulated server and the rules it applies) and nothing else, its version is the CHANGELOG's newest, and its deployment targets are
Package.swift's platforms. Exits non-zero, saying what is wrong, otherwise prints a closing line."""
import glob
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
podspec = open("NestedCloudKitCodable.podspec").read()
failures = []
passed = 0


def check(condition, message):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(message)


def expand(pattern):
    """A CocoaPods glob's `{a,b}` alternatives, which Python's glob doesn't read, as one pattern each."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    return [alternative for choice in match.group(1).split(",")
            for alternative in expand(pattern[:match.start()] + choice + pattern[match.end():])]


def value(name):
    match = re.search(r"s\.%s\s*=\s*'([^']*)'" % re.escape(name), podspec)
    return match.group(1) if match else None


for subspec, variable, modules in [("Core", "core", ["NestedCloudKitCodable"]),
                                  ("Server", "server", ["NestedCloudKitRules", "NestedCloudKitServer"])]:
    match = re.search(r"s\.subspec '%s' do \|%s\|(.*?)\n  end" % (subspec, variable), podspec, re.DOTALL)
    check(match is not None, f"the podspec has no subspec '{subspec}'")
    if not match:
        continue
    glob_match = re.search(r"%s\.source_files\s*=\s*'([^']*)'" % variable, match.group(1))
    check(glob_match is not None, f"subspec '{subspec}' has no source_files")
    if not glob_match:
        continue
    pattern = glob_match.group(1)
    matched = {path for alternative in expand(pattern) for path in glob.glob(alternative, recursive=True)}
    sources = {path for module in modules for path in glob.glob(f"Sources/{module}/**/*.swift", recursive=True)}
    check(len(matched) > 0, f"subspec '{subspec}': source_files '{pattern}' matches no file")
    check(matched == sources, f"subspec '{subspec}': source_files '{pattern}' doesn't match {'+'.join(modules)}'s sources "
          f"exactly: missing {sorted(sources - matched)[:5]}, extra {sorted(matched - sources)[:5]}")
check("s.default_subspecs = 'Core'" in podspec, "the podspec's default subspec must be Core: apps ship the core alone")

uses_package_access = any(re.search(r"^\s*package\s+(struct|protocol|func|static|var|let|init|enum|final|class)\b", open(f).read(), re.MULTILINE)
                          for f in glob.glob("Sources/NestedCloudKit*/**/*.swift", recursive=True)
                          if f.startswith(("Sources/NestedCloudKitCodable/", "Sources/NestedCloudKitRules/",
                                                       "Sources/NestedCloudKitServer/")))
if uses_package_access:
    check("-package-name NestedCloudKitCodable" in podspec,
          "the core declares `package` API, so the podspec must pass -package-name NestedCloudKitCodable to swiftc")

version = value("version")
changelog = open("CHANGELOG.md").read()
newest = re.search(r"^## .*?(\d+\.\d+\.\d+)", changelog, re.MULTILINE)
check(newest is not None, "the CHANGELOG names no version")
if newest:
    check(version == newest.group(1), f"the podspec's version {version} isn't the CHANGELOG's newest, {newest.group(1)}")

package = open("Package.swift").read()
for pod_platform, spm_platform in [("ios", "iOS"), ("osx", "macOS"), ("tvos", "tvOS"), ("watchos", "watchOS"), ("visionos", "visionOS")]:
    declared = value(f"{pod_platform}.deployment_target")
    required = re.search(r"\.%s\(\.v(\d+)\)" % spm_platform, package)
    check(declared is not None and required is not None and declared.split(".")[0] == required.group(1),
          f"{pod_platform} deployment target {declared} doesn't match Package.swift's {spm_platform} "
          f"{required.group(1) if required else 'none'}")

check(os.path.exists("Cartfile"), "there is no Cartfile")
check(os.path.exists(value("license") or "LICENSE"), "the license file is missing")

for failure in failures:
    print("FAILED:", failure)
print(f"podspec: {passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
