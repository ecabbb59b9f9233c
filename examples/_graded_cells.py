"""Graded cells of the example notebooks: template stubs, a correct solution, and two planted bugs."""

from __future__ import annotations

import textwrap

from _notebook_cells import code

from assignments.solution_source import reference_statements

_MODEL = "assignments/transformer_mt/reference/model.py"
_BODY = " " * 12  # a method body inside the cells' four-space literal indent


def _reference(definition: str, statements: str) -> str:
    """Statements of the reference model, indented as a method body of these literals (one source)."""
    return textwrap.indent(reference_statements(_MODEL, definition, statements), _BODY)


# ----------------------------------------------------------------------------------- part 1: mask
# The course notebook's blank ends in a space (`look_ahead_mask = `), written \x20 here.
MASK_TEMPLATE = code('''
    def create_look_ahead_mask_for_attention(tgt_batch, pad_idx):
        """
        tgt_batch: (batch_size, tgt_length) 타깃 토큰 번호
        반환: (batch_size, 1, tgt_length, tgt_length) 마스크, 1이면 볼 수 있음
        """
        batch_size, tgt_length = tgt_batch.size()
        padding_mask = create_padding_mask_for_attention(tgt_batch, pad_idx)

        ###### 여기에 코드를 작성하세요 (하삼각 마스크) ######
        look_ahead_mask =\x20
        ###################################################

        look_ahead_mask = look_ahead_mask.to(torch.int) & padding_mask.to(torch.int)
        return look_ahead_mask
''')

_MASK_SOLVED = code('''
    def create_look_ahead_mask_for_attention(tgt_batch, pad_idx):
        """
        tgt_batch: (batch_size, tgt_length) 타깃 토큰 번호
        반환: (batch_size, 1, tgt_length, tgt_length) 마스크, 1이면 볼 수 있음
        """
        batch_size, tgt_length = tgt_batch.size()
        padding_mask = create_padding_mask_for_attention(tgt_batch, pad_idx)

        ###### 여기에 코드를 작성하세요 (하삼각 마스크) ######
        look_ahead_mask = torch.TRIANGLE(torch.ones(tgt_length, tgt_length, device=padding_mask.device))
        look_ahead_mask = look_ahead_mask.view(1, 1, tgt_length, tgt_length)
        ###################################################

        look_ahead_mask = look_ahead_mask.to(torch.int) & padding_mask.to(torch.int)
        return look_ahead_mask
''')
MASK_CORRECT = _MASK_SOLVED.replace("TRIANGLE", "tril")
MASK_BUGGY = _MASK_SOLVED.replace("TRIANGLE", "triu")  # bug (a): each position sees the future, not the past

MASK_TRY = code("""
    example = torch.tensor([[sos_idx, 7, 12, eos_idx, pad_idx]])
    print(create_look_ahead_mask_for_attention(example, pad_idx))
""")
MASK_TRY_OUTPUT_CORRECT = (
    code("""
    tensor([[[[1, 0, 0, 0, 0],
              [1, 1, 0, 0, 0],
              [1, 1, 1, 0, 0],
              [1, 1, 1, 1, 0],
              [1, 1, 1, 1, 0]]]], dtype=torch.int32)
""")
    + "\n"
)
MASK_TRY_OUTPUT_BUGGY = (
    code("""
    tensor([[[[1, 1, 1, 1, 0],
              [0, 1, 1, 1, 0],
              [0, 0, 1, 1, 0],
              [0, 0, 0, 1, 0],
              [0, 0, 0, 0, 0]]]], dtype=torch.int32)
""")
    + "\n"
)

# --------------------------------------------------------------------------- part 2: DecoderLayer
DECODER_LAYER_TEMPLATE = code("""
    class DecoderLayer(nn.Module):
        def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
            super(DecoderLayer, self).__init__()
            ###### 여기에 코드를 작성하세요 ######
            # 속성 이름: masked_multi_head_attention, norm1, dropout1,
            #           enc_dec_attention, norm2, dropout2,
            #           feed_forward_neural_network, norm3, dropout3
            #####################################

        def forward(self, dec, enc, src_mask, trg_mask):
            ###### 여기에 코드를 작성하세요 ######

            #####################################
""")

# The sublayers are the reference's; the two forward methods below are the student's own spellings.
_DECODER_LAYER_INIT = (
    """
    class DecoderLayer(nn.Module):
        def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
            super(DecoderLayer, self).__init__()
            ###### 여기에 코드를 작성하세요 ######
"""
    + _reference("DecoderLayer.__init__", "1:")
    + """
            #####################################
"""
)

# The student's first attempt (left in its cell) feeds the layer input, not the first sublayer's
# output, to the encoder-decoder attention; a later cell redefines the class correctly.
DECODER_LAYER_FIRST_ATTEMPT = code(
    _DECODER_LAYER_INIT
    + """
        def forward(self, dec, enc, src_mask, trg_mask):
            ###### 여기에 코드를 작성하세요 ######
            x = self.norm1(self.dropout1(self.masked_multi_head_attention(dec, dec, dec, trg_mask)) + dec)
            x = self.norm2(self.dropout2(self.enc_dec_attention(dec, enc, enc, src_mask)) + x)
            x = self.norm3(self.dropout3(self.feed_forward_neural_network(x)) + x)
            return x
            #####################################
"""
)

DECODER_LAYER_FIXED_MD = (
    "DecoderLayer 수정: encoder-decoder attention의 query를 첫 번째 하위 층의 출력으로 바꿈 (위 셀은 그대로 둠)"
)

DECODER_LAYER_FIXED = code(
    _DECODER_LAYER_INIT
    + """
        def forward(self, dec, enc, src_mask, trg_mask):
            # 1) masked self-attention
            residual = dec
            x = self.masked_multi_head_attention(dec, dec, dec, trg_mask)
            x = self.norm1(self.dropout1(x) + residual)

            # 2) encoder-decoder attention: query는 디코더, key/value는 인코더 출력
            residual = x
            x = self.enc_dec_attention(x, enc, enc, src_mask)
            x = self.norm2(self.dropout2(x) + residual)

            # 3) feed-forward
            residual = x
            x = self.feed_forward_neural_network(x)
            x = self.norm3(self.dropout3(x) + residual)
            return x
"""
)

DECODER_LAYER_TRY = code("""
    layer = DecoderLayer(16, 32, 4, 0.1).to(device)
    dummy = torch.randn(2, 7, 16, device=device)
    full = torch.ones(2, 1, 7, 7, device=device)
    print(layer(dummy, dummy, full, full).shape)
""")

# -------------------------------------------------------------------------------- part 3: Decoder
# The stray unterminated string after the stub is a quirk of the original template.
DECODER_TEMPLATE = code('''
    class Decoder(nn.Module):
        def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                     drop_prob):
            super(Decoder, self).__init__()
            ###### 여기에 코드를 작성하세요 ######
            # 속성 이름: transformer_embedding, decoder_layers (nn.ModuleList), dense_layer
            #####################################

        def forward(self, dec, enc, src_mask, trg_mask):
            ###### 여기에 코드를 작성하세요 ######

            #####################################
            return output
    """
''')

# The sublayers are the reference's, then a student's print; `forward` fits the original template's
# `return output`.
DECODER_CORRECT = code(
    """
    class Decoder(nn.Module):
        def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                     drop_prob):
            super(Decoder, self).__init__()
            ###### 여기에 코드를 작성하세요 ######
"""
    + _reference("Decoder.__init__", "1:")
    + """
            print(f"Decoder: {num_layers} layers, vocabulary {vocab_size}")
            #####################################

        def forward(self, dec, enc, src_mask, trg_mask):
            ###### 여기에 코드를 작성하세요 ######
            x = self.transformer_embedding(dec)
            for decoder_layer in self.decoder_layers:
                x = decoder_layer(x, enc, src_mask, trg_mask)
            output = self.dense_layer(x)
            #####################################
            return output
"""
)

# ---------------------------------------------------------------------------- part 4: Transformer
_TRANSFORMER = """
    class Transformer(nn.Module):
        def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                     drop_prob):
            super(Transformer, self).__init__()
            self.encoder = Encoder(vocab_size[src_language], sequence_length, embedding_dim, feed_forward_dim,
                                   num_heads, num_layers, drop_prob)
            self.decoder = Decoder(vocab_size[tgt_language], sequence_length, embedding_dim, feed_forward_dim,
                                   num_heads, num_layers, drop_prob)

        def forward(self, src_batch, tgt_batch, src_padding_mask, tgt_attention_mask):
            ###### 여기에 코드를 작성하세요 ######
    FORWARD_BODY
            #####################################
            return decoder_output

        def decode(self, src_batch, tgt_batch):
            # 탐욕적(greedy) 디코딩: 단계마다 점수가 가장 높은 토큰을 고릅니다.
            src_padding_mask = create_padding_mask_for_attention(src_batch, pad_idx)
            tgt_attention_mask = create_look_ahead_mask_for_attention(tgt_batch, pad_idx)
            encoder_output = self.encoder(src_batch, src_padding_mask)
            generated = torch.full_like(tgt_batch, pad_idx)
            generated[:, 0] = sos_idx
            for position in range(1, tgt_batch.size(1)):
                logits = self.decoder(generated, encoder_output, src_padding_mask, tgt_attention_mask)
                generated[:, position] = logits[:, position - 1].argmax(dim=-1)
            return generated
"""
TRANSFORMER_TEMPLATE = code(_TRANSFORMER.replace("    FORWARD_BODY\n", "\n"))
TRANSFORMER_CORRECT = code(_TRANSFORMER.replace("    FORWARD_BODY", _reference("Transformer.forward", ":2")))

# ------------------------------------------------------------------------------- part 5: the loss
_LOSS = '''
    def create_padding_mask_for_loss(batch, pad_idx):
        # 패딩이 아닌 위치가 True
        return (batch != pad_idx).to(device)


    def calculate_loss(decoder_output, tgt_batch, criterion):
        """
        decoder_output: (batch_size, tgt_length, vocab_size)
        tgt_batch: (batch_size, tgt_length)
        criterion: nn.CrossEntropyLoss(reduction='none')
        """
        ###### 여기에 코드를 작성하세요 ######
    LOSS_BODY
        #####################################
        return loss
'''
LOSS_TEMPLATE = code(_LOSS.replace("    LOSS_BODY\n", "\n"))
LOSS_CORRECT = code(
    _LOSS.replace(
        "    LOSS_BODY",
        """\
        prediction = decoder_output[:, :-1].reshape(-1, vocab_size[tgt_language])
        target = tgt_batch[:, 1:].reshape(-1)
        not_padding = create_padding_mask_for_loss(tgt_batch[:, 1:], pad_idx).reshape(-1)
        token_losses = criterion(prediction, target)
        loss = (token_losses * not_padding).sum() / not_padding.sum()""",
    )
)
# Bug (b): padding positions are averaged in, so the loss is divided by every position.
LOSS_BUGGY = code(
    _LOSS.replace(
        "    LOSS_BODY",
        """\
        prediction = decoder_output[:, :-1].reshape(-1, vocab_size[tgt_language])
        target = tgt_batch[:, 1:].reshape(-1)
        loss = criterion(prediction, target).mean()""",
    )
)

# ----------------------------------------------------------------- hyperparameters and the train step
_HYPERPARAMETERS = """
    embedding_dim = EMBEDDING_DIM
    feed_forward_dim = FEED_FORWARD_DIM
    num_layers = NUM_LAYERS
    num_heads = NUM_HEADS
    batch_size = BATCH_SIZE
    drop_prob = DROP_PROB
    learning_rate = LEARNING_RATE
    epochs = EPOCHS

    # BLEU를 볼 때 쓸 영어 토크나이저
    english_tokenizer = spacy.load("en_core_web_sm")

    model = Transformer(vocab_size, max_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                        drop_prob).to(device)
    criterion = nn.CrossEntropyLoss(reduction="none")
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
"""
_CHOSEN = {
    "EMBEDDING_DIM": "256",
    "FEED_FORWARD_DIM": "512",
    "NUM_LAYERS": "3",
    "NUM_HEADS": "8",
    "BATCH_SIZE": "128",
    "DROP_PROB": "0.1",
    "LEARNING_RATE": "5e-4",
    "EPOCHS": "10",
}


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return code(text)


# The untouched template leaves `name = ` with nothing after it (a quirk the loader must survive).
HYPERPARAMETERS_TEMPLATE = _fill(_HYPERPARAMETERS, {key: "" for key in _CHOSEN})
HYPERPARAMETERS_CORRECT = _fill(_HYPERPARAMETERS, _CHOSEN)

_TRAIN_STEP = """
    def process_batch_for_train(model, src_batch, tgt_batch, criterion, optimizer):
        src_batch = src_batch.to(device)
        tgt_batch = tgt_batch.to(device)
        src_padding_mask = create_padding_mask_for_attention(src_batch, pad_idx)
        tgt_attention_mask = create_look_ahead_mask_for_attention(tgt_batch, pad_idx)

        ###### 여기에 코드를 작성하세요 (모델 호출 한 줄) ######
        decoder_output = MODEL_CALL
        #####################################################

        loss = calculate_loss(decoder_output, tgt_batch, criterion)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()
"""
TRAIN_STEP_TEMPLATE = code(_TRAIN_STEP.replace(" MODEL_CALL", " "))
TRAIN_STEP_CORRECT = code(
    _TRAIN_STEP.replace("MODEL_CALL", "model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask)")
)
