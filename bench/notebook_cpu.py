"""Benchmark: the student notebook's CPU setting, run as a student runs it (time to BLEU >= 0.2, evaluation time)."""

# What runs: the master notebook with its solution filled in, as `otter assign` writes it for the
# autograder (assignments/transformer_mt/build.py), executed top to bottom in a fresh Jupyter kernel
# with CUDA hidden: data preparation, the public checks, the training cell with the notebook's own
# hyperparameters (the CPU setting) and its in-training evaluations, the plot and the section-5
# evaluation. One extra cell at the end times `evaluate_bleu(model, valid_split)` once more and
# prints what this script reports; two one-line cells around the training cell read the kernel's
# CPU time (all threads), which a busy shared machine inflates far less than wall time. Nothing
# of the notebook's code is replaced.

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # inherited by the kernel, before torch starts

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/notebook_cpu.py` from anywhere

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from assignments.transformer_mt import build  # noqa: E402

MARKER = "BENCH_RESULT"
REPORT_CELL = """
import json as _json, os as _os, time as _time
_started, _eval_cpu0 = _time.perf_counter(), _time.process_time()
_bleu, _ = evaluate_bleu(model, valid_split)
_eval_s = _time.perf_counter() - _started
if %(save)r:
    torch.save(model.state_dict(), %(save)r)
print(%(marker)r + " " + _json.dumps({
    "bleu_log": bleu_log, "final_bleu": _bleu, "eval_s": _eval_s, "threads": torch.get_num_threads(),
    "train_cpu_s": _bench_train_cpu, "eval_cpu_s": _time.process_time() - _eval_cpu0,
    "device": str(device), "hparams": {name: globals()[name] for name in (
        "embedding_dim", "feed_forward_dim", "num_layers", "num_heads", "batch_size", "drop_prob",
        "learning_rate", "epochs", "warmup_steps", "eval_start_step", "eval_every_steps", "target_bleu")},
    "steps_per_epoch": len(list(make_batches(train_split, batch_size, seed=0)))}))
"""
# First-line fragments that identify the cells whose wall time is reported.
TIMED_CELLS = {
    "data preparation": "data = prepare_data(",
    "training cell": "losses = train(",
    "section-5 evaluation cell": "bleu, hypotheses = evaluate_bleu(model, valid_split)",
}


def cell_seconds(cell: nbformat.NotebookNode) -> float | None:
    """Wall time of an executed cell from nbclient's timing metadata."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def run(workdir: Path, env: dict[str, str], save: str, seed: int | None = None) -> tuple[nbformat.NotebookNode, dict]:
    """Build the solution notebook and execute it with the report cell appended.

    With a seed, the training cell's `torch.manual_seed(0)` takes that seed instead (the model's
    initial weights; the batches' order is seeded by the epoch).

    Returns:
        The executed notebook and the report cell's JSON.
    """
    notebook_path = build.run_assign(workdir) / "autograder" / build.MASTER.name
    notebook = nbformat.read(notebook_path, as_version=4)
    training = next(
        i for i, c in enumerate(notebook.cells) if c.cell_type == "code" and TIMED_CELLS["training cell"] in c.source
    )
    if seed is not None:
        seeded = notebook.cells[training].source.replace("torch.manual_seed(0)", f"torch.manual_seed({seed})")
        if seeded == notebook.cells[training].source:
            raise SystemExit("the training cell has no torch.manual_seed(0) to replace")
        notebook.cells[training].source = seeded
    notebook.cells[training + 1 : training + 1] = [
        nbformat.v4.new_code_cell("_bench_train_cpu = __import__('time').process_time() - _bench_cpu0")
    ]
    notebook.cells.insert(training, nbformat.v4.new_code_cell("_bench_cpu0 = __import__('time').process_time()"))
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT_CELL % {"save": save, "marker": MARKER}))
    client = NotebookClient(
        notebook,
        timeout=3600,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(notebook_path.parent)}},
    )
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for output in notebook.cells[-1].get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(MARKER + " "):
                return notebook, json.loads(line[len(MARKER) + 1 :])
    raise SystemExit("the report cell printed nothing")


def main() -> int:
    """Run the notebook once and print the measurements.

    Returns:
        0 when the notebook reached BLEU >= 0.2, else 1.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--warm-cache", action="store_true", help="reuse the normal prepared-data cache instead of a cold one"
    )
    parser.add_argument("--save", default="", help="also save the trained weights (state_dict) to this file")
    parser.add_argument("--seed", type=int, help="the model's initial weights' seed (default: the notebook's, 0)")
    args = parser.parse_args()
    if not os.environ.get("MULTI30K_DIR"):
        print("note: MULTI30K_DIR is not set, so the notebook downloads Multi30k", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="notebook-cpu-") as scratch:
        env = {"CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"}
        if not args.warm_cache:
            env["MTKIT_CACHE_DIR"] = str(Path(scratch) / "cache")
        load_before = os.getloadavg()
        started = time.perf_counter()
        notebook, report = run(Path(scratch), env, str(Path(args.save).resolve()) if args.save else "", args.seed)
        total = time.perf_counter() - started
        load_after = os.getloadavg()
    timed = {
        name: next((cell_seconds(c) for c in notebook.cells if c.cell_type == "code" and fragment in c.source), None)
        for name, fragment in TIMED_CELLS.items()
    }
    print("=== student notebook, CPU setting ===")
    print(
        f"load average (1/5/15 min) before {'/'.join(f'{x:.1f}' for x in load_before)}, after "
        f"{'/'.join(f'{x:.1f}' for x in load_after)}; {os.cpu_count()} CPUs, kernel torch threads "
        f"{report['threads']}, device {report['device']} (load above the CPU count means a shared, busy machine)"
    )
    print(f"settings: {json.dumps(report['hparams'])}; {report['steps_per_epoch']} steps per epoch")
    for name, seconds in timed.items():
        print(f"  {name}: {seconds:.1f} s" if seconds is not None else f"  {name}: not found")
    for step, seconds, bleu in report["bleu_log"]:
        print(f"  step {step:4d}: BLEU {bleu:.4f} at {seconds:.1f} s of training (evaluations included)")
    reached = [(step, seconds) for step, seconds, bleu in report["bleu_log"] if bleu >= 0.2]
    if reached:
        print(
            f"time to BLEU >= 0.2: {reached[0][1]:.1f} s of training (step {reached[0][0]}); "
            f"with data preparation {reached[0][1] + (timed['data preparation'] or 0):.1f} s"
        )
    else:
        print("BLEU 0.2 NOT reached")
    print(f"training cell CPU time (kernel process, all threads): {report['train_cpu_s']:.1f} s")
    print(
        f"evaluation of the full validation split (evaluate_bleu, timed again after the notebook): "
        f"{report['eval_s']:.1f} s wall, {report['eval_cpu_s']:.1f} s CPU, BLEU {report['final_bleu']:.4f}"
    )
    print(f"whole notebook incl. otter assign and kernel start: {total:.1f} s")
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
