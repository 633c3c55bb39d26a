"""The evaluator's contract compiled to Python: messages, gRPC stubs and their type stubs.

Every build of the `cardroom` distribution runs it: setuptools' `build_py` and `sdist`
are the commands below (pyproject.toml, `[tool.setuptools.cmdclass]`), which generate
the code beside `evaluator.proto` before they collect the packages, so a wheel, an sdist,
`pip install .` and `pip install git+URL` all carry it. grpcio-tools (protoc) and
mypy-protobuf (the `.pyi` stubs) are build requirements. `make protos` runs this file
as a script, for a tree whose `.proto` changed after its editable install.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from importlib import resources
from pathlib import Path

from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

PROTOS = Path(__file__).resolve().parent
CONTRACT = PROTOS / "cardroom" / "evaluator" / "v1" / "evaluator.proto"
# the generated package's folders: their __init__.py files are generated too
PACKAGES = (
    PROTOS / "cardroom",
    PROTOS / "cardroom" / "evaluator",
    PROTOS / "cardroom" / "evaluator" / "v1",
)
PLUGINS = ("protoc-gen-mypy", "protoc-gen-mypy_grpc")


def plugin_path(name: str) -> str:
    """mypy-protobuf's protoc plugin `name`: on PATH, else beside this interpreter.

    pip's isolated build puts its build requirements' scripts first on PATH; a build
    without isolation, or `make protos`, may run a virtualenv's interpreter without
    activating it, and the plugin is then among that interpreter's scripts.
    """
    folders = (Path(sys.executable).parent, Path(sysconfig.get_path("scripts")))
    found = shutil.which(name) or next(
        (str(folder / name) for folder in folders if (folder / name).is_file()), None
    )
    if found is None:
        raise RuntimeError(f"{name} not found: mypy-protobuf is a build requirement")
    return found


def generate() -> list[Path]:
    """Compile the contract into its package folder; the files written."""
    from grpc_tools import protoc

    well_known = resources.files("grpc_tools") / "_proto"
    arguments = [
        "grpc_tools.protoc",
        f"--proto_path={PROTOS}",
        f"--proto_path={well_known}",
        *(f"--plugin={name}={plugin_path(name)}" for name in PLUGINS),
        f"--python_out={PROTOS}",
        f"--grpc_python_out={PROTOS}",
        f"--mypy_out=quiet:{PROTOS}",
        f"--mypy_grpc_out=quiet:{PROTOS}",
        str(CONTRACT),
    ]
    status = protoc.main(arguments)
    if status != 0:
        raise RuntimeError(f"protoc failed on {CONTRACT.relative_to(PROTOS)} (status {status})")
    for package in PACKAGES:
        (package / "__init__.py").touch()
    return sorted(CONTRACT.parent.glob("*_pb2*.py*"))


class BuildPy(build_py):
    """setuptools' build_py, after the protobuf code is generated (wheels, editable installs)."""

    def run(self) -> None:
        """Generate, then build the packages, the generated modules among them."""
        generate()
        super().run()


class Sdist(sdist):
    """setuptools' sdist, after the protobuf code is generated, so the archive carries it."""

    def run(self) -> None:
        """Generate, then make the archive."""
        generate()
        super().run()


if __name__ == "__main__":
    for written in generate():
        print(f"generated {written.relative_to(PROTOS.parent)}")
