from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 20

@test_case(points=6, hidden=False, 
    failure_message="Decoder.__init__ 에서 임베딩, DecoderLayer 목록, 출력 선형층을 만들었는지 확인하세요.")
def test_q3_decoder_modules(env):
    import torch
    Decoder = env.get('Decoder')
    assert Decoder is not None, 'Decoder 가 정의되어 있지 않습니다. 과제 3 셀을 실행하세요.'
    try:
        decoder = Decoder(11, 8, 16, 32, 4, 2, 0.1)
    except Exception as error:
        raise AssertionError(f'Decoder(11, 8, 16, 32, 4, 2, 0.1) 생성 중 {type(error).__name__}: {error}') from None
    kinds = [type(module).__name__ for module in decoder.modules()]
    embeds = kinds.count('TransformerEmbedding') == 1 or {'TokenEmbedding', 'PositionalEncoding'} <= set(kinds)
    assert embeds, 'TransformerEmbedding(또는 TokenEmbedding 과 PositionalEncoding)이 있어야 합니다.'
    assert kinds.count('DecoderLayer') == 2, f"num_layers=2 이면 DecoderLayer 가 2개 있어야 하는데 {kinds.count('DecoderLayer')}개입니다."
    outputs = [m.out_features for m in decoder.modules() if isinstance(m, torch.nn.Linear)]
    assert 11 in outputs, '어휘 크기(vocab_size)로 바꾸는 nn.Linear(embedding_dim, vocab_size) 가 없습니다.'

@test_case(points=6, hidden=False, 
    failure_message="Decoder.forward 가 logits (batch_size, tgt_length, vocab_size) 를 반환하는지 확인하세요.")
def test_q3_decoder_forward(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        decoder = env['Decoder'](11, 8, 16, 32, 4, 2, 0.1).eval()
        enc = torch.randn(2, 5, 16)
    dec = torch.tensor([[1, 4, 5, 6, 2], [1, 7, 2, 3, 3]])
    src_mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    trg_mask = torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 1, 5, 5)
    try:
        out = decoder(dec, enc, src_mask, trg_mask)
    except Exception as error:
        raise AssertionError(f'Decoder.forward(dec, enc, src_mask, trg_mask) 호출 중 {type(error).__name__}: {error}') from None
    assert isinstance(out, torch.Tensor), f'forward 는 텐서를 반환해야 하는데 {type(out).__name__} 입니다.'
    assert tuple(out.shape) == (2, 5, 11), f'logits 모양은 (batch_size, tgt_length, vocab_size) = (2, 5, 11)이어야 하는데 {tuple(out.shape)} 입니다.'
    assert torch.isfinite(out).all(), '출력에 NaN 또는 inf 가 있습니다.'

@test_case(points=8, hidden=False, 
    failure_message="Decoder.forward 는 TransformerEmbedding(위치 인코딩 포함) → DecoderLayer 들을 차례로(x, enc, src_mask, trg_mask) → dense_layer 순서로 계산합니다.")
def test_q3_decoder_own_work(env):
    import torch
    from torch import nn

    class StandInLayer(nn.Module):
        """Replaces DecoderLayer here (only the Decoder's own work is checked): adds the mean of the visible positions."""

        def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
            super().__init__()
            self.gain = nn.Parameter(torch.ones(1))
            self.size = embedding_dim
            self.seen = []

        def forward(self, dec, enc, src_mask, trg_mask):
            self.seen.append((dec, enc, src_mask, trg_mask))
            weights = (trg_mask[:, 0] != 0).to(dec.dtype)
            output = dec + self.gain * (weights @ dec) / weights.sum(-1, keepdim=True).clamp(min=1)
            self.seen[-1] = self.seen[-1] + (output,)
            return output
    saved = env.get('DecoderLayer')
    env['DecoderLayer'] = StandInLayer
    try:
        with torch.random.fork_rng():
            torch.manual_seed(0)
            decoder = env['Decoder'](11, 8, 16, 32, 4, 2, 0.0).eval()
            enc = torch.randn(2, 5, 16)
    finally:
        env['DecoderLayer'] = saved
    layers = [m for m in decoder.modules() if isinstance(m, StandInLayer)]
    assert len(layers) == 2, f'num_layers=2 이면 DecoderLayer 를 2개 만들어야 하는데 {len(layers)}개입니다.'
    same_token = torch.tensor([[5, 5, 5, 5, 5], [1, 6, 7, 2, 3]])
    src_mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    trg_mask = torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 1, 5, 5) & (same_token != 3)[:, None, None, :]
    with torch.no_grad():
        out = decoder(same_token, enc, src_mask, trg_mask)
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 5, 11), 'Decoder.forward 는 (batch_size, tgt_length, vocab_size) logits 를 반환해야 합니다.'
    assert not torch.allclose(out[0, 0], out[0, 4], atol=1e-05), '같은 토큰만 있는 문장에서 위치마다 출력이 같습니다: 위치 인코딩이 더해지지 않았습니다. 토큰 임베딩만 쓰지 말고 TransformerEmbedding 전체를 쓰세요.'
    first, second = (layers[0].seen[-1], layers[1].seen[-1])
    for dec_in, enc_in, src_in, trg_in, _ in (first, second):
        assert enc_in is enc or torch.equal(enc_in, enc), 'DecoderLayer 에 인코더 출력 enc 를 그대로 넘기세요.'
        assert torch.equal((src_in != 0).expand(2, 1, 5, 5), src_mask) and torch.equal((trg_in != 0).expand(2, 1, 5, 5), trg_mask), 'DecoderLayer 에 마스크를 (…, src_mask, trg_mask) 순서로 넘기세요: 두 마스크가 바뀌었거나 다른 마스크입니다.'
    assert torch.equal(second[0], first[4]), '두 번째 DecoderLayer 의 입력이 첫 번째 층의 출력이 아닙니다: 각 층의 출력을 다음 층의 입력으로 넘기세요(모든 층에 임베딩을 넣으면 마지막 층만 쓰입니다).'
    dense = [m for m in decoder.modules() if isinstance(m, nn.Linear) and m.out_features == 11]
    assert dense and any((torch.allclose(out, m(second[4]), atol=1e-05) for m in dense)), '출력이 마지막 DecoderLayer 출력에 dense_layer 를 바로 적용한 값이 아닙니다: 그 사이나 뒤에 다른 계산(softmax, log_softmax, 추가한 LayerNorm 등)을 두지 말고 logits 를 반환하세요.'

