"""Wire format between grader and worker: length-prefixed frames of JSON plus one safetensors blob."""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import load as _safetensors_load
from safetensors.torch import save as _safetensors_save

# Frame = prefix (JSON length, blob length) + UTF-8 JSON header + safetensors blob (may be empty).
PREFIX = struct.Struct("<IQ")
MAX_HEADER_BYTES = 64 << 20
MAX_DEPTH = 48
TORCH_OBJECT_WHITELIST = ("CrossEntropyLoss", "NLLLoss")

# Bound once at import so that student code monkeypatching `json` cannot change the runtime's codec.
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=True, separators=(",", ":")).encode
_loads = json.JSONDecoder().decode

# The dtypes that travel, each under its name in torch (torch.float64 is "float64").
DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name)
    for name in ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}


class ProtocolError(Exception):
    """A frame or value that does not follow the wire format."""


class EncodeError(Exception):
    """A value that cannot travel (the message names its type)."""


@dataclass(frozen=True)
class Ref:
    """The worker-side object with this handle (a module built by `Worker.new`)."""

    handle: int


@dataclass(frozen=True)
class Global:
    """The object bound to `name` in the student's module namespace (e.g. a student function)."""

    name: str


@dataclass(frozen=True)
class TorchObject:
    """A whitelisted torch.nn object built inside the worker, e.g. TorchObject("CrossEntropyLoss")."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in TORCH_OBJECT_WHITELIST:
            raise ValueError(f"TorchObject {self.name!r} is not one of {TORCH_OBJECT_WHITELIST}")


class ValueWriter:
    """Turns a value into JSON-able data, collecting its tensors for the safetensors blob."""

    def __init__(
        self,
        flatten: Callable[[torch.Tensor], torch.Tensor],
        object_ref: Callable[[Any], int | None] | None = None,
        check_ref: Callable[[int], object] | None = None,
    ) -> None:
        """Args:
        flatten: makes a plain, contiguous CPU tensor from a tensor about to be sent.
        object_ref: returns the handle of an object the other side knows, else None.
        check_ref: validates the handle of each Ref being sent (raises if unusable).
        """
        self.tensors: dict[str, torch.Tensor] = {}
        self._flatten = flatten
        self._object_ref = object_ref
        self._check_ref = check_ref
        self._storages: set[int] = set()

    def encode(self, value: Any, depth: int = 0) -> Any:
        """Args: value to encode. Returns: JSON-able data referring to `self.tensors` by key."""
        if depth > MAX_DEPTH:
            raise EncodeError("a value nested too deeply")
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, torch.Tensor):
            return self._encode_tensor(value)
        if isinstance(value, Ref):
            if self._check_ref is not None:
                self._check_ref(value.handle)
            return {"$ref": value.handle}
        if isinstance(value, Global):
            return {"$global": value.name}
        if isinstance(value, TorchObject):
            return {"$torch": value.name, "kwargs": self.encode(dict(value.kwargs), depth + 1)}
        if isinstance(value, torch.device):
            return {"$device": str(value)}
        if isinstance(value, torch.dtype):
            return {"$dtype": DTYPE_NAMES.get(value, str(value))}
        if isinstance(value, (bool, int, float, str)):  # subclasses: keep only the plain value
            kind = next(kind for kind in (bool, int, float, str) if isinstance(value, kind))
            return self.encode(str.__str__(value) if kind is str else kind(value), depth + 1)
        if isinstance(value, list):
            return [self.encode(item, depth + 1) for item in value]
        if isinstance(value, tuple):  # includes torch.Size and named tuples
            return {"$tuple": [self.encode(item, depth + 1) for item in value]}
        if isinstance(value, dict):
            pairs = []
            for key, item in value.items():
                if not (key is None or isinstance(key, (bool, int, float, str))):
                    raise EncodeError(f"a dict with a {type(key).__name__} key")
                pairs.append([self.encode(key, depth + 1), self.encode(item, depth + 1)])
            return {"$dict": pairs}
        handle = self._object_ref(value) if self._object_ref else None
        if handle is not None:
            return {"$ref": handle}
        converted = _from_numpy(value)
        if converted is not None:
            return self.encode(converted, depth + 1)
        raise EncodeError(f"a {type(value).__name__}")

    def _encode_tensor(self, tensor: torch.Tensor) -> dict[str, Any]:
        plain = self._flatten(tensor)
        if plain.dtype not in DTYPE_NAMES:
            raise EncodeError(f"a tensor of dtype {plain.dtype}, which cannot be sent")
        storage = plain.untyped_storage().data_ptr()
        if storage in self._storages and plain.numel():  # safetensors refuses shared storage
            plain = plain.clone()
            storage = plain.untyped_storage().data_ptr()
        self._storages.add(storage)
        key = f"t{len(self.tensors)}"
        self.tensors[key] = plain
        return {"$t": key, "dtype": DTYPE_NAMES[plain.dtype], "shape": list(plain.shape)}


def _from_numpy(value: Any) -> Any:
    """Numpy arrays become tensors and numpy scalars Python scalars; anything else None."""
    numpy = __import__("sys").modules.get("numpy")
    if numpy is None:
        return None
    if isinstance(value, numpy.ndarray) and value.dtype != object:
        return torch.from_numpy(value.copy())
    if isinstance(value, numpy.generic):
        return value.item()
    return None


class ValueReader:
    """Rebuilds values from JSON data and received tensors, validating every tensor reference."""

    def __init__(self, tensors: dict[str, torch.Tensor], resolve: Callable[[str, Any], Any] | None = None) -> None:
        """Args:
        tensors: the loaded safetensors blob.
        resolve: builds objects for "$ref", "$global" and "$torch" tags (worker side only);
            without it such tags are a ProtocolError.
        """
        self._tensors = tensors
        self._resolve = resolve

    def decode(self, data: Any, depth: int = 0) -> Any:
        """Args: data from `ValueWriter.encode`. Returns: the value."""
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        if data is None or type(data) in (bool, int, float, str):
            return data
        if type(data) is list:
            return [self.decode(item, depth + 1) for item in data]
        if type(data) is not dict or len(data) == 0:
            raise ProtocolError(f"unexpected {type(data).__name__} in a value")
        tag = next(iter(data))
        body = data[tag]
        if tag == "$t":
            return self._tensor(data)
        if tag == "$tuple" and type(body) is list:
            return tuple(self.decode(item, depth + 1) for item in body)
        if tag == "$dict" and type(body) is list:
            return {self._key(pair, depth): self.decode(pair[1], depth + 1) for pair in body}
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$device" and type(body) is str:
            try:
                return torch.device(body)
            except (RuntimeError, ValueError):
                raise ProtocolError(f"bad device {body[:40]!r}") from None
        if tag == "$dtype" and body in DTYPES:
            return DTYPES[body]
        if tag in ("$ref", "$global", "$torch") and self._resolve is not None:
            kwargs = self.decode(data.get("kwargs", {"$dict": []}), depth + 1)
            return self._resolve(tag, (body, kwargs) if tag == "$torch" else body)
        raise ProtocolError(f"unknown or malformed tag {tag!r}")

    def _key(self, pair: Any, depth: int) -> Any:
        if type(pair) is not list or len(pair) != 2:
            raise ProtocolError("malformed dict entry")
        key = self.decode(pair[0], depth + 1)
        if not (key is None or type(key) in (bool, int, float, str)):
            raise ProtocolError("dict key is not a scalar")
        return key

    def _tensor(self, data: dict[str, Any]) -> torch.Tensor:
        key, dtype, shape = data.get("$t"), data.get("dtype"), data.get("shape")
        if type(key) is not str or key not in self._tensors:
            raise ProtocolError(f"reference to a missing tensor {key!r}")
        tensor = self._tensors[key]
        if type(tensor) is not torch.Tensor:
            raise ProtocolError("blob entry is not a plain tensor")
        declared = DTYPES.get(dtype) if isinstance(dtype, str) else None
        if declared != tensor.dtype or list(tensor.shape) != shape:
            raise ProtocolError(f"tensor {key} does not match its declared dtype/shape")
        return tensor


def pack_frame(header: dict[str, Any], tensors: dict[str, torch.Tensor]) -> bytes:
    """Args: header (JSON-able dict) and tensors. Returns: one frame's bytes."""
    # A lone surrogate (e.g. in a student's exception message) cannot be UTF-8: it becomes "?"
    # instead of failing the whole reply.
    head = _dumps(header).encode("utf-8", "replace")
    blob = _safetensors_save(tensors) if tensors else b""
    return PREFIX.pack(len(head), len(blob)) + head + blob


def parse_header(head: bytes) -> dict[str, Any]:
    """Args: JSON bytes of a frame. Returns: the header dict (ProtocolError if malformed)."""
    try:
        header = _loads(head.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProtocolError(f"malformed frame header: {type(exc).__name__}") from None
    if type(header) is not dict:
        raise ProtocolError("frame header is not an object")
    return header


def load_blob(blob: bytes) -> dict[str, torch.Tensor]:
    """Args: safetensors bytes (untrusted). Returns: plain tensors (ProtocolError if malformed)."""
    if not blob:
        return {}
    try:
        return _safetensors_load(bytes(blob))
    except Exception as exc:  # the parser reports malformed input with several exception types
        raise ProtocolError(f"malformed tensor blob: {exc}") from None


def read_exact(fd: int, size: int) -> bytes | None:
    """Args: blocking fd, byte count. Returns: exactly `size` bytes, or None at end of file."""
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> tuple[dict[str, Any], dict[str, torch.Tensor]] | None:
    """Blocking read of one frame (worker side). Returns: (header, tensors) or None at end of file."""
    prefix = read_exact(fd, PREFIX.size)
    if prefix is None:
        return None
    head_len, blob_len = PREFIX.unpack(prefix)
    if head_len > MAX_HEADER_BYTES:
        raise ProtocolError("frame header too large")
    head = read_exact(fd, head_len)
    blob = read_exact(fd, blob_len) if blob_len else b""
    if head is None or blob is None:
        return None
    return parse_header(head), load_blob(blob)


def write_all(fd: int, data: bytes) -> None:
    """Blocking write of all of `data` to `fd`."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
