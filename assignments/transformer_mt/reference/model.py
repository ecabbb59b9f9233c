"""Trusted reference Transformer: the assignment's given classes and the graded decoder side."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mtkit.constants import SRC_LANGUAGE, TGT_LANGUAGE

# Names, constructor signatures, attribute names and registration order below follow SPEC.md
# exactly, so that `state_dict()` keys line up 1:1 with a correct student module. Do not reorder
# attribute assignments in any `__init__`: registration order is part of the contract.
#
# The master notebooks' solution blocks are generated from the bodies here (assignments/*/solutions.yml,
# `python -m assignments.solution_cells --write`): annotations and `# type: ignore[...]` comments are
# dropped, every other character is the notebook's, comments included.


class TokenEmbedding(nn.Embedding):
    """Token embedding: a plain `nn.Embedding` (no sqrt(d) scaling, no padding_idx)."""

    def __init__(self, vocab_size: int, embedding_dim: int) -> None:
        super().__init__(vocab_size, embedding_dim)


class PositionalEncoding(nn.Module):
    """Sinusoidal table; `forward` returns the rows for x's length, it does not add them (quirk).

    The table is a plain tensor attribute, not a buffer, so it is absent from `state_dict()` and
    not moved by `.to()`; `forward` copies the needed rows to x's device instead.
    """

    def __init__(self, max_length: int, embedding_dim: int) -> None:
        super().__init__()
        # angle[pos, i] = pos / 10000^(2i/d), float32; column 2i gets sin, column 2i+1 cos (an odd d
        # has one fewer cos column). These lines are Part 1's master solution, written from here.
        positions = torch.arange(max_length, dtype=torch.float).unsqueeze(1)  # (max_length, 1)
        even_columns = torch.arange(0, embedding_dim, 2, dtype=torch.float)  # 2i
        angles = positions / torch.pow(10000.0, even_columns / embedding_dim)
        self.positional_encoding = torch.zeros(max_length, embedding_dim)
        self.positional_encoding[:, 0::2] = torch.sin(angles)
        self.positional_encoding[:, 1::2] = torch.cos(angles[:, : embedding_dim // 2])

    def forward(self, x: Tensor) -> Tensor:
        """Return the table rows [:x.size(1)] as a detached (L, d) tensor on x's device."""
        sequence_length = x.size(1)
        return self.positional_encoding[:sequence_length, :].to(x.device).detach()


class TransformerEmbedding(nn.Module):
    """Token embedding plus positional encoding (no dropout, no scaling)."""

    def __init__(self, vocab_size: int, embedding_dim: int, max_len: int) -> None:
        super().__init__()
        self.tok_emb = TokenEmbedding(vocab_size, embedding_dim)
        self.pos_emb = PositionalEncoding(max_len, embedding_dim)

    def forward(self, x: Tensor) -> Tensor:
        # x: (B, L) token ids -> (B, L, d); the (L, d) table broadcasts over the batch.
        out: Tensor = self.tok_emb(x) + self.pos_emb(x)
        return out


class ScaledDotProductAttention(nn.Module):
    """softmax(QK^T / sqrt(attention_dim), masked with -1e10 where mask == 0) V; no dropout."""

    def __init__(self, embedding_dim: int, attention_dim: int) -> None:
        super().__init__()
        self.embedding_dim = embedding_dim
        self.attention_dim = attention_dim

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
        # query (B, h, Lq, dk), key/value (B, h, Lk, dk), mask broadcastable to (B, h, Lq, Lk).
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.attention_dim)
        if mask is not None:  # the original requires a mask; None = attend everywhere (superset)
            scores = scores.masked_fill(mask == 0, -1e10)
        return torch.matmul(torch.softmax(scores, dim=-1), value)  # (B, h, Lq, dk)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with biased Wq/Wk/Wv/Wo projections and head size d // h.

    The original reshapes key and value with the query's length, so it only works for equal
    lengths. This version reshapes each with its own length: identical numbers for equal lengths,
    and correct for unequal ones (a strict superset).
    """

    def __init__(self, embedding_dim: int, num_heads: int) -> None:
        super().__init__()
        self.attention_dim = embedding_dim // num_heads
        self.num_heads = num_heads
        self.scaled_dot_product_attention = ScaledDotProductAttention(embedding_dim, self.attention_dim)
        inner = self.attention_dim * num_heads
        self.Wq = nn.Linear(embedding_dim, inner)
        self.Wk = nn.Linear(embedding_dim, inner)
        self.Wv = nn.Linear(embedding_dim, inner)
        self.Wo = nn.Linear(inner, embedding_dim)

    def _split(self, x: Tensor) -> Tensor:
        # (B, L, h*dk) -> (B, h, L, dk)
        b, length, _ = x.shape
        return x.reshape(b, length, self.num_heads, self.attention_dim).transpose(1, 2)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
        """Attend from query (B, Lq, d) to key/value (B, Lk, d); mask (B, 1, Lq, Lk), 0 = blocked.

        Returns:
            (B, Lq, d) output of Wo.
        """
        b, lq, _ = query.shape
        heads = self.scaled_dot_product_attention(
            self._split(self.Wq(query)), self._split(self.Wk(key)), self._split(self.Wv(value)), mask
        )  # (B, h, Lq, dk)
        out: Tensor = self.Wo(heads.transpose(1, 2).reshape(b, lq, self.num_heads * self.attention_dim))
        return out


class FeedForwardNeuralNetwork(nn.Module):
    """Position-wise FFN: W1, ReLU, dropout, W2."""

    def __init__(self, embedding_dim: int, feed_forward_dim: int, drop_prob: float) -> None:
        super().__init__()
        self.W1 = nn.Linear(embedding_dim, feed_forward_dim)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(drop_prob)
        self.W2 = nn.Linear(feed_forward_dim, embedding_dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.W2(self.dropout(self.relu(self.W1(x))))  # type: ignore[no-any-return]


class LayerNormalization(nn.Module):
    """Wrapper holding an `nn.LayerNorm` (default eps) in attribute `layer_norm`."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(num_features)

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.layer_norm(x)
        return out


class EncoderLayer(nn.Module):
    """Post-norm encoder layer: x = norm(dropout(sublayer(x)) + x) for self-attention, then FFN."""

    def __init__(self, embedding_dim: int, feed_forward_dim: int, num_heads: int, drop_prob: float) -> None:
        super().__init__()
        self.multi_head_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm1 = LayerNormalization(embedding_dim)
        self.dropout1 = nn.Dropout(drop_prob)
        self.feed_forward_neural_network = FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob)
        self.norm2 = LayerNormalization(embedding_dim)
        self.dropout2 = nn.Dropout(drop_prob)

    def forward(self, x: Tensor, padding_mask: Tensor) -> Tensor:
        residual = x
        x = self.multi_head_attention(x, x, x, padding_mask)
        x = self.norm1(self.dropout1(x) + residual)
        residual = x
        x = self.feed_forward_neural_network(x)
        x = self.norm2(self.dropout2(x) + residual)
        return x


class Encoder(nn.Module):
    """Embedding followed by `num_layers` encoder layers; no dropout after the embedding."""

    def __init__(
        self,
        vocab_size: int,
        sequence_length: int,
        embedding_dim: int,
        feed_forward_dim: int,
        num_heads: int,
        num_layers: int,
        drop_prob: float,
    ) -> None:
        super().__init__()
        self.transformer_embedding = TransformerEmbedding(vocab_size, embedding_dim, sequence_length)
        self.encoder_layers = nn.ModuleList(
            [EncoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob) for _ in range(num_layers)]
        )

    def forward(self, x: Tensor, padding_mask: Tensor) -> Tensor:
        """Encode source ids.

        Args:
            x: (B, L) source ids.
            padding_mask: (B, 1, L, L) key-padding mask, 0 = hidden.

        Returns:
            (B, L, d) encoder output.
        """
        x = self.transformer_embedding(x)
        for encoder_layer in self.encoder_layers:
            x = encoder_layer(x, padding_mask)
        return x


class DecoderLayer(nn.Module):
    """Post-norm decoder layer: masked self-attention, encoder-decoder attention, FFN (graded)."""

    def __init__(self, embedding_dim: int, feed_forward_dim: int, num_heads: int, drop_prob: float) -> None:
        super().__init__()
        self.masked_multi_head_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm1 = LayerNormalization(embedding_dim)
        self.dropout1 = nn.Dropout(drop_prob)
        self.enc_dec_attention = MultiHeadAttention(embedding_dim, num_heads)
        self.norm2 = LayerNormalization(embedding_dim)
        self.dropout2 = nn.Dropout(drop_prob)
        self.feed_forward_neural_network = FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob)
        self.norm3 = LayerNormalization(embedding_dim)
        self.dropout3 = nn.Dropout(drop_prob)

    def forward(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        """Masked self-attention, encoder-decoder attention and FFN, each post-norm with dropout.

        Args:
            dec: (B, T, d) decoder states.
            enc: (B, S, d) encoder output (S == T in the original, see MultiHeadAttention).
            src_mask: (B, 1, T, S) source key-padding mask, 0 = hidden.
            trg_mask: (B, 1, T, T) look-ahead mask, 0 = hidden.

        Returns:
            (B, T, d) new decoder states.
        """
        attended = self.masked_multi_head_attention(dec, dec, dec, trg_mask)
        hidden = self.norm1(self.dropout1(attended) + dec)

        attended = self.enc_dec_attention(hidden, enc, enc, src_mask)
        hidden = self.norm2(self.dropout2(attended) + hidden)

        transformed = self.feed_forward_neural_network(hidden)
        return self.norm3(self.dropout3(transformed) + hidden)  # type: ignore[no-any-return]


class Decoder(nn.Module):
    """Embedding, `num_layers` decoder layers and the output projection to vocabulary logits."""

    def __init__(
        self,
        vocab_size: int,
        sequence_length: int,
        embedding_dim: int,
        feed_forward_dim: int,
        num_heads: int,
        num_layers: int,
        drop_prob: float,
    ) -> None:
        super().__init__()
        self.transformer_embedding = TransformerEmbedding(vocab_size, embedding_dim, sequence_length)
        self.decoder_layers = nn.ModuleList(
            [DecoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob) for _ in range(num_layers)]
        )
        self.dense_layer = nn.Linear(embedding_dim, vocab_size)

    def forward(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        """Teacher-forced decoding of a whole target prefix.

        Args:
            dec: (B, T) target ids (decoder input).
            enc: (B, S, d) encoder output.
            src_mask: (B, 1, T, S) source key-padding mask.
            trg_mask: (B, 1, T, T) look-ahead mask.

        Returns:
            Logits (B, T, vocab_size); position i scores the token at i + 1.
        """
        hidden = self.transformer_embedding(dec)
        for decoder_layer in self.decoder_layers:
            hidden = decoder_layer(hidden, enc, src_mask, trg_mask)
        return self.dense_layer(hidden)  # type: ignore[no-any-return]


class Transformer(nn.Module):
    """Encoder-decoder Transformer; `vocab_size` is a dict keyed by language.

    Unlike the template, the languages are keyword arguments (defaulting to the constants)
    rather than globals read in `__init__`. There is deliberately no `decode` method: honest
    decoding lives in `mtkit.decoding` and `assignments.transformer_mt.reference.fast_decode`.
    """

    def __init__(
        self,
        vocab_size: dict[str, int],
        sequence_length: int,
        embedding_dim: int,
        feed_forward_dim: int,
        num_heads: int,
        num_layers: int,
        drop_prob: float,
        src_language: str = SRC_LANGUAGE,
        tgt_language: str = TGT_LANGUAGE,
    ) -> None:
        super().__init__()
        sizes = (sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers, drop_prob)
        self.encoder = Encoder(vocab_size[src_language], *sizes)
        self.decoder = Decoder(vocab_size[tgt_language], *sizes)

    def forward(
        self, src_batch: Tensor, tgt_batch: Tensor, src_padding_mask: Tensor, tgt_attention_mask: Tensor
    ) -> Tensor:
        """Teacher-forced forward pass.

        Args:
            src_batch: (B, L) source ids.
            tgt_batch: (B, L) target ids (same L as the source: the MHA quirk of the original).
            src_padding_mask: (B, 1, L, L), nonzero where the key is not padding.
            tgt_attention_mask: (B, 1, L, L), nonzero where the key is visible (causal + not pad).

        Returns:
            Decoder logits (B, L, tgt vocab size).
        """
        encoder_output = self.encoder(src_batch, src_padding_mask)
        decoder_output: Tensor = self.decoder(tgt_batch, encoder_output, src_padding_mask, tgt_attention_mask)
        return decoder_output
