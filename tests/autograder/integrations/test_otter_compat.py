"""The Otter start-up hook: in every wheel, lenient only for this project's plugin, inert under `python -I`."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from autograder.integrations import otter_compat, otter_hook
from autograder.otter_bridge import PLUGIN_NAME
from autograder.worker_runtime import bootstrap

ROOT = Path(__file__).resolve().parents[3]
GOOD = ROOT / "tests" / "fixtures" / "notebooks" / "redefinition.ipynb"  # nbformat and Otter accept it
HOOK_SOURCE = ROOT / "autograder" / "integrations" / "otter_hook.py"
SUBPROCESS_TIMEOUT_S = 600  # each child imports Otter on a loaded machine


def _variant(defect: str, target: Path) -> Path:
    """The good fixture with one thing Otter's reader rejects and the engine reads."""
    notebook = json.loads(GOOD.read_text(encoding="utf-8"))
    if defect == "cell-without-metadata":
        del notebook["cells"][0]["metadata"]
    elif defect in ("otter-string", "otter-list"):
        notebook["metadata"]["otter"] = "hw" if defect == "otter-string" else ["hw"]
    elif defect.startswith("named-"):  # a readable assignment name (Otter's check must still apply)
        notebook["metadata"]["otter"] = {"assignment_name": defect.removeprefix("named-")}
    data = json.dumps(notebook).encode("utf-8")
    target.write_bytes(b"\xef\xbb\xbf" + data if defect in ("bom", "named-hw") else data)
    return target


DEFECTS = ("bom", "cell-without-metadata", "otter-string", "otter-list")
# Runs in a child interpreter: the installed folder becomes a site directory (its .pth runs as at
# start-up), then Otter's runner validates each notebook under each config. Prints a JSON report.
PROBE = """
import json, os, site, sys
site.addsitedir(sys.argv[1])
report = {
    # by the finder's marker: an environment may also hold the hook under an earlier module name
    "hooks": sum(getattr(f, sys.argv[3], False) is True for f in sys.meta_path),
    "imported": sorted(m for m in ("autograder", "otter", "typing") if m in sys.modules),
}
from otter.run.run_autograder.runners import create_runner
os.chdir(sys.argv[2])
configs = {
    "engine": {"plugins": [{sys.argv[4]: {"train": False}}]},
    "engine-named": {"plugins": [sys.argv[4]], "assignment_name": "hw"},
    "other": {"plugins": ["otter.plugins.builtin.GoogleSheetsGradeOverride"]},
    "none": {},
}
for label, config in configs.items():
    runner = create_runner(config)
    for name in sorted(os.listdir(".")):
        try:
            runner.validate_submission(name)
            report[label + ":" + name] = "ok"
        except BaseException as error:
            report[label + ":" + name] = type(error).__name__
print(json.dumps(report))
"""


def _probe(installed_project: Path, folder: Path, *flags: str) -> dict[str, object]:
    arguments = [str(installed_project), str(folder), bootstrap.OTTER_HOOK_MARKER, PLUGIN_NAME]
    done = subprocess.run(
        [sys.executable, *flags, "-c", PROBE, *arguments],
        cwd=folder.parent,  # not the checkout: `autograder` comes from the installed folder
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A submission folder: the good fixture and one variant per defect (and two named ones)."""
    folder = tmp_path_factory.mktemp("otter-compat") / "submission"
    folder.mkdir()
    shutil.copyfile(GOOD, folder / "good.ipynb")
    for defect in (*DEFECTS, "named-hw", "named-other"):
        _variant(defect, folder / f"{defect}.ipynb")
    return folder


def test_the_hook_only_loads_itself_at_start_up_and_is_lenient_only_for_the_engine_plugin(
    installed_project: Path, notebooks: Path
) -> None:
    report = _probe(installed_project, notebooks)
    assert report["hooks"] == 1 and report["imported"] == [], report
    for defect in DEFECTS:
        assert report[f"engine:{defect}.ipynb"] == "ok", report
        for label in ("other", "none"):  # Otter's own reader, unchanged
            assert report[f"{label}:{defect}.ipynb"] != "ok", (label, defect, report)
    for label in ("engine", "other", "none"):
        assert report[f"{label}:good.ipynb"] == "ok", report
    # Otter's assignment-name check stays: the name is read from the notebook leniently (BOM here)
    assert report["engine-named:named-hw.ipynb"] == "ok", report
    assert report["engine-named:named-other.ipynb"] == "OtterRuntimeError", report
    assert report["engine-named:good.ipynb"] == "OtterRuntimeError", report  # declares no name


@pytest.mark.parametrize("flag", ["-I", "-P"])  # -P: the sandboxed worker's (plan.PYTHON_FLAGS)
def test_the_hook_is_inert_in_isolated_interpreters(installed_project: Path, notebooks: Path, flag: str) -> None:
    report = _probe(installed_project, notebooks, flag)
    assert report["hooks"] == 0 and report["imported"] == [], report
    for defect in DEFECTS:  # Otter's reader, even for this project's plugin
        assert report[f"engine:{defect}.ipynb"] != "ok", (defect, report)


def _hook_module(name: str) -> ModuleType:
    """The hook's source loaded as site-packages' copy runs: as a top-level module named `name`."""
    spec = importlib.util.spec_from_file_location(name, HOOK_SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_is_named_after_the_engine_not_an_assignment() -> None:
    assert otter_hook.HOOK_NAME == "autograder_otter_hook" and otter_hook.PTH_NAME == "autograder_otter_hook.pth"
    assert bootstrap.OTTER_STARTUP_HOOK == otter_hook.HOOK_NAME


# An environment installed before the rename may still hold the hook under its earlier name.
@pytest.mark.parametrize("installed_as", [otter_hook.HOOK_NAME, "transformer_mt_otter_hook"])
def test_the_worker_bootstrap_drops_an_installed_hook(monkeypatch: pytest.MonkeyPatch, installed_as: str) -> None:
    module = _hook_module(installed_as)
    monkeypatch.setattr(sys, "meta_path", [module.OtterRunnerHook(), *sys.meta_path])
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "path_hooks", list(sys.path_hooks))
    bootstrap._clean_sys_path({"jail": {"hidden": [], "python_dirs": []}}, "/nonexistent-lib", False)
    assert [f for f in sys.meta_path if type(f).__module__ == installed_as] == []
    assert sys.path[0] == "/nonexistent-lib"


def test_a_hook_left_under_the_earlier_name_adds_no_second_finder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in ("transformer_mt_otter_hook", otter_hook.HOOK_NAME):  # both .pth files run at start-up
        _hook_module(name).install()
    assert sum(getattr(f, "is_otter_runner_hook", False) is True for f in sys.meta_path) == 1


def test_every_wheel_carries_the_hook(installed_project: Path, tmp_path: Path) -> None:
    expected = {otter_hook.PTH_NAME: otter_hook.pth_text().encode("ascii")}
    expected[f"{otter_hook.HOOK_NAME}.py"] = HOOK_SOURCE.read_bytes()
    for name, data in expected.items():  # `pip install .`
        assert (installed_project / name).read_bytes() == data, name
    source = tmp_path / "source"  # `pip install -e .` (`make setup`): the editable wheel
    shutil.copytree(installed_project.parent / "source", source)
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta; print(build_meta.build_editable('dist'))"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with zipfile.ZipFile(source / "dist" / done.stdout.strip().splitlines()[-1]) as wheel:
        for name, data in expected.items():
            assert wheel.read(name) == data, name
        assert any(n.startswith("__editable__") for n in wheel.namelist())


def test_plugin_names() -> None:
    assert otter_compat.ENGINE_PLUGIN == PLUGIN_NAME
    assert otter_compat.uses_engine_plugin([PLUGIN_NAME])
    assert otter_compat.uses_engine_plugin(["other.Plugin", {PLUGIN_NAME: {"train": False}}])
    assert not otter_compat.uses_engine_plugin(["other.Plugin", {"other.Plugin2": {}}])
    assert not otter_compat.uses_engine_plugin(None)
    assert not otter_compat.uses_engine_plugin(PLUGIN_NAME)  # Otter's config holds a list


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b'\xef\xbb\xbf{"metadata": {"otter": {"assignment_name": "hw"}}}', "hw"),
        (b'{"metadata": {"otter": {"assignment_name": 7}}}', None),
        (b'{"metadata": {"otter": "hw"}}', None),
        (b'{"metadata": ["otter"]}', None),
        (b"[]", None),
        (b"\xff\xfe not utf-8", None),
        (b"{", None),
    ],
)
def test_assignment_name_is_read_leniently(data: bytes, name: str | None) -> None:
    assert otter_compat.assignment_name(data) == name
