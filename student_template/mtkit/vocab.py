"""Token vocabulary: specials first, then by descending frequency with alphabetical ties."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from mtkit.constants import SPECIALS, UNK_IDX


class Vocab:
    """Bidirectional token <-> index mapping; unknown tokens map to `unk_index`."""

    def __init__(self, itos: Sequence[str], unk_index: int = UNK_IDX) -> None:
        """Create a vocabulary from its ordered token list.

        Args:
            itos: tokens in index order (index i holds token itos[i]); must be unique.
            unk_index: index returned for tokens that are not in the vocabulary.
        """
        self.itos: list[str] = list(itos)
        self.stoi: dict[str, int] = {token: index for index, token in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            duplicates = sorted(token for token, count in Counter(self.itos).items() if count > 1)
            raise ValueError(f"Vocabulary tokens must be unique; duplicated: {duplicates[:10]}")
        if not 0 <= unk_index < len(self.itos):
            raise ValueError(f"unk_index {unk_index} is outside the vocabulary of size {len(self.itos)}")
        self.unk_index = unk_index

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        return self.stoi.get(token, self.unk_index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos and self.unk_index == other.unk_index

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, first={self.itos[:6]})"

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Map tokens to indices.

        Args:
            tokens: token texts.

        Returns:
            One index per token; unknown tokens become `unk_index`.
        """
        lookup, unk = self.stoi.get, self.unk_index
        return [lookup(token, unk) for token in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Map indices back to tokens.

        Args:
            ids: indices in [0, len(self)).

        Returns:
            One token text per index.

        Raises:
            IndexError: an index is outside the vocabulary.
        """
        size = len(self.itos)
        tokens = []
        for index in ids:
            index = int(index)  # also accepts numpy / 0-d tensor items
            if not 0 <= index < size:
                raise IndexError(f"Index {index} is outside the vocabulary of size {size}")
            tokens.append(self.itos[index])
        return tokens

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable description ({"itos": [...], "unk_index": int})."""
        return {"itos": list(self.itos), "unk_index": self.unk_index}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocab:
        """Rebuild a vocabulary from `to_dict` output."""
        return cls(data["itos"], unk_index=int(data.get("unk_index", UNK_IDX)))

    def to_json(self) -> str:
        """Serialise to a JSON string (round-trips through `from_json`)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocab:
        """Rebuild a vocabulary from `to_json` output.

        Args:
            text: JSON produced by `to_json`.

        Returns:
            An equal Vocab.
        """
        return cls.from_dict(json.loads(text))


def build_vocab(token_lists: Iterable[Sequence[str]], specials: Sequence[str] = SPECIALS, min_freq: int = 1) -> Vocab:
    """Build a vocabulary the way the assignment's torchtext code does.

    Args:
        token_lists: tokenized sentences (the train split only, per the assignment).
        specials: tokens placed first, in this order; occurrences of them in the data are not
            counted again (default <unk> <sos> <eos> <pad>, so <unk> gets index 0).
        min_freq: tokens seen fewer times are left out.

    Returns:
        A Vocab: specials, then tokens by descending frequency, ties in Python string order.
    """
    counts: Counter[str] = Counter()
    for tokens in token_lists:
        counts.update(tokens)
    special_set = set(specials)
    kept = [(token, count) for token, count in counts.items() if count >= min_freq and token not in special_set]
    # One sort on (-count, token) equals torchtext's alphabetical sort followed by a stable
    # frequency sort: descending frequency, ties in plain code-point string order.
    kept.sort(key=lambda item: (-item[1], item[0]))
    unk_index = list(specials).index(SPECIALS[UNK_IDX]) if SPECIALS[UNK_IDX] in specials else 0
    return Vocab(list(specials) + [token for token, _ in kept], unk_index=unk_index)
