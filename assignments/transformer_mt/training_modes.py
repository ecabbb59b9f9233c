"""The training part's modes (grader.yml training.mode): one strategy class each, in one table.

A mode decides where the weights the trusted side scores come from: trained by the grader with
the profile (`recipe`), trained with the notebook's hyperparameter cell (`student_hparams`), or
loaded from a file submitted beside the notebook (`checkpoint`). `run_training_part`
(assignments.transformer_mt.training_part) drives every mode through `TrainingMode`; a new mode is one subclass
added to `TRAINING_MODES`, plus its messages (`training.method.<name>`,
`training.low_bleu_hint.<name>`) in the catalogue.
"""

# The table is also read where only the mode's facts are needed (results_store, the Otter bridge),
# in processes that never load torch: so this module imports only light modules at the top, and
# each method imports the sandbox, torch and mtkit pieces it runs with.

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assignments.transformer_mt.checkpoint_file import SubmittedCheckpoint, find_checkpoint
from autograder.i18n import t
from autograder.progress import training_progress

if TYPE_CHECKING:
    from assignments.transformer_mt.settings import TrainingConfig
    from assignments.transformer_mt.student_hparams import CellSettings
    from autograder.config import GraderConfig
    from autograder.sandbox import StudentError, Worker, WorkerFailure
    from mtkit.dataset import PreparedData

TRAINING_SESSION = "mtkit.worker_training:TrainingSession"
CHECKPOINT_SESSION = "mtkit.worker_checkpoint:CheckpointSession"
MODEL_FUNCTIONS = ("Transformer", "create_padding_mask_for_attention", "create_look_ahead_mask_for_attention")


class TrainingMode(ABC):
    """Where the scored weights come from; `run_training_part` calls these steps in order.

    find_checkpoint -> settings -> hparams / shown_profile / method -> start_session -> (fit check
    by the caller) -> evaluate. Errors from the worker propagate; the caller words them
    (`failure_key`, `refusal`).
    """

    name: ClassVar[str]
    # Notebook names required; the worker's session takes them in this order, as globals.
    needed: ClassVar[tuple[str, ...]] = (*MODEL_FUNCTIONS, "calculate_loss")
    session_class: ClassVar[str] = TRAINING_SESSION  # the worker-side session `start_session` opens
    submits_checkpoint: ClassVar[bool] = False  # a file beside the notebook belongs to the submission
    failure_key: ClassVar[str] = "training.failed.training"  # message when evaluate fails

    def find_checkpoint(self, submission: Path, training: TrainingConfig) -> SubmittedCheckpoint | None:
        """The submitted weights this mode loads (raises `CheckpointRefused` when unusable).

        Args:
            submission: the submitted notebook.
            training: grader.yml's training section.

        Returns:
            The checkpoint, or None for a mode that trains.
        """
        return None

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        """The hyperparameters of this run: the profile's, or the notebook's where the mode reads them.

        Args:
            worker: the training worker holding the submission.
            profile: the training profile's hyperparameters.
            config: the validated configuration.

        Returns:
            The settings, with `problem` set when the notebook's values cannot be used.
        """
        from assignments.transformer_mt.student_hparams import CellSettings

        return CellSettings(dict(profile))

    def hparams(self, settings: CellSettings) -> dict[str, Any]:
        """The hyperparameters the model (and, when training, the recipe) use.

        Args:
            settings: from `settings`.

        Returns:
            Hyperparameters by name.
        """
        return settings.hparams

    def shown_profile(self, hparams: dict[str, Any]) -> dict[str, Any] | None:
        """The recipe the report shows.

        Args:
            hparams: from `hparams`.

        Returns:
            The hyperparameters sorted by name, or None when nothing is trained.
        """
        return {k: hparams[k] for k in sorted(hparams)}

    @abstractmethod
    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        """How the weights were made, for the student.

        Args:
            profile_name: the training profile's name.
            settings: from `settings`.
            checkpoint: from `find_checkpoint`.

        Returns:
            One sentence in the current language.
        """

    def start_session(
        self,
        worker: Worker,
        hparams: dict[str, Any],
        model_args: list[Any],
        data: PreparedData,
        config: GraderConfig,
        checkpoint: SubmittedCheckpoint | None,
    ) -> int:
        """Build the student's model in the worker (a `ModelSession` with `logits` and `translate`).

        Every session takes the notebook's `needed` names, the model's arguments, the mode's own
        arguments (`session_args`), the training threads and the padding index.

        Args:
            worker: the training worker.
            hparams: from `hparams`.
            model_args: the `Transformer(...)` arguments.
            data: the prepared corpus.
            config: the validated configuration.
            checkpoint: from `find_checkpoint`.

        Returns:
            The session's handle.
        """
        from assignments.transformer_mt.settings import training_settings
        from autograder.sandbox import Global
        from mtkit.constants import PAD_IDX

        own = self.session_args(hparams, data, config, checkpoint)
        threads = training_settings(config).threads
        return worker.new(
            self.session_class,
            [*[Global(name) for name in self.needed], model_args, *own, threads, PAD_IDX],
            seed=config.grading.seed,
        )

    @abstractmethod
    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        """The mode's own arguments of its worker session (between the model's and the threads).

        Args:
            hparams: from `hparams`.
            data: the prepared corpus.
            config: the validated configuration.
            checkpoint: from `find_checkpoint`.

        Returns:
            The arguments, in the session's order.
        """

    @abstractmethod
    def evaluate(
        self,
        worker: Worker,
        session: int,
        hparams: dict[str, Any],
        data: PreparedData,
        budget_s: float,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        """Produce the final weights and score them on the trusted side.

        Args:
            worker: the training worker.
            session: from `start_session`.
            hparams: from `hparams`.
            data: the prepared corpus.
            budget_s: the profile's time budget.
            details: the report details; a training mode adds its curve and history.

        Returns:
            The evaluation (assignments.transformer_mt.training_eval.evaluate_weights).
        """

    def refusal(self, error: StudentError | WorkerFailure) -> str | None:
        """Whether an error at session start means the submission is not gradable (not a skip).

        Args:
            error: raised while the session started.

        Returns:
            The reason the part is not graded, or None when the error is an ordinary skip.
        """
        return None


class RecipeMode(TrainingMode):
    """The grader trains the student's model with the profile's sizes and recipe."""

    name = "recipe"

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        return t("training.method.recipe", profile=profile_name)

    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        from assignments.transformer_mt.settings import training_settings
        from mtkit.training import recipe_from_profile
        from mtkit.worker_training import flatten

        target = training_settings(config).threshold_bleu
        recipe = recipe_from_profile(hparams, seed=config.grading.seed, target_bleu=target)
        src_flat, src_len = flatten(data.splits["train"].src)
        tgt_flat, tgt_len = flatten(data.splits["train"].tgt)
        return [dict(vars(recipe)), float(hparams["label_smoothing"]), src_flat, src_len, tgt_flat, tgt_len]

    def evaluate(
        self,
        worker: Worker,
        session: int,
        hparams: dict[str, Any],
        data: PreparedData,
        budget_s: float,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        evaluation, curve, summary = train_and_evaluate(
            worker,
            session,
            hparams,
            data,
            timeout_s=budget_s * 1.25 + 60,
            budget_s=budget_s,
            bar_bleu=details.get("threshold_bleu"),
        )
        details["bleu_curve"] = curve
        if summary is not None:
            details["training"] = {k: summary[k] for k in ("step", "epochs", "stop_reason", "wall_s")}
            details["history"] = json.loads(summary["history"])
        return evaluation


class StudentHparamsMode(RecipeMode):
    """The grader trains with the notebook's hyperparameter cell (within training.hparam_bounds)."""

    name = "student_hparams"

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        from assignments.transformer_mt.student_hparams import CELL_NAMES

        return read_settings(worker, CELL_NAMES, profile, config)

    def hparams(self, settings: CellSettings) -> dict[str, Any]:
        from assignments.transformer_mt.student_hparams import student_recipe

        return student_recipe(settings)

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        return t("training.method.student_hparams", settings=settings.summary(), profile=profile_name)


class CheckpointMode(TrainingMode):
    """No training: the weights submitted beside the notebook, loaded into the student's model."""

    name = "checkpoint"
    needed = MODEL_FUNCTIONS
    session_class = CHECKPOINT_SESSION
    submits_checkpoint = True
    failure_key = "training.failed.evaluation"

    def find_checkpoint(self, submission: Path, training: TrainingConfig) -> SubmittedCheckpoint | None:
        return find_checkpoint(submission, training.checkpoint_names, training.checkpoint_max_mb)

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        from assignments.transformer_mt.student_hparams import MODEL_NAMES

        return read_settings(worker, MODEL_NAMES, profile, config)

    def shown_profile(self, hparams: dict[str, Any]) -> dict[str, Any] | None:
        return None  # a checkpoint only uses the model sizes (hyperparameters)

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        assert checkpoint is not None  # find_checkpoint returned it
        return t(
            "training.method.checkpoint", name=checkpoint.name, size_mb=checkpoint.size_mb, settings=settings.summary()
        )

    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        import torch

        assert checkpoint is not None  # find_checkpoint returned it
        data_bytes = torch.frombuffer(bytearray(checkpoint.data), dtype=torch.uint8)  # (N,) the file
        return [data_bytes, checkpoint.name]

    def evaluate(
        self,
        worker: Worker,
        session: int,
        hparams: dict[str, Any],
        data: PreparedData,
        budget_s: float,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        from assignments.transformer_mt.training_eval import evaluate_weights

        return evaluate_weights(worker, session, hparams, data, with_test=True)

    def refusal(self, error: StudentError | WorkerFailure) -> str | None:
        # The worker's loader refuses a file that is not weights only: the submission, not the code, is at fault.
        if getattr(error, "exc_type", "") == "CheckpointError":
            return getattr(error, "message", "")
        return None


TRAINING_MODES: dict[str, TrainingMode] = {
    mode.name: mode for mode in (RecipeMode(), StudentHparamsMode(), CheckpointMode())
}


def training_mode(name: str) -> TrainingMode:
    """The strategy for grader.yml's training.mode.

    Args:
        name: a key of `TRAINING_MODES` (config validation allows no other).

    Returns:
        The mode.
    """
    return TRAINING_MODES[name]


def read_settings(
    worker: Worker, names: tuple[str, ...], profile: dict[str, Any], config: GraderConfig
) -> CellSettings:
    """The notebook's hyperparameter cell (`names`), checked against training.hparam_bounds.

    Args:
        worker: the training worker holding the submission.
        names: the cell's names this mode uses.
        profile: the profile's hyperparameters (for names the cell leaves out).
        config: the validated configuration.

    Returns:
        The settings.
    """
    from assignments.transformer_mt.settings import training_settings
    from assignments.transformer_mt.student_hparams import apply_cell, read_cell

    described = read_cell(worker, names, timeout_s=config.worker.timeout_s)
    return apply_cell(profile, described, training_settings(config).hparam_bounds, names)


class TrainingBudgetSpent(Exception):
    """The training part went past the trusted side's own budget (wall clock or evaluations)."""

    def __init__(self, seconds: float, evaluations: int) -> None:
        super().__init__(f"over the training part's budget ({seconds:g} s, {evaluations} evaluations)")
        self.seconds, self.evaluations = seconds, evaluations


def part_deadline_s(budget_s: float) -> float:
    """The wall-clock limit of the whole training loop, trusted evaluations included.

    The worker's own clock counts the pauses (the trusted evaluations) towards the profile's
    budget and stops at the first evaluation boundary past it; a segment between pauses is bounded
    by the request timeout (1.25 budget + 60 s). An honest run therefore ends within budget +
    one segment + the final evaluation; this leaves a margin above that.

    Args:
        budget_s: the profile's time_budget_s.
    Returns:
        seconds.
    """
    return 2.5 * budget_s + 120


def evaluation_allowance(hparams: dict[str, Any], train_lengths: list[int]) -> int:
    """The most pauses for evaluation an honest run of these hyperparameters makes (mtkit.training:
    per epoch, or every eval_every_steps steps from eval_start_step on, plus one at the end).

    The step count is bounded from above from the batching rules (mtkit.batching: a batch holds
    batch_size rows, or at least max_tokens // longest rows; each pool may end with a smaller one).

    Args:
        hparams: the run's hyperparameters (the recipe's fields).
        train_lengths: each training pair's padded length, max(len(src), len(tgt)).
    Returns:
        the number of trusted evaluations the loop allows (the final one not counted).
    """
    from mtkit.recipe import Recipe

    epochs = int(hparams.get("max_epochs", Recipe.max_epochs))
    every = int(hparams.get("eval_every_steps", Recipe.eval_every_steps))
    if every <= 0:
        return epochs + 1
    pairs = max(1, len(train_lengths))
    batch_size = int(hparams.get("batch_size") or 0)
    max_tokens = int(hparams.get("max_tokens") or 0)
    rows = batch_size if batch_size > 0 else pairs
    if max_tokens > 0:
        rows = min(rows, max(1, max_tokens // max(1, max(train_lengths, default=1))))
    pool = max(1, int(hparams.get("pool_size") or Recipe.pool_size))
    steps = epochs * (-(-pairs // rows) + -(-pairs // pool))
    max_steps = int(hparams.get("max_steps") or 0)
    if max_steps > 0:
        steps = min(steps, max_steps)
    start = max(int(hparams.get("eval_start_step", Recipe.eval_start_step)), 1)
    return max(0, steps - start) // every + 2


def train_and_evaluate(
    worker: Worker,
    session: int,
    hparams: dict[str, Any],
    data: PreparedData,
    timeout_s: float,
    budget_s: float,
    bar_bleu: float | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """Drive the worker's training: at every pause measure BLEU and report it back.

    Training stops at the first pause whose weights do not fit the reference architecture (no
    later step can earn points, see assignments.transformer_mt.training_eval). The trusted side
    bounds the whole loop itself (`part_deadline_s`, `evaluation_allowance`): a worker that
    pauses at once, again and again, cannot make it evaluate without end. With `bar_bleu`, a
    pause first scores a fixed subset of the validation split and scores the whole split only
    when that estimate is not far below the bar (training_eval.ESTIMATE_GATE): a run far from the
    bar pays a fraction of an evaluation per pause. Only whole-split BLEU decides: the final
    weights are always scored on the whole split, and an estimate (below half the bar) cannot stop a run at the bar.

    Args:
        worker: the training worker.
        session: a TrainingSession's handle.
        hparams: the run's hyperparameters.
        data: the prepared corpus.
        timeout_s: limit of one training request.
        budget_s: the profile's time_budget_s.
        bar_bleu: the pass bar (None: every pause scores the whole split).

    Returns:
        (evaluation of the final weights with the test split, BLEU curve [{step, epochs, bleu}, with
        "estimate_of" (sentences scored) on the pauses that only scored the subset],
        training summary, or None when training was stopped because the weights do not fit).

    Raises:
        TrainingBudgetSpent: the loop went past its wall-clock limit or evaluation count.
    """
    import time

    from assignments.transformer_mt.training_eval import NOT_FITTED, evaluate_weights

    train = data.splits["train"]
    allowed = evaluation_allowance(hparams, [max(len(s), len(t)) for s, t in zip(train.src, train.tgt, strict=True)])
    limit_s = part_deadline_s(budget_s)
    deadline = time.monotonic() + limit_s

    def remaining_s() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TrainingBudgetSpent(limit_s, allowed)
        return left

    curve: list[dict[str, Any]] = []
    while True:
        event = worker.run(session, "forward", [], mode="train", timeout_s=min(timeout_s, remaining_s()))
        if event["done"]:
            break
        if len(curve) >= allowed:
            raise TrainingBudgetSpent(limit_s, allowed)
        remaining_s()
        measured = evaluate_weights(worker, session, hparams, data, gate_bar=bar_bleu)
        point = {"step": event["step"], "epochs": event["epochs"], "bleu": measured["bleu"]}
        if measured.get("estimate"):
            point["estimate_of"] = measured["n_sentences"]
        curve.append(point)
        shown = {"bleu": float(measured["bleu"]), "n": measured["n_sentences"]}
        training_progress(
            event["step"], t(f"training.progress.{'estimate' if 'estimate_of' in point else 'whole_split'}", **shown)
        )
        if measured["evaluated_by"] == NOT_FITTED:
            return measured, curve, None
        worker.run(
            session, "report_bleu", [float(measured["bleu"])], mode="train", timeout_s=min(timeout_s, remaining_s())
        )
    remaining_s()
    final = evaluate_weights(worker, session, hparams, data, with_test=True)
    if curve and curve[-1]["step"] == event["step"] and "estimate_of" in curve[-1]:
        curve.pop()  # the whole split has now scored these weights
    if not (curve and curve[-1]["step"] == event["step"]):  # else the last pause measured these weights
        curve.append({"step": event["step"], "epochs": event["epochs"], "bleu": final["bleu"]})
    return final, curve, event
