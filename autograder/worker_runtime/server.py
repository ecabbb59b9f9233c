"""The worker's request loop: runs student statements in a module namespace and answers the grader's requests."""

from __future__ import annotations

import contextlib
import copy
import gc
import importlib
import os
import random
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from . import library_calls, protocol
from .protocol import EncodeError, ValueReader, ValueWriter, pack_frame, read_frame, write_all
from .statements import StatementRunner, describe_exception, is_memory_error

EXIT_REPLY_FAILED = 86


class RequestError(Exception):
    """The request itself is wrong (unknown op, stale handle): the grader's problem, not the student's."""


class StudentFault(Exception):
    """A student mistake found by the runtime rather than raised by student code."""

    def __init__(self, exc_type: str, message: str) -> None:
        super().__init__(message)
        self.exc_type = exc_type


def plain_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """Args: any tensor (maybe a student subclass). Returns: a plain, dense, contiguous CPU copy/view."""
    with torch._C.DisableTorchFunctionSubclass():  # a subclass's overrides must not run here
        plain = tensor if type(tensor) is torch.Tensor else torch.Tensor.as_subclass(tensor, torch.Tensor)
        plain = plain.detach()
        if plain.layout != torch.strided:
            plain = plain.to_dense()
        plain = plain.resolve_conj().resolve_neg().to("cpu").contiguous()
        return plain if type(plain) is torch.Tensor else torch.Tensor._make_subclass(torch.Tensor, plain)


def _only_cpu_to_seed() -> bool:
    """Whether torch has no device but the CPU to seed: no accelerator built in, no custom backend.

    torch.manual_seed then seeds the CPU generator alone, after queueing for each accelerator a
    deferred seeding that can never run, with the caller's formatted stack; in a worker, whose
    runtime files are not where their code says, formatting it costs about 0.7 ms per request.
    """
    try:
        other_devices = (
            torch.backends.cuda.is_built()
            or torch.backends.mps.is_built()
            or torch.xpu._is_compiled()
            or torch.mtia._is_compiled()
            or hasattr(torch, torch._C._get_privateuse1_backend_name())
        )
    except AttributeError:  # a torch without one of these: seed as torch.manual_seed does
        return False
    return not other_devices


def seed_everything(seed: int) -> None:
    """Args: seed for torch (all devices), `random` and, when imported, numpy."""
    random.seed(seed)
    if _only_cpu_to_seed():
        torch.default_generator.manual_seed(int(seed))  # all that torch.manual_seed does here
    else:
        torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


class Server:
    """Owns the student namespace and the objects built for the grader (by handle)."""

    def __init__(self, request_fd: int, reply_fd: int, device: str) -> None:
        """Args: request/reply pipe fds; device that incoming tensors are moved to."""
        self.request_fd, self.reply_fd = request_fd, reply_fd
        self.device = torch.device(device)
        module = types.ModuleType("submission")  # not "__main__": `if __name__ == "__main__"` stays off
        sys.modules["submission"] = module
        self.namespace = module.__dict__
        self.statements = StatementRunner(self.namespace)
        self.handles: dict[int, Any] = {}
        self.baseline: dict[str, Any] = {}
        self.helpers: dict[str, Any] = {}
        self.request_id: Any = None

    def serve(self) -> None:
        """Answer requests until the grader closes the request pipe."""
        while True:
            frame = read_frame(self.request_fd)
            if frame is None:
                return
            header, tensors = frame
            self.request_id = header.get("id")
            reply, out_tensors = self.dispatch(header, tensors)
            self.send(reply, out_tensors)

    def send(self, reply: dict[str, Any], tensors: dict[str, torch.Tensor]) -> None:
        """Write a reply; if it cannot be packed, say why instead (or exit when memory is gone)."""
        base = {"id": self.request_id, "where": ""}
        try:
            frame = pack_frame(reply, tensors)
        except MemoryError:
            tensors.clear()
            gc.collect()
            try:
                frame = pack_frame({**base, "status": "oom", "message": "no memory left to reply"}, {})
            except BaseException:
                os._exit(EXIT_REPLY_FAILED)
        except Exception as exc:  # e.g. safetensors refusing an exotic tensor the encoder let through
            message = f"the result could not be sent: {type(exc).__name__}: {exc}"[:2000]
            frame = pack_frame({**base, "status": "error", "exc_type": "TypeError", "message": message}, {})
        write_all(self.reply_fd, frame)

    def notify(self, event: dict[str, Any]) -> None:
        """Send a progress event (e.g. which statement runs now) ahead of the reply."""
        write_all(self.reply_fd, pack_frame(event, {}))

    def dispatch(
        self, header: dict[str, Any], tensors: dict[str, torch.Tensor]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Args: request header and tensors. Returns: (reply header, reply tensors)."""
        base = {"id": self.request_id}
        try:
            handler = getattr(self, "op_" + str(header.get("op")), None)
            if handler is None:
                raise RequestError(f"unknown op {header.get('op')!r}")
            if self.device.type != "cpu":
                tensors = {key: value.to(self.device) for key, value in tensors.items()}
            reader = ValueReader(tensors, self.resolve)
            with self.request_globals(reader.decode(header.get("set_globals"))):
                value = handler(header, reader)
                encoder = ValueWriter(plain_tensor, self.handle_of)
                try:
                    encoded = encoder.encode(value)
                except EncodeError as exc:
                    raise StudentFault(
                        "TypeError", f"{header.get('target', 'it')} returned {exc}, expected a tensor"
                    ) from None
            return {**base, "status": "ok", "value": encoded}, encoder.tensors
        except RequestError as exc:
            return {**base, "status": "invalid", "message": str(exc)}, {}
        except StudentFault as exc:
            return {**base, "status": "error", "exc_type": exc.exc_type, "message": str(exc), "where": ""}, {}
        except protocol.ProtocolError as exc:
            return {**base, "status": "invalid", "message": f"malformed request: {exc}"}, {}
        except BaseException as exc:  # student code: SystemExit and KeyboardInterrupt included
            info = describe_exception(exc, self.statements.files)
            status = "oom" if is_memory_error(exc) else "error"
            del exc
            gc.collect()
            return {**base, "status": status, **info}, {}

    # --- value resolution -------------------------------------------------------------------
    def resolve(self, tag: str, body: Any) -> Any:
        """Build the object behind a "$ref", "$global" or "$torch" tag (ValueReader callback)."""
        if tag == "$ref":
            if body not in self.handles:
                raise RequestError(f"no object with handle {body!r}")
            return self.handles[body]
        if tag == "$global":
            return self.lookup(body)
        name, kwargs = body
        if name not in protocol.TORCH_OBJECT_WHITELIST:
            raise RequestError(f"torch object {name!r} is not allowed")
        try:
            return getattr(torch.nn, name)(**kwargs)
        except (TypeError, ValueError) as exc:
            raise RequestError(f"cannot build {name}: {exc}") from None

    def handle_of(self, obj: Any) -> int | None:
        """Args: a returned object. Returns: its handle when the grader built it, else None."""
        return next((handle for handle, known in self.handles.items() if known is obj), None)

    def lookup(self, name: Any) -> Any:
        """Args: a student global name, or "package.module:attr" for importable code such as mtkit."""
        if not isinstance(name, str) or not name:
            raise RequestError(f"bad name {name!r}")
        if ":" in name:  # grader-chosen code (e.g. mtkit): failing to find it is the grader's problem
            module_name, _, attr = name.partition(":")
            try:
                value: Any = importlib.import_module(module_name)
                for part in attr.split("."):
                    value = getattr(value, part)
            except (ImportError, AttributeError) as exc:
                raise RequestError(f"cannot find {name}: {exc}") from None
            return value
        if name not in self.namespace:
            raise StudentFault("NameError", f"name {name!r} is not defined by the submission")
        return self.namespace[name]

    def module_of(self, handle: Any) -> torch.nn.Module:
        """Args: handle. Returns: the nn.Module it names (RequestError otherwise)."""
        obj = self.resolve("$ref", handle)
        if not isinstance(obj, torch.nn.Module):
            raise StudentFault("TypeError", f"the object is a {type(obj).__name__}, not an nn.Module")
        return obj

    def request_globals(self, values: Any) -> Any:
        """Apply the baseline globals (fresh copies) plus this request's, restoring the latter after."""
        self.namespace.update(copy.deepcopy(self.baseline))
        if values and not isinstance(values, dict):
            raise RequestError("set_globals must be a dict")
        return _scoped_globals(self.namespace, values or {})

    # --- ops ----------------------------------------------------------------------------------
    def op_load(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Set the baseline globals, load the helpers, run the statements. Returns: the load report."""
        self.baseline = reader.decode(header.get("globals")) or {}
        self.namespace.update(copy.deepcopy(self.baseline))
        self.load_helpers(str(header.get("helpers") or ""))
        # Before any student statement: a name the submission imports or binds is a stand-in already.
        watched = [str(name) for name in header.get("watch") or []]
        frames = {name: pack_frame({"event": library_calls.EVENT, "name": name}, {}) for name in watched}
        library_calls.install(watched, library_calls.frame_recorder(self.reply_fd, types.MappingProxyType(frames)))
        skip = {tuple(at) for at in header.get("skip", [])}
        report = self.statements.run(
            header["statements"], skip, lambda at, line: self.notify({"event": "exec", "at": list(at), "line": line})
        )
        self.namespace.update(copy.deepcopy(self.baseline))  # the grader's values win
        return report

    def load_helpers(self, source: str) -> None:
        """Run grader-written helper code in its own module, apart from the student namespace."""
        module = types.ModuleType("grader_helpers")
        sys.modules["grader_helpers"] = module
        self.helpers = module.__dict__
        if not source:
            return
        try:
            exec(compile(source, "<grader helpers>", "exec", dont_inherit=True), self.helpers)
        except BaseException as exc:
            raise RequestError(f"grader helpers failed: {type(exc).__name__}: {exc}") from None

    def op_call(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Call a student (or importable) function. Returns: its result, or output and gradients."""
        function = self.lookup(header["target"])
        if not callable(function):
            raise StudentFault("TypeError", f"{header['target']} is a {type(function).__name__}, not callable")
        args, kwargs = reader.decode(header["args"]), reader.decode(header.get("kwargs")) or {}
        seed_everything(int(header.get("seed", 0)))
        return self.invoke(function, args, kwargs, header.get("grad_wrt"), reader.decode(header.get("grad")), None)

    def op_new(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Build an object (with helper stand-ins) under a seed and keep it by handle. Returns: None."""
        cls = self.lookup(header["target"])
        args, kwargs = reader.decode(header["args"]), reader.decode(header.get("kwargs")) or {}
        stand_ins = {}
        for name, helper in (header.get("substitute") or {}).items():
            if helper not in self.helpers:
                raise RequestError(f"no helper named {helper!r}")
            stand_ins[name] = self.helpers[helper]
        with _scoped_globals(self.namespace, stand_ins):
            seed_everything(int(header.get("seed", 0)))
            self.handles[int(header["handle"])] = cls(*args, **kwargs)
        return None

    def op_params(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Returns: named_parameters() as [name, shape] pairs in registration order."""
        module = self.module_of(header["handle"])
        return [[str(name), [int(n) for n in p.shape]] for name, p in module.named_parameters()]

    def op_modules(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Returns: named_modules() as [name, class name] pairs."""
        module = self.module_of(header["handle"])
        return [[str(name), type(sub).__name__] for name, sub in module.named_modules()]

    def op_load_state(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """load_state_dict() into the module. Returns: None."""
        module = self.module_of(header["handle"])
        module.load_state_dict(reader.decode(header["tensors"]), strict=bool(header.get("strict", True)))
        return None

    def op_state(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Returns: the module's state_dict()."""
        return dict(self.module_of(header["handle"]).state_dict())

    def op_run(self, header: dict[str, Any], reader: ValueReader) -> Any:
        """Run a module method in eval or train mode. Returns: its output, or output and gradients."""
        module = self.module_of(header["handle"])
        target: Any = module
        for part in filter(None, str(header.get("method", "forward")).split(".")):
            if not (part == "forward" and isinstance(target, torch.nn.Module)):  # keep __call__ hooks
                target = getattr(target, part)
        module.train(header.get("mode") == "train")
        args, kwargs = reader.decode(header["args"]), reader.decode(header.get("kwargs")) or {}
        grad = reader.decode(header.get("grad"))
        seed_everything(int(header.get("seed", 0)))
        return self.invoke(
            target,
            args,
            kwargs,
            header.get("grad_wrt"),
            grad,
            module,
            no_grad=header.get("mode") != "train" and grad is None,
        )

    def invoke(
        self,
        function: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        grad_wrt: list[int] | None,
        grad: torch.Tensor | None,
        module: torch.nn.Module | None,
        no_grad: bool = False,
    ) -> Any:
        """Call student code; with `grad_wrt` or `grad`, also backpropagate and collect gradients."""
        wants_grads = bool(grad_wrt) or grad is not None
        for index in grad_wrt or []:
            if not (
                isinstance(index, int)
                and 0 <= index < len(args)
                and isinstance(args[index], torch.Tensor)
                and args[index].is_floating_point()
            ):
                raise RequestError(f"argument {index} is not a floating-point tensor")
            args[index] = args[index].detach().requires_grad_(True)
        if module is not None and wants_grads:
            module.zero_grad(set_to_none=True)
        with torch.no_grad() if no_grad else contextlib.nullcontext():
            output = function(*args, **kwargs)
        if not wants_grads:
            return output
        if not isinstance(output, torch.Tensor):
            raise StudentFault("TypeError", f"returned a {type(output).__name__}, expected a tensor")
        output.backward(grad if grad is not None else torch.ones_like(output))
        result: dict[str, Any] = {"output": output}
        if grad_wrt:
            result["grads"] = [args[index].grad for index in grad_wrt]
        if module is not None:
            result["param_grads"] = {name: p.grad for name, p in module.named_parameters()}
        return result


@contextlib.contextmanager
def _scoped_globals(namespace: dict[str, Any], values: dict[str, Any]) -> Iterator[None]:
    """Set some student globals for one request, then restore them (removing the ones that were unset)."""
    saved = {key: namespace[key] for key in values if key in namespace}
    namespace.update(values)
    try:
        yield
    finally:
        namespace.update(saved)
        for key in values.keys() - saved.keys():
            namespace.pop(key, None)
