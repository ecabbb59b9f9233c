"""Given (not graded) cell sources of the example notebooks, written for this project."""

from __future__ import annotations

from textwrap import dedent


def code(text: str) -> str:
    """Dedent a cell source and drop the leading/trailing newline of the literal."""
    return dedent(text).strip("\n")


INTRO = code("""
    # 트랜스포머 구현 2부: 디코더와 독일어→영어 번역

    1부에서 만든 인코더에 이어, 이번 과제에서는 **디코더 쪽 모듈과 손실 함수**를 직접 작성하고
    Multi30k 데이터로 독일어 문장을 영어로 옮기는 모델을 학습합니다.

    * 채점 대상: look-ahead mask, `DecoderLayer`, `Decoder`, `Transformer.forward`, `calculate_loss`
    * 목표: 검증 데이터에서 BLEU 0.2 이상
    * `###### 여기에 코드를 작성하세요 ######` 로 표시된 곳만 채우면 됩니다.
""")

SETUP_MD = (
    "## 0. 환경 준비\n\n필요한 패키지를 설치하고 spaCy 언어 모델을 내려받습니다. (Colab에서는 한 번만 실행하면 됩니다.)"
)

INSTALL = code("""
    !pip install -q datasets spacy nltk
    !python -m spacy download de_core_news_sm
    !python -m spacy download en_core_web_sm
""")

IMPORTS_MD = "## 1. 라이브러리 불러오기"

IMPORTS = code("""
    import math
    import random
    from collections import Counter

    import torch
    import torch.nn as nn
    from torch import Tensor
    from torch.utils.data import Dataset, DataLoader
    from tqdm.auto import tqdm
""")

CONSTANTS_MD = code("""
    ## 2. 상수

    아래 값은 채점에서도 그대로 쓰이므로 **바꾸지 마세요.** (`max_length`만 20 이상의 값으로 늘릴 수 있습니다.)
""")

CONSTANTS = code("""
    src_language = "de"
    tgt_language = "en"

    special_symbols = ["<unk>", "<sos>", "<eos>", "<pad>"]
    unk_idx, sos_idx, eos_idx, pad_idx = 0, 1, 2, 3

    max_length = 50

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"device: {device}")
""")

DATA_MD = code("""
    ## 3. 데이터 준비

    Hugging Face에 올라와 있는 `bentrevett/multi30k` 데이터셋(학습 29,000쌍, 검증 1,014쌍)을 사용합니다.
    문장은 spaCy 토크나이저로 나누고, 토큰의 텍스트만 사용합니다.
""")

LOAD_DATA = code("""
    from datasets import load_dataset

    multi30k = load_dataset("bentrevett/multi30k")
    train_pairs = multi30k["train"]
    valid_pairs = multi30k["validation"]
    print(len(train_pairs), len(valid_pairs))
""")

TOKENIZERS = code("""
    import spacy

    spacy_models = {
        src_language: spacy.load("de_core_news_sm"),
        tgt_language: spacy.load("en_core_web_sm"),
    }


    def tokenize(sentence, language):
        return [token.text for token in spacy_models[language](sentence)]


    print(tokenize("Zwei Hunde spielen im Schnee.", src_language))
""")

VOCAB_MD = code("""
    ### 어휘 사전

    학습 데이터만으로 어휘 사전을 만듭니다. 특수 토큰 네 개가 맨 앞에 오고, 나머지 토큰은 많이 나온 순서로
    (횟수가 같으면 알파벳 순서로) 번호를 받습니다. 사전에 없는 토큰은 `<unk>`로 바뀝니다.
""")

VOCAB = code("""
    def build_vocabulary(sentences, language):
        counter = Counter()
        for sentence in tqdm(sentences, desc=f"tokenizing {language}"):
            counter.update(tokenize(sentence, language))
        ordered = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
        itos = special_symbols + [token for token, _ in ordered]
        stoi = {token: index for index, token in enumerate(itos)}
        return stoi, itos


    vocab = {}
    for language in [src_language, tgt_language]:
        vocab[language] = build_vocabulary(train_pairs[language], language)

    vocab_size = {language: len(vocab[language][1]) for language in vocab}
    print(vocab_size)
""")

BATCHING_MD = code("""
    ### 배치 만들기

    `<sos>`/`<eos>`를 붙인 길이가 `max_length`보다 긴 문장은 버리고, 모든 문장을 `max_length`까지 `<pad>`로
    채웁니다. 1부의 `MultiHeadAttention`은 query와 key의 길이가 같다고 가정하기 때문입니다.
""")

BATCHING = code("""
    def encode(sentence, language):
        stoi = vocab[language][0]
        return [sos_idx] + [stoi.get(token, unk_idx) for token in tokenize(sentence, language)] + [eos_idx]


    class TranslationDataset(Dataset):
        def __init__(self, pairs):
            self.examples = []
            for pair in tqdm(pairs, desc="encoding"):
                src = encode(pair[src_language], src_language)
                tgt = encode(pair[tgt_language], tgt_language)
                if len(src) <= max_length and len(tgt) <= max_length:
                    self.examples.append((src, tgt))

        def __len__(self):
            return len(self.examples)

        def __getitem__(self, index):
            return self.examples[index]


    def pad_to_max_length(ids):
        return ids + [pad_idx] * (max_length - len(ids))


    def collate_fn(batch):
        src_batch = torch.tensor([pad_to_max_length(src) for src, _ in batch], dtype=torch.long)
        tgt_batch = torch.tensor([pad_to_max_length(tgt) for _, tgt in batch], dtype=torch.long)
        return src_batch, tgt_batch


    train_dataset = TranslationDataset(train_pairs)
    valid_dataset = TranslationDataset(valid_pairs)
    print(len(train_dataset), len(valid_dataset))
""")

GIVEN_MD = code("""
    ## 4. 1부에서 만든 모듈 (수정하지 마세요)

    임베딩, 어텐션, feed-forward 네트워크, layer normalization, 패딩 마스크, 인코더입니다.
""")

EMBEDDINGS = code("""
    class TokenEmbedding(nn.Embedding):
        def __init__(self, vocab_size, embedding_dim):
            super(TokenEmbedding, self).__init__(vocab_size, embedding_dim)


    class PositionalEncoding(nn.Module):
        def __init__(self, max_length, embedding_dim):
            super(PositionalEncoding, self).__init__()
            positions = torch.arange(max_length, dtype=torch.float).unsqueeze(1)
            even_columns = torch.arange(0, embedding_dim, 2, dtype=torch.float)
            angles = positions / torch.pow(10000.0, even_columns / embedding_dim)
            self.positional_encoding = torch.zeros(max_length, embedding_dim)
            self.positional_encoding[:, 0::2] = torch.sin(angles)
            self.positional_encoding[:, 1::2] = torch.cos(angles[:, : embedding_dim // 2])

        def forward(self, x):
            # 입력에 더하지 않고, 입력 길이만큼의 위치 값만 돌려줍니다.
            sequence_length = x.size(1)
            return self.positional_encoding[:sequence_length, :].to(x.device).detach()


    class TransformerEmbedding(nn.Module):
        def __init__(self, vocab_size, embedding_dim, max_len):
            super(TransformerEmbedding, self).__init__()
            self.tok_emb = TokenEmbedding(vocab_size, embedding_dim)
            self.pos_emb = PositionalEncoding(max_len, embedding_dim)

        def forward(self, x):
            return self.tok_emb(x) + self.pos_emb(x)
""")

ATTENTION = code("""
    class ScaledDotProductAttention(nn.Module):
        def __init__(self, embedding_dim, attention_dim):
            super(ScaledDotProductAttention, self).__init__()
            self.embedding_dim = embedding_dim
            self.attention_dim = attention_dim
            self.softmax = nn.Softmax(dim=-1)

        def forward(self, query, key, value, mask):
            scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.attention_dim)
            scores = scores.masked_fill(mask == 0, -1e10)
            return torch.matmul(self.softmax(scores), value)


    class MultiHeadAttention(nn.Module):
        def __init__(self, embedding_dim, num_heads):
            super(MultiHeadAttention, self).__init__()
            self.embedding_dim = embedding_dim
            self.num_heads = num_heads
            self.head_dim = embedding_dim // num_heads
            self.Wq = nn.Linear(embedding_dim, embedding_dim)
            self.Wk = nn.Linear(embedding_dim, embedding_dim)
            self.Wv = nn.Linear(embedding_dim, embedding_dim)
            self.Wo = nn.Linear(embedding_dim, embedding_dim)
            self.attention = ScaledDotProductAttention(embedding_dim, self.head_dim)

        def split_heads(self, x, batch_size, sequence_length):
            return x.view(batch_size, sequence_length, self.num_heads, self.head_dim).transpose(1, 2)

        def forward(self, query, key, value, mask=None):
            batch_size, sequence_length, _ = query.size()
            # key와 value도 query의 길이로 나눕니다: 모든 문장이 같은 길이로 패딩되어 있다고 가정합니다.
            q = self.split_heads(self.Wq(query), batch_size, sequence_length)
            k = self.split_heads(self.Wk(key), batch_size, sequence_length)
            v = self.split_heads(self.Wv(value), batch_size, sequence_length)
            attended = self.attention(q, k, v, mask)
            attended = attended.transpose(1, 2).contiguous().view(batch_size, sequence_length, self.embedding_dim)
            return self.Wo(attended)
""")

FEED_FORWARD = code("""
    class FeedForwardNeuralNetwork(nn.Module):
        def __init__(self, embedding_dim, feed_forward_dim, drop_prob):
            super(FeedForwardNeuralNetwork, self).__init__()
            self.W1 = nn.Linear(embedding_dim, feed_forward_dim)
            self.relu = nn.ReLU()
            self.dropout = nn.Dropout(drop_prob)
            self.W2 = nn.Linear(feed_forward_dim, embedding_dim)

        def forward(self, x):
            return self.W2(self.dropout(self.relu(self.W1(x))))


    class LayerNormalization(nn.Module):
        def __init__(self, num_features):
            super(LayerNormalization, self).__init__()
            self.layer_norm = nn.LayerNorm(num_features)

        def forward(self, x):
            return self.layer_norm(x)
""")

PADDING_MASK = code('''
    def create_padding_mask_for_attention(batch, pad_idx):
        """batch: (batch_size, length) -> (batch_size, 1, length, length), key가 패딩이 아니면 True"""
        batch_size, sequence_length = batch.size()
        key_is_token = (batch != pad_idx).unsqueeze(1).unsqueeze(2)
        mask = key_is_token.repeat(1, 1, sequence_length, 1)
        return mask.to(device)
''')

ENCODER = code("""
    class EncoderLayer(nn.Module):
        def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
            super(EncoderLayer, self).__init__()
            self.multi_head_attention = MultiHeadAttention(embedding_dim, num_heads)
            self.norm1 = LayerNormalization(embedding_dim)
            self.dropout1 = nn.Dropout(drop_prob)
            self.feed_forward_neural_network = FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob)
            self.norm2 = LayerNormalization(embedding_dim)
            self.dropout2 = nn.Dropout(drop_prob)

        def forward(self, x, padding_mask):
            residual = x
            x = self.multi_head_attention(x, x, x, padding_mask)
            x = self.norm1(self.dropout1(x) + residual)
            residual = x
            x = self.feed_forward_neural_network(x)
            x = self.norm2(self.dropout2(x) + residual)
            return x


    class Encoder(nn.Module):
        def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers,
                     drop_prob):
            super(Encoder, self).__init__()
            self.transformer_embedding = TransformerEmbedding(vocab_size, embedding_dim, sequence_length)
            self.encoder_layers = nn.ModuleList(
                [EncoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob) for _ in range(num_layers)]
            )

        def forward(self, x, padding_mask):
            x = self.transformer_embedding(x)
            for encoder_layer in self.encoder_layers:
                x = encoder_layer(x, padding_mask)
            return x
""")

MASK_MD = code("""
    ## 5. 과제 1: look-ahead mask

    디코더의 self-attention은 아직 생성되지 않은 뒤쪽 토큰을 보면 안 됩니다. 위치 `i`가 위치 `j`를 볼 수 있는
    조건은 `j <= i` 이고 `j`번째 토큰이 패딩이 아닌 것입니다. 빈칸에 `(tgt_length, tgt_length)` 크기의
    하삼각 행렬을 만들면, 아래 줄이 패딩 마스크와 합쳐 줍니다. (1 = 볼 수 있음)
""")

DECODER_LAYER_MD = code("""
    ## 6. 과제 2: DecoderLayer

    디코더 층은 세 개의 하위 층으로 이루어집니다.
    1. look-ahead mask(`trg_mask`)를 쓰는 self-attention
    2. query는 디코더 상태, key와 value는 인코더 출력인 encoder-decoder attention (`src_mask`)
    3. feed-forward 네트워크

    각 하위 층 뒤에는 `EncoderLayer`와 똑같이 dropout → 잔차 연결 → layer normalization 을 적용합니다.
    주석에 적힌 속성 이름을 그대로 사용하세요.
""")

DECODER_MD = code("""
    ## 7. 과제 3: Decoder

    임베딩(`transformer_embedding`) → `DecoderLayer` 여러 개(`decoder_layers`) → 어휘 크기로 바꾸는 선형층
    (`dense_layer`) 순서입니다. 출력 크기는 `(batch_size, tgt_length, vocab_size)` 입니다.
""")

TRANSFORMER_MD = code("""
    ## 8. 과제 4: Transformer.forward

    소스 문장을 패딩 마스크와 함께 인코더에 넣고, 타깃 문장 전체를 디코더에 넣어(teacher forcing) 각 위치의
    다음 토큰 점수를 구합니다. 학습 코드(`process_batch_for_train`)의 모델 호출 한 줄도 채워 주세요.
""")

LOSS_MD = code("""
    ## 9. 과제 5: 손실 함수

    디코더 출력의 `t`번째 위치는 타깃의 `t+1`번째 토큰을 맞혀야 합니다. 즉 출력 `[:, :-1]`과 타깃 `[:, 1:]`을
    비교합니다. `criterion`은 `reduction='none'`이므로 토큰마다 손실이 나옵니다. 패딩 위치는 빼고, 남은 손실의
    합을 패딩이 아닌 토큰 수로 나누세요.
""")

TRAINING_MD = code("""
    ## 10. 학습

    하이퍼파라미터를 정하고 모델을 학습합니다. GPU에서 10 epoch 정도면 충분합니다.
""")

TRAIN_LOOP = code("""
    def train(model, data_loader, criterion, optimizer, epochs):
        model.train()
        epoch_losses = []
        for epoch in range(epochs):
            total_loss = 0.0
            progress = tqdm(data_loader, desc=f"epoch {epoch + 1}/{epochs}")
            for src_batch, tgt_batch in progress:
                loss = process_batch_for_train(model, src_batch, tgt_batch, criterion, optimizer)
                total_loss += loss
                progress.set_postfix(loss=f"{loss:.3f}")
            epoch_losses.append(total_loss / len(data_loader))
            print(f"epoch {epoch + 1}: 평균 손실 {epoch_losses[-1]:.4f}")
        return epoch_losses
""")

RUN_AND_PLOT = code("""
    import matplotlib.pyplot as plt
    import seaborn as sns

    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True, collate_fn=collate_fn)
    losses = train(model, train_loader, criterion, optimizer, epochs)

    sns.set_theme(style="whitegrid")
    plt.figure(figsize=(6, 4))
    plt.plot(range(1, len(losses) + 1), losses, marker="o")
    plt.xlabel("epoch")
    plt.ylabel("loss")
    plt.title("training loss")
    plt.show()
""")

EVALUATION_MD = code("""
    ## 11. 평가

    검증 데이터에서 문장별 BLEU의 평균을 구합니다. 0.2 이상이면 통과입니다.
""")

EVALUATION = code("""
    from nltk.translate.bleu_score import sentence_bleu


    def ids_to_tokens(ids, language):
        itos = vocab[language][1]
        tokens = []
        for index in ids:
            if index == eos_idx:
                break
            if index not in (sos_idx, pad_idx):
                tokens.append(itos[index])
        return tokens


    def evaluate_bleu(model, data_loader):
        model.eval()
        scores = []
        with torch.no_grad():
            for src_batch, tgt_batch in tqdm(data_loader, desc="evaluating"):
                src_batch, tgt_batch = src_batch.to(device), tgt_batch.to(device)
                src_padding_mask = create_padding_mask_for_attention(src_batch, pad_idx)
                tgt_attention_mask = create_look_ahead_mask_for_attention(tgt_batch, pad_idx)
                decoder_output = model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask)
                predictions = decoder_output.argmax(dim=-1)
                for predicted, reference in zip(predictions.tolist(), tgt_batch.tolist()):
                    hypothesis = ids_to_tokens(predicted, tgt_language)
                    reference_tokens = ids_to_tokens(reference[1:], tgt_language)
                    scores.append(sentence_bleu([reference_tokens], hypothesis))
        return sum(scores) / len(scores)


    valid_loader = DataLoader(valid_dataset, batch_size=batch_size, shuffle=True, drop_last=True,
                              collate_fn=collate_fn)
    bleu = evaluate_bleu(model, valid_loader)
    print(f"validation BLEU: {bleu:.4f}")
""")
