"""Builds a small conda package from a staged prefix, as conda-build and conda-package-handling 2.x write one.

    python3 conda_package.py ROOT NAME OUT_DIR        -> OUT_DIR/NAME.tar.bz2 and OUT_DIR/NAME.conda
    python3 conda_package.py --check PACKAGE          -> checks a package as conda would, prints a JSON report

Only the standard library and the zstd program (conda-package-handling's own zstandard module may be absent).
info/paths.json: one row per file (paths_version 1, json.dump indent=2 sort_keys as conda-build writes it),
sha256 and size_in_bytes of hard links, path_type softlink for symbolic links. .tar.bz2: tarfile w:bz2 (level 9),
info/ first. .conda: a stored zip of metadata.json, pkg-NAME.tar.zst and info-NAME.tar.zst (zstd -19), in
cph 2.x's order (pkg before info), with its fixed zip timestamp.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile


def files_of(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if not rel.startswith("info/"):
                out.append(rel)
    return sorted(out)


def write_info(root, name):
    files = files_of(root)
    rows = []
    for rel in files:
        path = os.path.join(root, rel)
        if os.path.islink(path):
            rows.append({"_path": rel, "path_type": "softlink", "sha256": hashlib.sha256(os.readlink(path).encode()).hexdigest(), "size_in_bytes": len(os.readlink(path))})
        else:
            data = open(path, "rb").read()
            rows.append({"_path": rel, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(), "size_in_bytes": len(data)})
    os.makedirs(os.path.join(root, "info"), exist_ok=True)
    with open(os.path.join(root, "info", "paths.json"), "w") as f:
        json.dump({"paths": rows, "paths_version": 1}, f, indent=2, sort_keys=True)
    with open(os.path.join(root, "info", "files"), "w") as f:
        f.write("\n".join(files) + "\n")
    pkg, version, build = name.rsplit("-", 2)
    with open(os.path.join(root, "info", "index.json"), "w") as f:
        json.dump({"arch": "x86_64", "build": build, "build_number": 0, "depends": [], "license": "MIT", "name": pkg, "platform": "linux", "subdir": "linux-64", "timestamp": 1700000000000, "version": version}, f, indent=2, sort_keys=True)
    return files


def add(tar, root, rel):
    info = tar.gettarinfo(os.path.join(root, rel), arcname=rel)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 1700000000
    if info.isreg():
        with open(os.path.join(root, rel), "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def tar_bytes(root, names):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in names:
            add(tar, root, rel)
    return buffer.getvalue()


def zstd(data):
    return subprocess.run(["zstd", "-19", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


def build(root, name, out_dir):
    files = write_info(root, name)
    info = sorted("info/" + f for f in os.listdir(os.path.join(root, "info")))
    with tarfile.open(os.path.join(out_dir, name + ".tar.bz2"), "w:bz2", format=tarfile.PAX_FORMAT) as tar:
        for rel in info + files:
            add(tar, root, rel)
    with zipfile.ZipFile(os.path.join(out_dir, name + ".conda"), "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
        for member, names in (("pkg-%s.tar.zst" % name, files), ("info-%s.tar.zst" % name, info)):
            z.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), zstd(tar_bytes(root, names)))


def tars_of(path):
    """The package's tars as (label, bytes of the decoded tar, compressed bytes)."""
    if path.endswith(".tar.bz2"):
        raw = open(path, "rb").read()
        subprocess.run(["bzip2", "-t"], input=raw, check=True)
        return [("tar.bz2", subprocess.run(["bzip2", "-dc"], input=raw, stdout=subprocess.PIPE, check=True).stdout, raw)]
    out = []
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None, "zip CRC"
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED, info.filename
            if info.filename.endswith(".tar.zst"):
                raw = z.read(info)
                subprocess.run(["zstd", "-t", "-q"], input=raw, check=True)
                out.append((info.filename, subprocess.run(["zstd", "-dcq"], input=raw, stdout=subprocess.PIPE, check=True).stdout, raw))
    return out


def check(path):
    """Every paths.json row against the file the package holds (conda's safety check), and what each tar holds."""
    members = {}
    paths_json = None
    report = {"tars": [], "entries": {}}
    for label, data, _ in tars_of(path):
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            names = []
            for info in tar.getmembers():
                names.append(info.name)
                body = tar.extractfile(info).read() if info.isreg() else None
                report["entries"][info.name] = {"type": info.type.decode(), "mode": info.mode, "mtime": info.mtime, "uid": info.uid, "gid": info.gid,
                                                "uname": info.uname, "gname": info.gname, "linkname": info.linkname, "pax": info.pax_headers,
                                                "sha256": hashlib.sha256(body).hexdigest() if body is not None else None, "size": len(body) if body is not None else None}
                if info.name == "info/paths.json":
                    paths_json = body.decode()
                elif info.isreg():
                    members[info.name] = body
                elif info.issym():
                    members[info.name] = info.linkname.encode()
            report["tars"].append({"label": label, "names": names})
    rows = json.loads(paths_json)
    assert rows["paths_version"] == 1
    bad = []
    for row in rows["paths"]:
        body = members.get(row["_path"])
        if body is None:
            bad.append(row["_path"] + ": missing")
        elif row.get("path_type", "hardlink") == "hardlink" and (hashlib.sha256(body).hexdigest() != row["sha256"] or len(body) != row["size_in_bytes"]):
            bad.append(row["_path"] + ": sha256/size differ")
    report["pathsJson"] = paths_json
    report["rowsChecked"] = len(rows["paths"])
    report["bad"] = bad
    return report


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        print(json.dumps(check(sys.argv[2])))
    else:
        build(sys.argv[1], sys.argv[2], sys.argv[3])
