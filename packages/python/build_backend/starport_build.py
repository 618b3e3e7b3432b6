"""A minimal PEP 517 / PEP 660 build backend for the `starport` package, standard library only.

pip builds a package in an isolated environment holding only the backend's `requires`; with
setuptools there it would have to download it, which fails offline. This backend needs
nothing: it zips `src/starport` into a pure-Python wheel (PEP 427) whose metadata comes from
pyproject.toml's [project] table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "src", "starport")
TAG = "py3-none-any"


def project() -> dict:
    """pyproject.toml's [project] table (tomllib from 3.11; simple `key = "value"` lines before)."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        raw = handle.read()
    try:
        import tomllib

        return tomllib.loads(raw.decode("utf-8"))["project"]
    except ImportError:
        section = raw.decode("utf-8").split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"\s*$', section, re.M))


def metadata() -> str:
    p = project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in p.get("classifiers", []) if isinstance(c, str)]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as handle:
            body = handle.read()
    return "\n".join(lines) + "\n\n" + body


def _names() -> tuple[str, str]:
    p = project()
    return p["name"], p["version"]


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = metadata().encode("utf-8")
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: starport_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    ).encode()
    files[f"{dist_info}/top_level.txt"] = b"starport\n"
    record = [_record_line(path, data) for path, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{name}-{version}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return filename


def _package_files() -> dict[str, bytes]:
    files = {}
    for entry in sorted(os.listdir(SOURCE)):
        if entry.endswith(".py") or entry == "py.typed":
            with open(os.path.join(SOURCE, entry), "rb") as handle:
                files[f"starport/{entry}"] = handle.read()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # PEP 660: a .pth file that puts src/ on sys.path.
    return _write_wheel(wheel_directory, {"starport_editable.pth": (os.path.join(ROOT, "src") + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for top in ("pyproject.toml", "README.md", "build_backend", "src"):
            path = os.path.join(ROOT, top)
            if os.path.exists(path):
                sdist.add(path, arcname=f"{base}/{top}", filter=lambda info: None if "__pycache__" in info.name else info)
        pkg_info = metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        sdist.addfile(info, io.BytesIO(pkg_info))
    return filename
