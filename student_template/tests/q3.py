from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 20

@test_case(points=None, hidden=False, 
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
    assert kinds.count('TransformerEmbedding') == 1, 'TransformerEmbedding 이 1개 있어야 합니다.'
    assert kinds.count('DecoderLayer') == 2, f"num_layers=2 이면 DecoderLayer 가 2개 있어야 하는데 {kinds.count('DecoderLayer')}개입니다."
    outputs = [m.out_features for m in decoder.modules() if isinstance(m, torch.nn.Linear)]
    assert 11 in outputs, '어휘 크기(vocab_size)로 바꾸는 nn.Linear(embedding_dim, vocab_size) 가 없습니다.'

@test_case(points=None, hidden=False, 
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

