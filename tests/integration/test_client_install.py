"""The SDK as its users get it: its wheel alone in a fresh virtualenv, against a real gateway.

The wheel is built (as `pip wheel` builds it) from a copy of `clients/python`, so the
folder builds on its own. For each interpreter the package supports and the machine has
(CPython 3.9 to 3.13, on PATH or pyenv's, and Debian's PyPy 3.9), a new virtualenv gets
the wheel and httpx, its one dependency, and nothing else. There nothing of the server
can be imported, and `clients/python/examples/first_deal.py` plays a whole Guts deal,
two new players each through a client of their own key, against gunicorn on the
session's Redis and evaluator. Each virtualenv's size and
packages are written to var/reports/client_install_<interpreter>.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from tests.support.processes import GunicornGateway, RedisProcess, gateway_on

REPORTS = Path(__file__).resolve().parents[2] / "var" / "reports"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
EXAMPLE = CLIENT / "examples" / "first_deal.py"
SERVER_MODULES = (
    "flask",
    "werkzeug",
    "gunicorn",
    "gevent",
    "redis",
    "grpc",
    "google.protobuf",
    "numpy",
    "api",
    "evaluator",
    "cardroom",
)
PIP_TIMEOUT = 600

# Run by the virtualenv's interpreter, isolated (-I: no current directory, no user site,
# no PYTHON* variables on sys.path): what is importable and installed there, as JSON.
# With no argument, only the names of the distributions installed.
PROBE = r"""
import importlib.util, json, re, sys
from importlib import metadata, resources

def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()

installed = {canonical(dist.metadata["Name"]): dist for dist in metadata.distributions()}
if len(sys.argv) == 1:
    print(json.dumps(sorted(installed)))
    sys.exit()

import cardroom_client

needed, todo = set(), ["cardroom-client"]
while todo:
    name = todo.pop()
    if name in needed or name not in installed:
        continue
    needed.add(name)
    for requirement in installed[name].requires or ():
        if "extra ==" not in requirement.partition(";")[2]:
            todo.append(canonical(re.match(r"[A-Za-z0-9._-]+", requirement).group()))

def importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False

info = metadata.metadata("cardroom-client")
print(json.dumps({
    "python": sys.version.split()[0],
    "prefix": sys.prefix,
    "module": cardroom_client.__file__,
    "version": cardroom_client.__version__,
    "metadata_version": info["Version"],
    "requires": [
        canonical(re.match(r"[A-Za-z0-9._-]+", requirement).group())
        for requirement in metadata.requires("cardroom-client")
        if "extra ==" not in requirement
    ],
    "requires_python": info["Requires-Python"],
    "classifiers": info.get_all("Classifier"),
    "typed": resources.files("cardroom_client").joinpath("py.typed").is_file(),
    "installed": sorted(installed),
    "needed": sorted(needed),
    "importable": [module for module in sys.argv[1:] if importable(module)],
}))
"""


def run(command: list[str | Path], cwd: Path) -> str:
    """Run a command to its end; its standard output (the whole output if it fails)."""
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env={key: value for key, value in os.environ.items() if not key.startswith("PYTHON")},
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


def size_of(directory: Path) -> int:
    """The bytes of every file under `directory` (symbolic links counted as links)."""
    return sum(
        (Path(folder) / name).lstat().st_size
        for folder, _, names in os.walk(directory)
        for name in names
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cardroom-client's wheel, built from a copy of the folder (the tree stays clean)."""
    work = tmp_path_factory.mktemp("client-build")
    source = work / "python"
    shutil.copytree(
        CLIENT,
        source,
        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".*"),
    )
    run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", "wheels", source], work
    )
    (built,) = (work / "wheels").glob("cardroom_client-*.whl")
    return built


@pytest.fixture(scope="module")
def gateway(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GunicornGateway]:
    """A gunicorn gateway on a free port, on the session's Redis (emptied) and evaluator."""
    with gateway_on(
        redis_process,
        evaluator_address,
        tmp_path_factory.mktemp("gateway") / "gunicorn.log",
        workers=1,
        CLOCK_INTERVAL="0.1",
        LOG_LEVEL="warning",
    ) as server:
        yield server


# what an interpreter says it is, and whether it can make a virtualenv (Debian's own
# Pythons keep venv and ensurepip in separate packages)
IDENTIFY = (
    "import ensurepip, platform, sys, venv;"
    " print(platform.python_implementation(), *sys.version_info[:2])"
)
INTERPRETERS = [
    *(("python", "CPython", minor) for minor in range(9, 14)),
    ("pypy", "PyPy", 9),
]


def find_python(name: str, implementation: str, minor: int) -> Path | None:
    """An interpreter `{name}3.{minor}` or `{name}3` (on PATH, else pyenv's) that is that one."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates: list[str | Path | None] = [
        shutil.which(f"{name}3.{minor}"),
        shutil.which(f"{name}3"),
        *sorted(pyenv.glob(f"3.{minor}.*/bin/{name}3.{minor}")),
    ]
    for candidate in candidates:
        if candidate is None:
            continue
        check = subprocess.run(
            [str(candidate), "-c", IDENTIFY],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if check.returncode == 0 and check.stdout.split() == [implementation, "3", str(minor)]:
            return Path(candidate)
    return None


@pytest.mark.parametrize(
    ("name", "implementation", "minor"),
    INTERPRETERS,
    ids=[f"{name}3.{minor}" for name, _, minor in INTERPRETERS],
)
def test_the_wheel_alone_in_a_fresh_virtualenv_plays_a_deal(
    name: str,
    implementation: str,
    minor: int,
    wheel: Path,
    gateway: GunicornGateway,
    tmp_path: Path,
) -> None:
    interpreter = find_python(name, implementation, minor)
    if interpreter is None:
        where = "pyenv install" if name == "python" else "apt-get install pypy3 pypy3-venv"
        pytest.skip(f"no {implementation} 3.{minor} with venv on this machine ({where})")
    version = f"3.{minor}."
    venv = tmp_path / "venv"
    run([interpreter, "-m", "venv", venv], tmp_path)
    python = venv / "bin" / "python"
    # what the interpreter's venv holds before anything is installed: pip, setuptools, and
    # PyPy's own (cffi, greenlet, hpy, readline)
    seeds = set(json.loads(run([python, "-I", "-c", PROBE], tmp_path)))
    empty = size_of(venv)
    # the same httpx as the server's tests use, so the wheel is tried with a known release
    httpx = f"httpx=={metadata.version('httpx')}"
    run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, httpx],
        tmp_path,
    )

    found = json.loads(run([python, "-I", "-c", PROBE, *SERVER_MODULES], tmp_path))
    assert found["importable"] == [], "the server is importable beside the SDK"
    assert found["module"].startswith(found["prefix"]), "cardroom_client is not the installed wheel"
    assert set(found["installed"]) - seeds == set(found["needed"])
    assert {"cardroom-client", "httpx"} <= set(found["needed"])
    assert found["requires"] == ["httpx"]
    assert found["version"] == found["metadata_version"]
    assert found["requires_python"] == ">=3.9"
    assert found["typed"]
    supported = {f"Programming Language :: Python :: 3.{n}" for n in range(9, 14)}
    assert supported <= set(found["classifiers"])
    assert found["python"].startswith(version)

    deal = json.loads(run([python, "-I", EXAMPLE, gateway.url], tmp_path))
    assert deal["implementation"] == implementation
    assert deal["python"] == found["python"]
    assert deal["refused"] == "already_declared"
    assert deal["outcome"] in ("won", "split")
    assert deal["chips"] == 200
    assert set(deal["fairness"]) == {"ann", "bo"}
    assert all(
        any("announced" in check for check in checks) for checks in deal["fairness"].values()
    )
    assert all(isinstance(chips, int) for chips in deal["cashed_out"].values())
    # the server's own view of the table the SDK played at: both seats gone
    table = gateway.http.call("GET", f"/v1/tables/{deal['table']}").get_json()
    assert table["seats"] == {}
    assert table["hand_number"] == deal["hand_number"]

    figures = {
        "interpreter": f"{implementation} {found['python']}",
        "packages": len(found["installed"]),
        "packages_added": sorted(set(found["installed"]) - seeds),
        "installed": found["installed"],
        "bytes": size_of(venv),
        "bytes_added": size_of(venv) - empty,
    }
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"client_install_{name}3.{minor}.json").write_text(json.dumps(figures, indent=2))
