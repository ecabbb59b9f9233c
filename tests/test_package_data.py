"""`pip install .` installs every file of the packages that is not Python (catalogues, schemas, YAML, scripts)."""

import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "assignments", "mtkit")


def _data_files() -> list[str]:
    """The packages' tracked files that are not Python, relative to the checkout."""
    done = subprocess.run(["git", "ls-files", "-z", "--", *PACKAGES], cwd=REPO_ROOT, capture_output=True, timeout=60)
    if done.returncode == 0:
        names = [name for name in done.stdout.decode().split("\0") if name]
    else:  # a copy without .git: every file but compiled ones
        files = (p for package in PACKAGES for p in (REPO_ROOT / package).rglob("*") if p.is_file())
        names = [p.relative_to(REPO_ROOT).as_posix() for p in files if "__pycache__" not in p.parts]
    return sorted(name for name in names if not name.endswith((".py", ".pyc")))


def test_the_installed_packages_carry_every_data_file(installed_project: Path) -> None:
    names = _data_files()
    # The listing reaches each kind the grader reads at run time (else the comparison below proves little).
    for expected in ("autograder/reports/messages/ko.yml", "assignments/transformer_mt/solutions.yml"):
        assert expected in names
    missing = [name for name in names if not (installed_project / name).is_file()]
    assert missing == [], "add them to [tool.setuptools.package-data] in pyproject.toml"
    changed = [name for name in names if (installed_project / name).read_bytes() != (REPO_ROOT / name).read_bytes()]
    assert changed == []
