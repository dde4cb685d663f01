"""Fail when any trace of a secret appears in the given files.

Looks for every 16-byte window of the raw secret (so a partial dump counts), its base64
(whole, and each 48-byte aligned block as it would appear inside longer base64), and its
hex. Prints which file holds which kind of trace, never the secret itself.

usage: python scan_for_secrets.py SECRET_FILE [SECRET_FILE...] -- FILE [FILE...]
exit 0: clean; 1: a trace was found; 2: usage error.
"""

import base64
import binascii
import sys


def patterns(secret):
    found = []
    for start in range(0, max(1, len(secret) - 15), 8):
        found.append(("raw bytes", secret[start:start + 16]))
    found.append(("base64", base64.b64encode(secret)))
    for start in range(0, len(secret) - 47, 48):
        found.append(("base64 block", base64.b64encode(secret[start:start + 48])))
    found.append(("hex", binascii.hexlify(secret[:32])))
    return found


def main(argv):
    if "--" not in argv:
        print(__doc__)
        return 2
    split = argv.index("--")
    secrets, files = argv[:split], argv[split + 1:]
    if not secrets or not files:
        print(__doc__)
        return 2
    hits = 0
    for secret_file in secrets:
        with open(secret_file, "rb") as handle:
            secret = handle.read()
        checks = patterns(secret)
        for path in files:
            with open(path, "rb") as handle:
                data = handle.read()
            kinds = sorted({kind for kind, needle in checks if needle in data})
            if kinds:
                hits += 1
                print("LEAK: %s holds %s of %s" % (path, ", ".join(kinds), secret_file))
    print("scanned %d file(s) for %d secret(s): %s" % (len(files), len(secrets), "LEAKS FOUND" if hits else "clean"))
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
