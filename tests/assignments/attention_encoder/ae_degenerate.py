"""Generated degenerate answers for Part 1's unit parts: cheap functions of the right shape.

Each answer is code appended to the correct submission as a later cell (its definition is the
one graded, as ae_corpus's fixtures): compositions of means (masked, unmasked, running),
identities, constants, input pass-through, first/last position, elementwise nonlinearities,
unused parameters, wrong but shaped reductions and partly filled tables, with the attacks of the
credit review among them (attention to key 0 only, MultiHeadAttention as a masked mean with four
unused Linear layers, a positional table with columns 0-1 filled, `tanh(x)` as the feed-forward
block, EncoderLayer `x + masked mean`, Encoder `embedding + masked mean`). Each must earn at most
its part's structural share (assignment.yml `structure`, docs/SOUNDNESS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ae_corpus import CORRECT_PATH

PARTS = ("attention", "multi_head_attention", "positional_encoding", "feed_forward", "encoder_layer", "encoder")


@dataclass(frozen=True)
class Answer:
    """One generated answer: the part it answers, a name and the code appended to the submission."""

    id: str
    part: str
    description: str
    source: str

    def submission(self) -> str:
        """The whole submission: the correct code, then this answer as a later cell."""
        return CORRECT_PATH.read_text(encoding="utf-8") + "\n\n" + self.source


HELPERS = """
def _deg_masked_mean(values, mask, queries=None):
    # values (..., S, d), mask (B, 1, T or 1, S) nonzero where visible -> (..., T, d), T = queries
    queries = values.size(-2) if queries is None else queries
    if mask is None:
        return values.mean(dim=-2, keepdim=True).expand(*values.shape[:-2], queries, values.size(-1))
    weights = (mask != 0).to(values.dtype)
    if weights.dim() == values.dim() + 1:  # (B, 1, T, S) against (B, S, d): drop the head axis
        weights = weights[:, 0]
    weights = weights.expand(*weights.shape[:-2], queries, values.size(-2))
    return weights @ values / weights.sum(dim=-1, keepdim=True).clamp(min=1.0)


def _deg_running_mean(values):
    # (..., T, d) -> mean of positions 0..t at each t
    counts = torch.arange(1, values.size(-2) + 1, dtype=values.dtype, device=values.device)
    return values.cumsum(dim=-2) / counts[:, None]
"""

# ------------------------------------------------------------- ScaledDotProductAttention.forward
_ATTENTION = """class ScaledDotProductAttention(nn.Module):
    def __init__(self, embedding_dim, attention_dim):
        super(ScaledDotProductAttention, self).__init__()
        self.embedding_dim = embedding_dim
        self.attention_dim = attention_dim
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, query, key, value, mask):
        queries = query.size(-2)
"""
_ATTENTION_BODIES = {
    "key_zero_only": (
        "Every query attends to key 0 only.",
        "return value[..., :1, :].expand(*value.shape[:-2], queries, value.size(-1))",
    ),
    "masked_mean": (
        "Uniform weights over the visible keys (no scores).",
        "return _deg_masked_mean(value, mask, queries)",
    ),
    "unmasked_mean": (
        "The mean of all values for every query.",
        "return value.mean(dim=-2, keepdim=True).expand(*value.shape[:-2], queries, value.size(-1))",
    ),
    "running_mean": ("A running mean of the values.", "return _deg_running_mean(value)"),
    "value_pass_through": ("Returns the values.", "return value"),
    "query_pass_through": ("Returns the queries.", "return query"),
    "zeros": ("Zeros of the output's shape.", "return torch.zeros_like(query)"),
    "last_key_only": (
        "Every query attends to the last key only.",
        "return value[..., -1:, :].expand(*value.shape[:-2], queries, value.size(-1))",
    ),
    "tanh_of_masked_mean": (
        "tanh of the masked mean of the values.",
        "return torch.tanh(_deg_masked_mean(value, mask, queries))",
    ),
    "masked_max": (
        "The largest visible value per feature (a wrong but shaped reduction).",
        "visible = (mask != 0).expand(*mask.shape[:-2], queries, value.size(-2))[..., None]\n"
        "        spread = value[..., None, :, :].expand(*visible.shape[:-1], value.size(-1))\n"
        "        return spread.masked_fill(~visible, -1e9).amax(dim=-2)",
    ),
}

# ---------------------------------------------------------------------- MultiHeadAttention
_MHA = """class MultiHeadAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.embedding_dim = embedding_dim
        self.num_heads = num_heads
        self.Wq = nn.Linear(embedding_dim, embedding_dim)
        self.Wk = nn.Linear(embedding_dim, embedding_dim)
        self.Wv = nn.Linear(embedding_dim, embedding_dim)
        self.Wo = nn.Linear(embedding_dim, embedding_dim)

    def forward(self, query, key, value, mask=None):
"""
_MHA_BODIES = {
    "masked_mean_attack": (
        "A masked mean of the values; the four Linear layers unused.",
        "return _deg_masked_mean(value, mask, query.size(1))",
    ),
    "projected_masked_mean": (
        "Wo of the masked mean of Wv(value): projections, no scores.",
        "return self.Wo(_deg_masked_mean(self.Wv(value), mask, query.size(1)))",
    ),
    "query_pass_through": ("Returns the query.", "return query"),
    "projected_query": ("Wo(Wq(query)), position by position.", "return self.Wo(self.Wq(query))"),
    "zeros": ("Zeros of the query's shape.", "return torch.zeros_like(query)"),
    "key_zero_only": ("Every position gets the value at key 0.", "return value[:, :1].expand_as(query) + 0 * query"),
    "running_mean": ("A running mean of the values.", "return _deg_running_mean(value)"),
    "tanh_query": ("tanh of the query.", "return torch.tanh(query)"),
    "zero_times_parameters": (
        "The query plus 0 x every parameter.",
        "return query + 0 * sum(p.sum() for p in self.parameters())",
    ),
}

# ---------------------------------------------------------------------- PositionalEncoding
_PE = """class PositionalEncoding(nn.Module):
    def __init__(self, max_length, embedding_dim):
        super(PositionalEncoding, self).__init__()
        positions = torch.arange(max_length, dtype=torch.float).unsqueeze(1)
        table = torch.zeros(max_length, embedding_dim)
"""
_PE_FORWARD = """
    def forward(self, x):
        return self.positional_encoding[: x.size(1), :].to(x.device).detach()
"""
_PE_BODIES = {
    "zeros": ("A zero table.", ""),
    "columns_0_1_attack": (
        "Only columns 0-1 filled (sin and cos of the position).",
        "table[:, 0] = torch.sin(positions[:, 0])\n        table[:, 1] = torch.cos(positions[:, 0])",
    ),
    "first_half_columns": (
        "The correct table with the second half of the columns left at zero.",
        "even = torch.arange(0, embedding_dim, 2, dtype=torch.float)\n"
        "        angles = positions / torch.pow(10000.0, even / embedding_dim)\n"
        "        table[:, 0::2] = torch.sin(angles)\n"
        "        table[:, 1::2] = torch.cos(angles[:, : embedding_dim // 2])\n"
        "        table[:, embedding_dim // 2 :] = 0.0",
    ),
    "ones": ("A table of ones.", "table += 1.0"),
    "position_index": ("The position index in every column.", "table += positions"),
    "sin_of_position": ("sin(position) in every column.", "table += torch.sin(positions)"),
    "fixed_random": (
        "A fixed random table.",
        "table += torch.randn(max_length, embedding_dim, generator=torch.Generator().manual_seed(5))",
    ),
    "linear_ramp": ("position / max_length in every column.", "table += positions / max_length"),
}

# --------------------------------------------------------------------- FeedForwardNeuralNetwork
_FFN = """class FeedForwardNeuralNetwork(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, drop_prob):
        super(FeedForwardNeuralNetwork, self).__init__()
        self.W1 = nn.Linear(embedding_dim, feed_forward_dim)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(drop_prob)
        self.W2 = nn.Linear(feed_forward_dim, embedding_dim)

    def forward(self, x):
"""
_FFN_BODIES = {
    "tanh_attack": ("tanh(x).", "return torch.tanh(x)"),
    "identity": ("Returns its input.", "return x"),
    "relu": ("relu(x).", "return self.relu(x)"),
    "dropout_of_input": ("Dropout of its input.", "return self.dropout(x)"),
    "zeros": ("Zeros.", "return torch.zeros_like(x)"),
    "feature_mean": (
        "The mean over features, broadcast (a wrong but shaped reduction).",
        "return x.mean(dim=-1, keepdim=True).expand_as(x)",
    ),
    "sequence_mean": ("The mean over positions.", "return x.mean(dim=1, keepdim=True).expand_as(x)"),
    "zero_times_parameters": (
        "Its input plus 0 x every parameter.",
        "return x + 0 * sum(p.sum() for p in self.parameters())",
    ),
}

# -------------------------------------------------------------------------------- EncoderLayer
_EL = """class EncoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super(EncoderLayer, self).__init__()
        self.multi_head_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm1 = LayerNormalization(embedding_dim)
        self.dropout1 = nn.Dropout(drop_prob)
        self.feed_forward_neural_network = FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob)
        self.norm2 = LayerNormalization(embedding_dim)
        self.dropout2 = nn.Dropout(drop_prob)

    def forward(self, x, padding_mask):
"""
_EL_BODIES = {
    "masked_mean_attack": ("x + the masked mean of x.", "return x + _deg_masked_mean(x, padding_mask)"),
    "identity": ("Returns its input.", "return x"),
    "normed_masked_mean": (
        "norm2(x + dropout(masked mean)).",
        "return self.norm2(x + self.dropout2(_deg_masked_mean(x, padding_mask)))",
    ),
    "norms_only": ("norm2(norm1(x)), position by position.", "return self.norm2(self.norm1(x))"),
    "feed_forward_only": (
        "The feed-forward sublayer with its residual, no attention.",
        "return self.norm2(x + self.dropout2(self.feed_forward_neural_network(x)))",
    ),
    "zeros": ("Zeros.", "return torch.zeros_like(x)"),
    "first_position": ("Every position gets position 0.", "return x[:, :1].expand_as(x) + 0 * x"),
    "running_mean": ("x + a running mean of x.", "return x + _deg_running_mean(x)"),
    "tanh": ("tanh(x).", "return torch.tanh(x)"),
}

# ------------------------------------------------------------------------------------ Encoder
_ENC = """class Encoder(nn.Module):
    def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                 drop_prob):
        super(Encoder, self).__init__()
        self.transformer_embedding = TransformerEmbedding(vocab_size, embedding_dim, sequence_length)
        self.encoder_layers = nn.ModuleList(
            [EncoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob) for _ in range(num_layers)]
        )
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, x, padding_mask):
        e = self.transformer_embedding(x)
"""
_ENC_BODIES = {
    "masked_mean_attack": ("The embedding plus its masked mean.", "return e + _deg_masked_mean(e, padding_mask)"),
    "embedding_only": ("The embedding; the layers never run.", "return e"),
    "zeros": ("Zeros.", "return torch.zeros_like(e)"),
    "token_embedding_only": ("The token embedding without positions.", "return self.transformer_embedding.tok_emb(x)"),
    "running_mean": (
        "The embedding plus its running mean, under dropout.",
        "return self.dropout(e + _deg_running_mean(e))",
    ),
    "tanh": ("tanh of the embedding.", "return torch.tanh(e)"),
    "first_position": ("Position 0's embedding everywhere.", "return e[:, :1].expand_as(e) + 0 * e"),
}

_TABLES = (
    ("attention", "attention", _ATTENTION, _ATTENTION_BODIES, ""),
    ("multi_head_attention", "mha", _MHA, _MHA_BODIES, ""),
    ("positional_encoding", "pe", _PE, _PE_BODIES, _PE_FORWARD),
    ("feed_forward", "ffn", _FFN, _FFN_BODIES, ""),
    ("encoder_layer", "encoder_layer", _EL, _EL_BODIES, ""),
    ("encoder", "encoder", _ENC, _ENC_BODIES, ""),
)


def answers() -> list[Answer]:
    """Every generated answer, part by part.

    Returns:
        The answers, in PARTS order.
    """
    made = []
    for part, prefix, head, bodies, tail in _TABLES:
        for name, (text, body) in bodies.items():
            if part == "positional_encoding":
                code = (
                    head
                    + ("        " + body + "\n" if body else "")
                    + "        self.positional_encoding = table\n"
                    + tail
                )
            else:
                code = head + "        " + body + "\n"
            made.append(Answer(f"gen_{prefix}_{name}", part, text, HELPERS + "\n\n" + code))
    return made


def write_answers(folder: Path, chosen: list[Answer] | None = None) -> dict[str, Path]:
    """Write each answer as a `.py` submission.

    Args:
        folder: an existing folder.
        chosen: the answers (default: all).

    Returns:
        answer id -> its file.
    """
    written = {}
    for answer in answers() if chosen is None else chosen:
        path = folder / f"{answer.id}.py"
        path.write_text(answer.submission(), encoding="utf-8")
        written[answer.id] = path
    return written
