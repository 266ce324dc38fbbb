#!/usr/bin/env python3
"""Writes a one-layer container image archive from files of this machine, for scripts/release.sh.

The layer holds each --file SRC=DEST (symbolic links followed, mode kept), each --dir, and, for
every ELF file among them, its shared libraries as `ldd` resolves them here (the dynamic loader
included), so the image runs the same binaries this machine runs. Every file that a Debian package
installed is traced to its package: the layer gets that package's copyright file under
/usr/share/doc/<package>/ and one line `<package> <version>` in
/usr/share/doc/antrea-rs/debian-packages.txt.

The archive is an OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/...`: the layer,
the image configuration and the manifest, each named by its SHA-256), which `ctr images import`
and `nerdctl load` read, plus Docker's `manifest.json` naming the same blobs, which `docker load`
reads. Owners are root, every time stamp is --mtime and entries are sorted, so the same inputs
give the same digests.

Usage: oci-image.py --out FILE --name REF [--name REF...] [--label K=V...] [--env K=V...]
                    [--cmd "ARG ..."] [--mtime SECONDS] [--dir PATH...] --file SRC=DEST...
"""

import argparse
import datetime
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def shared_libraries(path):
    """The absolute paths `ldd` resolves for `path`; a library it cannot find is an error."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True)
    if out.returncode != 0:
        # A static executable: ldd says so and exits 1.
        if "not a dynamic executable" in out.stdout + out.stderr:
            return []
        sys.exit(f"oci-image: ldd {path} failed: {out.stderr.strip()}")
    libraries = []
    for line in out.stdout.splitlines():
        if "not found" in line:
            sys.exit(f"oci-image: {path}: {line.strip()}")
        match = re.search(r"(/\S+) \(0x", line)
        if match:
            libraries.append(match.group(1))
    return libraries


def debian_package(path):
    """The Debian package that installed `path` (its real path or its own name), if any."""
    for candidate in dict.fromkeys([path, os.path.realpath(path)]):
        out = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        if out.returncode == 0:
            # "package[:arch]: /path"; diversions and several owners are not expected here.
            return out.stdout.split(":", 1)[0].split(",")[0].strip()
    return None


def package_version(package):
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


class Layer:
    """A deterministic tar of directories and regular files, parents made as needed."""

    def __init__(self, mtime):
        self.mtime = mtime
        self.entries = {}  # image path (no leading /) -> (mode, bytes or None for a directory)

    def dir(self, path):
        parts = [part for part in path.strip("/").split("/") if part]
        for i in range(1, len(parts) + 1):
            self.entries.setdefault("/".join(parts[:i]), (0o755, None))

    def file(self, src, dest):
        dest = dest.strip("/")
        with open(src, "rb") as f:
            data = f.read()
        previous = self.entries.get(dest)
        if previous is not None and previous[1] != data:
            sys.exit(f"oci-image: two different files for /{dest}")
        self.dir(os.path.dirname(dest))
        self.entries[dest] = (os.stat(src).st_mode & 0o777, data)

    def text(self, dest, text):
        dest = dest.strip("/")
        self.dir(os.path.dirname(dest))
        self.entries[dest] = (0o644, text.encode())

    def tar(self):
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(self.entries):
                mode, data = self.entries[name]
                info = tarfile.TarInfo(name)
                info.mode, info.mtime, info.uid, info.gid = mode, self.mtime, 0, 0
                info.uname = info.gname = "root"
                if data is None:
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return out.getvalue()


def blob(data):
    """The archive path of a blob."""
    return "blobs/sha256/" + sha256(data).split(":", 1)[1]


def key_value(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not K=V")
    return tuple(text.split("=", 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", action="append", required=True, help="image reference")
    parser.add_argument("--label", action="append", default=[], type=key_value)
    parser.add_argument("--env", action="append", default=[], type=key_value)
    parser.add_argument("--cmd", default="", help="the default command, split like a shell")
    parser.add_argument("--mtime", type=int, default=0)
    parser.add_argument("--dir", action="append", default=[])
    parser.add_argument("--file", action="append", required=True, type=key_value, help="SRC=DEST")
    args = parser.parse_args()

    layer = Layer(args.mtime)
    for path in args.dir:
        layer.dir(path)
    host_files = []  # (host path, image path), libraries after the files that need them
    for src, dest in args.file:
        host_files.append((src, dest))
        if is_elf(src):
            host_files += [(lib, lib) for lib in shared_libraries(src)]
    packages = {}
    for src, dest in host_files:
        layer.file(src, dest)
        package = debian_package(src)
        if package is not None and package not in packages:
            packages[package] = package_version(package)
            copyright_file = f"/usr/share/doc/{package}/copyright"
            if os.path.exists(copyright_file):
                layer.file(copyright_file, copyright_file)
    layer.text(
        "/usr/share/doc/antrea-rs/debian-packages.txt",
        "".join(f"{p} {v}\n" for p, v in sorted(packages.items())),
    )

    tar = layer.tar()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    created = datetime.datetime.fromtimestamp(args.mtime, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    config = {
        "architecture": arch,
        "os": "linux",
        "created": created,
        "config": {
            "Env": [f"{k}={v}" for k, v in args.env],
            "Cmd": shlex.split(args.cmd),
            "WorkingDir": "/",
            "Labels": dict(args.label),
        },
        "rootfs": {"type": "layers", "diff_ids": [sha256(tar)]},
        "history": [{"created": created, "created_by": "scripts/oci-image.py (scripts/release.sh)"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": sha256(config_bytes),
            "size": len(config_bytes),
        },
        "layers": [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": sha256(tar),
                "size": len(tar),
            }
        ],
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": manifest["mediaType"],
                "digest": sha256(manifest_bytes),
                "size": len(manifest_bytes),
                "annotations": {
                    "io.containerd.image.name": name,
                    "org.opencontainers.image.ref.name": name,
                },
            }
            for name in args.name
        ],
    }
    docker_manifest = [
        {
            "Config": blob(config_bytes),
            "RepoTags": [re.sub(r"^docker\.io/", "", name) for name in args.name],
            "Layers": [blob(tar)],
        }
    ]

    archive = Layer(args.mtime)
    archive.text("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}))
    archive.text("index.json", json.dumps(index, sort_keys=True))
    archive.text("manifest.json", json.dumps(docker_manifest, sort_keys=True))
    for data in (tar, config_bytes, manifest_bytes):
        archive.entries[blob(data)] = (0o644, data)
    archive.dir("blobs/sha256")
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(archive.tar())
    os.replace(tmp, args.out)
    print(
        f"oci-image: {args.out}: {len(dict(host_files))} files from this machine, "
        f"{len(packages)} Debian packages, layer {len(tar)} bytes, manifest {sha256(manifest_bytes)}"
    )


if __name__ == "__main__":
    main()
