"""Generated degenerate answers for Part 2's unit parts: cheap functions of the right shape.

Each answer is notebook source for one graded cell (appended to it, so its definition is the one
graded, as when a student redefines a class in a later line): compositions of means (masked,
unmasked, running), identities, constants, input pass-through, first/last position, elementwise
nonlinearities, unused parameters and wrong but shaped reductions, with the attacks of the
credit review among them (the padding mask as the look-ahead mask, running means in place of
attention, a forward that calls neither encoder nor decoder, minus the mean scored logit). They
go through the engine like any submission (`render_answers` writes the notebooks) and must earn
at most their part's structural share (assignment.yml `structure`, docs/SOUNDNESS.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from soundness_build import BASE_NOTEBOOK, render_case
from soundness_spec import Case, Expectation, Patch

PARTS = ("look_ahead_mask", "decoder_layer", "decoder", "transformer_forward", "masked_loss")
CELLS = {
    "look_ahead_mask": "mask",
    "decoder_layer": "decoder_layer",
    "decoder": "decoder",
    "transformer_forward": "transformer",
    "masked_loss": "loss",
}


@dataclass(frozen=True)
class Answer:
    """One generated answer: the part it answers, a name and the code appended to the part's cell."""

    id: str
    part: str
    description: str
    source: str


# Cheap helpers the answers share, defined with each answer (the notebook keeps no other copy).
HELPERS = """
def _deg_masked_mean(values, mask):
    # values (B, S, d), mask (B, 1, T, S) nonzero where visible -> (B, T, d): uniform "attention"
    weights = (mask[:, 0] != 0).to(values.dtype)
    return weights @ values / weights.sum(dim=-1, keepdim=True).clamp(min=1.0)


def _deg_running_mean(values):
    # (B, T, d) -> mean of positions 0..t at each t
    counts = torch.arange(1, values.size(1) + 1, dtype=values.dtype, device=values.device)
    return values.cumsum(dim=1) / counts[None, :, None]


def _deg_source_mean(enc, src_mask):
    # the mean of the visible encoder states, the same for every target position: (B, 1, d)
    visible = (src_mask[:, 0, 0] != 0).to(enc.dtype)
    return (visible[:, :, None] * enc).sum(dim=1, keepdim=True) / visible.sum(dim=1).clamp(min=1.0)[:, None, None]
"""

# ----------------------------------------------------------------------------- look-ahead mask
_MASK = "def create_look_ahead_mask_for_attention(tgt_batch, pad_idx):\n    batch_size, tgt_length = tgt_batch.size()\n"
_MASK_BODIES = {
    "padding_mask": (
        "The given padding mask returned as the look-ahead mask (no triangle).",
        "return create_padding_mask_for_attention(tgt_batch, pad_idx).to(torch.int)",
    ),
    "all_open": ("Everything visible.", "return torch.ones(batch_size, 1, tgt_length, tgt_length, dtype=torch.int)"),
    "all_blocked": ("Nothing visible.", "return torch.zeros(batch_size, 1, tgt_length, tgt_length, dtype=torch.int)"),
    "key_zero_only": (
        "Every query sees key 0 only.",
        "mask = torch.zeros(batch_size, 1, tgt_length, tgt_length, dtype=torch.int)\n"
        "    mask[..., 0] = 1\n"
        "    return mask",
    ),
    "diagonal_and_padding": (
        "Each position sees itself only, padding removed.",
        "eye = torch.eye(tgt_length, dtype=torch.int)[None, None]\n"
        "    return eye & create_padding_mask_for_attention(tgt_batch, pad_idx).to(torch.int)",
    ),
    "last_key_only": (
        "Every query sees the last key only.",
        "mask = torch.zeros(batch_size, 1, tgt_length, tgt_length, dtype=torch.int)\n"
        "    mask[..., -1] = 1\n"
        "    return mask",
    ),
    "fixed_random": (
        "A fixed random pattern of the right shape.",
        "gen = torch.Generator().manual_seed(7)\n"
        "    return (torch.rand(batch_size, 1, tgt_length, tgt_length, generator=gen) > 0.5).to(torch.int)",
    ),
    "padding_as_float": (
        "The padding mask as floats (the shape right, the triangle missing).",
        "return create_padding_mask_for_attention(tgt_batch, pad_idx).float()",
    ),
}

# ------------------------------------------------------------------------------ DecoderLayer
_DL_LAYOUT = """class DecoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super(DecoderLayer, self).__init__()
        self.masked_multi_head_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm1 = LayerNormalization(embedding_dim)
        self.dropout1 = nn.Dropout(drop_prob)
        self.enc_dec_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm2 = LayerNormalization(embedding_dim)
        self.dropout2 = nn.Dropout(drop_prob)
        self.feed_forward_neural_network = FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob)
        self.norm3 = LayerNormalization(embedding_dim)
        self.dropout3 = nn.Dropout(drop_prob)

    def forward(self, dec, enc, src_mask, trg_mask):
"""
_DL_BARE = """class DecoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super(DecoderLayer, self).__init__()
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, dec, enc, src_mask, trg_mask):
"""
_DL_BODIES = {
    "identity": ("Returns its input.", "return dec"),
    "running_mean_attack": (
        "A masked running mean of the target plus the masked source mean, no attention.",
        "return dec + _deg_masked_mean(dec, trg_mask) + _deg_source_mean(enc, src_mask)",
    ),
    "normed_running_mean": (
        "norm3 of the input, its masked running mean and the source mean, under dropout.",
        "return self.norm3(dec + self.dropout3(_deg_masked_mean(dec, trg_mask) + _deg_source_mean(enc, src_mask)))",
    ),
    "unmasked_running_mean": ("An unmasked running mean of the target.", "return dec + _deg_running_mean(dec)"),
    "zeros": ("Zeros of the input's shape.", "return torch.zeros_like(dec)"),
    "tanh": ("tanh of the input, position by position.", "return torch.tanh(dec)"),
    "first_position": ("Every position gets position 0.", "return dec[:, :1].expand_as(dec) + 0 * dec"),
    "last_position": ("Every position gets the last one.", "return dec[:, -1:].expand_as(dec) + 0 * dec"),
    "source_mean": ("The input plus the mean of the visible source.", "return dec + _deg_source_mean(enc, src_mask)"),
    "feed_forward_only": (
        "The feed-forward sublayer with its residual, no attention at all.",
        "return self.norm3(dec + self.dropout3(self.feed_forward_neural_network(dec)))",
    ),
    "zero_times_parameters": (
        "Its input plus 0 x every parameter (gradients reach every parameter).",
        "return dec + 0 * sum(p.sum() for p in self.parameters())",
    ),
}

# ------------------------------------------------------------------------------------ Decoder
_DEC_LAYOUT = """class Decoder(nn.Module):
    def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                 drop_prob):
        super(Decoder, self).__init__()
        self.transformer_embedding = TransformerEmbedding(vocab_size, embedding_dim, sequence_length)
        self.decoder_layers = nn.ModuleList(
            [DecoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob) for _ in range(num_layers)]
        )
        self.dense_layer = nn.Linear(embedding_dim, vocab_size)
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, dec, enc, src_mask, trg_mask):
        x = self.transformer_embedding(dec)
"""
_DEC_BODIES = {
    "embedding_only": ("The output layer over the embedding, no layer runs.", "return self.dense_layer(x)"),
    "running_mean_attack": (
        "The output layer over the embedding, its masked running mean and the masked source mean.",
        "return self.dense_layer(x + _deg_masked_mean(x, trg_mask) + _deg_source_mean(enc, src_mask))",
    ),
    "dense_of_zeros": ("The output layer over zeros.", "return self.dense_layer(torch.zeros_like(x))"),
    "tanh": ("The output layer over tanh of the embedding.", "return self.dense_layer(torch.tanh(x))"),
    "unmasked_running_mean": (
        "The output layer over an unmasked running mean of the embedding, under dropout.",
        "return self.dense_layer(self.dropout(_deg_running_mean(x)))",
    ),
    "first_position": (
        "The output layer over position 0's embedding everywhere.",
        "return self.dense_layer(x[:, :1].expand_as(x) + 0 * x)",
    ),
    "source_mean": (
        "The output layer over the embedding plus the visible source's mean.",
        "return self.dense_layer(x + _deg_source_mean(enc, src_mask))",
    ),
}

# -------------------------------------------------------------------------- Transformer.forward
_TF_LAYOUT = """class Transformer(nn.Module):
    def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                 drop_prob):
        super(Transformer, self).__init__()
        self.encoder = Encoder(vocab_size[src_language], sequence_length, embedding_dim, feed_forward_dim,
                               num_heads, num_layers, drop_prob)
        self.decoder = Decoder(vocab_size[tgt_language], sequence_length, embedding_dim, feed_forward_dim,
                               num_heads, num_layers, drop_prob)
        self.target_vocab = vocab_size[tgt_language]
        self.source_vocab = vocab_size[src_language]

    def forward(self, src_batch, tgt_batch, src_padding_mask, tgt_attention_mask):
        tgt = torch.nn.functional.one_hot(tgt_batch, self.target_vocab).float()
        src = torch.nn.functional.one_hot(src_batch, self.source_vocab).float()
        fixed = torch.randn(self.source_vocab, self.target_vocab, generator=torch.Generator().manual_seed(3))
        scale = 0 * sum(p.sum() for p in self.parameters())
"""
_TF_BODIES = {
    "one_hot_attack": (
        "Never calls the encoder or decoder: the target's one-hot masked running mean plus a fixed "
        "projection of the masked source mean.",
        "return _deg_masked_mean(tgt, tgt_attention_mask) + _deg_source_mean(src, src_padding_mask) @ fixed + scale",
    ),
    "one_hot_target": ("The target's one-hot codes as logits.", "return tgt + scale"),
    "zeros": ("Zero logits.", "return torch.zeros_like(tgt) + scale"),
    "unmasked_means": (
        "Unmasked running mean of the target plus the source's plain mean, projected.",
        "return _deg_running_mean(tgt) + src.mean(dim=1, keepdim=True) @ fixed + scale",
    ),
    "decoder_without_source": (
        "The decoder on the target with a zero encoder output.",
        "memory = torch.zeros(*src_batch.shape, self.decoder.embed.embedding_dim)\n"
        "        return self.decoder(tgt_batch, memory, src_padding_mask, tgt_attention_mask)",
    ),
    "first_target_token": (
        "The first target token's code at every position.",
        "return tgt[:, :1].expand_as(tgt) + scale",
    ),
}

# ------------------------------------------------------------------------------------- loss
_LOSS = """def calculate_loss(decoder_output, tgt_batch, criterion):
    scored = decoder_output[:, :-1].gather(-1, tgt_batch[:, 1:, None])[..., 0]  # (B, T-1)
    not_padding = (tgt_batch[:, 1:] != pad_idx).to(decoder_output.dtype)
"""
_LOSS_BODIES = {
    "minus_mean_scored_logit": ("Minus the mean scored logit (the padding counts).", "return -scored.mean()"),
    "minus_masked_scored_logit": (
        "Minus the mean scored logit over non-padding predictions.",
        "return -(scored * not_padding).sum() / not_padding.sum()",
    ),
    "constant": ("A constant that requires grad.", "return torch.tensor(2.5, requires_grad=True)"),
    "mean_logit": ("The mean of every logit.", "return decoder_output.mean()"),
    "masked_square": (
        "The mean squared logit of the non-padding predictions.",
        "return (decoder_output[:, :-1].square().mean(-1) * not_padding).sum() / not_padding.sum()",
    ),
    "log_vocab_plus_zero": (
        "ln(V) plus 0 x the masked logits.",
        "return math.log(decoder_output.size(-1)) + 0 * (scored * not_padding).sum()",
    ),
    "minus_max_logit": ("Minus the mean largest logit.", "return -decoder_output[:, :-1].max(dim=-1).values.mean()"),
}


def _indent(body: str, spaces: int) -> str:
    return " " * spaces + body


def answers() -> list[Answer]:
    """Every generated answer, part by part.

    Returns:
        The answers, in PARTS order.
    """
    made: list[Answer] = []
    made += [
        Answer(f"gen_mask_{name}", "look_ahead_mask", text, HELPERS + "\n\n" + _MASK + _indent(body, 4) + "\n")
        for name, (text, body) in _MASK_BODIES.items()
    ]
    for layout, tag in ((_DL_LAYOUT, ""), (_DL_BARE, "_bare")):
        for name, (text, body) in _DL_BODIES.items():
            if tag and "self." in body:
                continue  # the bare layout has no sublayers to call
            note = " (no sublayers registered)" if tag else " (the documented sublayers registered, unused)"
            source = HELPERS + "\n\n" + layout + _indent(body, 8) + "\n"
            made.append(Answer(f"gen_dl_{name}{tag}", "decoder_layer", text + note, source))
    made += [
        Answer(f"gen_dec_{name}", "decoder", text, HELPERS + "\n\n" + _DEC_LAYOUT + _indent(body, 8) + "\n")
        for name, (text, body) in _DEC_BODIES.items()
    ]
    made += [
        Answer(f"gen_tf_{name}", "transformer_forward", text, HELPERS + "\n\n" + _TF_LAYOUT + _indent(body, 8) + "\n")
        for name, (text, body) in _TF_BODIES.items()
    ]
    made += [
        Answer(f"gen_loss_{name}", "masked_loss", text, "import math\n\n" + _LOSS + _indent(body, 4) + "\n")
        for name, (text, body) in _LOSS_BODIES.items()
    ]
    return made


def as_case(answer: Answer, folder: Path) -> Case:
    """One answer as a degenerate corpus case whose notebook lies in `folder`.

    Args:
        answer: the generated answer.
        folder: where `render_answers` writes `<id>.ipynb`.

    Returns:
        The case (expected: at most the part's structural share, full marks elsewhere).
    """
    patch = Patch(cell=CELLS[answer.part], append=answer.source)
    return Case(
        answer.id,
        "degenerate",
        answer.part,
        answer.description,
        (patch,),
        {},
        Expectation(),
        PARTS,
        folder / f"{answer.id}.ipynb",
    )


def render_answers(folder: Path, chosen: list[Answer] | None = None) -> list[Case]:
    """Write each answer's notebook (the correct example with the answer appended to its cell).

    Args:
        folder: an existing folder.
        chosen: the answers (default: all).

    Returns:
        The cases, their `path` in `folder`.
    """
    base = json.loads(BASE_NOTEBOOK.read_text(encoding="utf-8"))
    cases = [as_case(answer, folder) for answer in (answers() if chosen is None else chosen)]
    for case in cases:
        case.path.write_text(render_case(case, base), encoding="utf-8")
    return cases
