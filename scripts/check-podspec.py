#!/usr/bin/env python3
"""Checks NestedCloudKitCodable.podspec against the repository: its source glob matches every source file of the
core module (and nothing else), its version is the CHANGELOG's newest, and its deployment targets are
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


def value(name):
    match = re.search(r"s\.%s\s*=\s*'([^']*)'" % re.escape(name), podspec)
    return match.group(1) if match else None


pattern = value("source_files")
check(pattern is not None, "the podspec has no s.source_files")
if pattern:
    matched = set(glob.glob(pattern, recursive=True))
    sources = set(glob.glob("Sources/NestedCloudKitCodable/**/*.swift", recursive=True))
    check(len(matched) > 0, f"s.source_files '{pattern}' matches no file")
    check(matched == sources, f"s.source_files '{pattern}' doesn't match the core's sources exactly: "
          f"missing {sorted(sources - matched)[:5]}, extra {sorted(matched - sources)[:5]}")

uses_package_access = any(re.search(r"^\s*package\s+(struct|protocol|func|static|var|let|init|enum|final|class)\b", open(f).read(), re.MULTILINE)
                          for f in glob.glob("Sources/NestedCloudKitCodable/**/*.swift", recursive=True))
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
