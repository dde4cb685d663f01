# Install the Go toolchain the Kubernetes tier builds with, the way `go` itself switches
# toolchains (GOTOOLCHAIN): the module golang.org/toolchain@v0.0.1-go<VERSION>.<os>-<arch>
# from the Go module proxy, checked against its go.sum hash before anything is unpacked,
# then unpacked under the cache with the executable bits module zips do not carry.
# No Go is needed to run this (a fresh Debian 12 has none new enough: golang-go is 1.19).
#
#   python3 scripts/go_toolchain.py DEST   -> prints the bin directory of the Go to build with:
#                                             the `go` on PATH when it is at least GO_VERSION
#                                             (a system Go new enough is left alone and used),
#                                             else DEST/go<VERSION>/bin, installed if missing.
#
# The version and hashes are pinned here, in one place. The hashes are the "h1:" lines of
# go.sum (golang.org/x/mod/sumdb/dirhash Hash1), as recorded by the checksum database
# sum.golang.org; to move to another version, take them from `go mod download -json
# golang.org/toolchain@v0.0.1-go<VERSION>.linux-<arch>` ("Sum") on a machine with Go.
import base64
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import urllib.request
import zipfile

GO_VERSION = "1.26.8"
SUMS = {
    "linux-amd64": "h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=",
    "linux-arm64": "h1:sYL/O6MqS68ML0kjsQ36WoYIpJqkw60TxizWUYUKQMc=",
}
ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def hash1(zf):
    """go.sum's h1 hash of a module zip: SHA-256 over 'sha256hex  name' lines, sorted by name."""
    lines = []
    for name in sorted(zf.namelist()):
        if name.endswith("/"):
            continue
        lines.append("%s  %s\n" % (hashlib.sha256(zf.read(name)).hexdigest(), name))
    return "h1:" + base64.b64encode(hashlib.sha256("".join(lines).encode()).digest()).decode()


def proxy_url():
    """The first proxy of GOPROXY (default proxy.golang.org), as `go` would try it."""
    for entry in os.environ.get("GOPROXY", "https://proxy.golang.org").replace("|", ",").split(","):
        if entry.startswith(("https://", "http://")):
            return entry.rstrip("/")
    sys.exit("go_toolchain: ERROR: GOPROXY=%r names no proxy to download the toolchain from" % os.environ["GOPROXY"])


def version_tuple(text):
    match = re.match(r"go(\d+)\.(\d+)(?:\.(\d+))?$", text.strip())
    return tuple(int(part or 0) for part in match.groups()) if match else None


def system_go():
    """The bin directory of the `go` on PATH when it is at least GO_VERSION, else None."""
    go = shutil.which("go")
    if not go:
        return None
    try:
        out = subprocess.run([go, "env", "GOVERSION", "GOROOT"], check=True, capture_output=True, text=True,
                             env=dict(os.environ, GOTOOLCHAIN="local")).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    have = version_tuple(out[0]) if len(out) == 2 else None
    if have is None or have < version_tuple("go" + GO_VERSION):
        return None
    return os.path.join(out[1], "bin")


def main(dest):
    found = system_go()
    if found:
        print(found)
        return
    target = "linux-" + ARCHES.get(platform.machine(), platform.machine())
    if target not in SUMS:
        sys.exit("go_toolchain: ERROR: no pinned Go %s toolchain for %s (pinned: %s)" % (GO_VERSION, target, ", ".join(SUMS)))
    root = os.path.join(dest, "go" + GO_VERSION)
    if os.path.exists(os.path.join(root, ".verified")):
        print(os.path.join(root, "bin"))
        return
    version = "v0.0.1-go%s.%s" % (GO_VERSION, target)
    url = "%s/golang.org/toolchain/@v/%s.zip" % (proxy_url(), version)
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryFile(dir=dest) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=120) as resp:
                shutil.copyfileobj(resp, tmp)
        except OSError as exc:
            sys.exit("go_toolchain: ERROR: cannot download the Go %s toolchain from %s: %s" % (GO_VERSION, url, exc))
        with zipfile.ZipFile(tmp) as zf:
            got = hash1(zf)
            if got != SUMS[target]:
                sys.exit("go_toolchain: ERROR: %s has hash %s, go.sum says %s: refused" % (url, got, SUMS[target]))
            prefix = "golang.org/toolchain@%s/" % version
            shutil.rmtree(root, ignore_errors=True)
            for info in zf.infolist():
                if not info.filename.startswith(prefix) or ".." in info.filename.split("/"):
                    sys.exit("go_toolchain: ERROR: unexpected path %r in %s" % (info.filename, url))
                rel = info.filename[len(prefix):]
                path = os.path.join(root, rel)
                if info.filename.endswith("/"):
                    os.makedirs(path, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with zf.open(info) as src, open(path, "wb") as out:
                    shutil.copyfileobj(src, out)
                # What cmd/go/internal/toolchain does after unpacking: bin/ and pkg/tool/ are programs.
                if rel.startswith("bin/") or rel.startswith("pkg/tool/"):
                    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    open(os.path.join(root, ".verified"), "w").close()
    print(os.path.join(root, "bin"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 scripts/go_toolchain.py DEST")
    main(sys.argv[1])
