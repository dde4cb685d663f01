"""Pack an installed collection back into the tarball it was installed from.

    pack_collection.py NAMESPACE.NAME OUT.tar.gz

Looks for the collection where Ansible finds it (ANSIBLE_COLLECTIONS_PATH, then the
collections the `ansible` package ships) and writes MANIFEST.json, FILES.json and every
file and directory FILES.json lists, under the same names as in a Galaxy tarball.
The `ansible` package leaves some of them out (.github/, tests/, ...): FILES.json is
written without those and MANIFEST.json names its new sha256, so the pair stays consistent.
`ansible-galaxy collection install` checks each file against FILES.json's sha256, so a
copy that was changed after it was installed is refused there. Used by scripts/build-ee.sh
to put galaxy.yml's dependencies into the execution environment without a Galaxy server.
"""
import hashlib
import io
import json
import os
import sys
import tarfile


def find(fqcn):
    namespace, name = fqcn.split(".")
    roots = [p for p in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep) if p]
    roots = [os.path.join(r, "ansible_collections") for r in roots]
    try:
        import ansible_collections
        roots += list(ansible_collections.__path__)
    except ImportError:
        pass
    for root in roots:
        path = os.path.join(root, namespace, name)
        if os.path.isfile(os.path.join(path, "MANIFEST.json")):
            return path
    sys.exit("pack_collection: %s is not installed as a collection (MANIFEST.json) in %s"
             % (fqcn, ", ".join(roots) or "no collections path"))


def _add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def pack(path, out):
    with open(os.path.join(path, "FILES.json")) as f:
        files = json.load(f)
    with open(os.path.join(path, "MANIFEST.json")) as f:
        manifest = json.load(f)
    files["files"] = [e for e in files["files"]
                      if e["name"] == "." or os.path.lexists(os.path.join(path, e["name"]))]
    files_json = json.dumps(files, indent=4).encode()
    manifest["file_manifest_file"]["chksum_sha256"] = hashlib.sha256(files_json).hexdigest()
    with tarfile.open(out, "w:gz") as tar:
        _add_bytes(tar, "MANIFEST.json", json.dumps(manifest, indent=4).encode())
        _add_bytes(tar, "FILES.json", files_json)
        for entry in files["files"]:
            if entry["name"] != ".":
                tar.add(os.path.join(path, entry["name"]), arcname=entry["name"], recursive=False)
    info = manifest["collection_info"]
    return "%s.%s %s" % (info["namespace"], info["name"], info["version"])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(pack(find(sys.argv[1]), sys.argv[2]))
