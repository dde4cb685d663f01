"""Fail when any trace of a secret appears in the given files.

Looks for every 16-byte window of the raw secret (so a partial dump counts), its base64
(whole, and each 48-byte aligned block as it would appear inside longer base64), and its
hex. Prints which file holds which kind of trace, never the secret itself.

And its base64 text inside base64, as the Metal3 user-data Secret holds slurm.key: the Secret
(roles/metal3_hosts, plugins/module_utils/metal3.py user_data_secret) holds base64(document),
and the document (filter worker_user_data, plugins/module_utils/cloud_init.py) holds the key
as its base64 text (write_files content, encoding b64). How that text is encoded again depends
on its byte offset in the document modulo 3, its alignment: "base64 in base64 (alignment N)"
is the base64 of the key's base64 text (each 64-char block of it: so also when the text was
given wrapped in lines of 64 chars or more), cut to start on a 3-byte boundary of a document
that holds the text at an offset of N modulo 3.

usage: python scan_for_secrets.py SECRET_FILE [SECRET_FILE...] -- FILE [FILE...]
exit 0: clean; 1: a trace was found; 2: usage error.
"""

import base64
import binascii
import sys


def base64_blocks(secret):
    """(start, text): the secret's base64 text in 64-char blocks (whole when shorter), the base64
    of its 48-byte blocks: the first line of the text wrapped in lines of 64 chars or more holds
    the first block whole."""
    text = base64.b64encode(secret)
    return [(start, text[start:start + 64]) for start in range(0, max(1, len(text) - 63), 64)]


def patterns(secret):
    found = []
    for start in range(0, max(1, len(secret) - 15), 8):
        found.append(("raw bytes", secret[start:start + 16]))
    found.append(("base64", base64.b64encode(secret)))
    for start in range(0, len(secret) - 47, 48):
        found.append(("base64 block", base64.b64encode(secret[start:start + 48])))
    found.append(("hex", binascii.hexlify(secret[:32])))
    for start, text in base64_blocks(secret):
        for cut in range(3):
            # text[cut:] starts on a 3-byte boundary of the document when the secret's base64 starts at
            # an offset of -(start + cut) modulo 3 there; only whole 3-byte groups encode the same anywhere
            inner = text[cut:cut + (len(text) - cut) // 3 * 3]
            if inner:
                found.append(("base64 in base64 (alignment %d)" % (-(start + cut) % 3), base64.b64encode(inner)))
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
