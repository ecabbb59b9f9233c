from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 20

@test_case(points=None, hidden=False, 
    failure_message="DecoderLayer.__init__ 에서 주석에 적힌 하위 모듈을 모두 만들었는지 확인하세요.")
def test_q2_decoder_layer_modules(env):
    import torch
    DecoderLayer = env.get('DecoderLayer')
    assert DecoderLayer is not None, 'DecoderLayer 가 정의되어 있지 않습니다. 과제 2 셀을 실행하세요.'
    try:
        layer = DecoderLayer(16, 32, 4, 0.1)
    except Exception as error:
        raise AssertionError(f'DecoderLayer(16, 32, 4, 0.1) 생성 중 {type(error).__name__}: {error}') from None
    kinds = [type(module).__name__ for module in layer.modules()]
    assert kinds.count('MultiHeadAttention') == 2, f"MultiHeadAttention 이 2개(masked self-attention, encoder-decoder attention) 있어야 하는데 {kinds.count('MultiHeadAttention')}개입니다."
    assert kinds.count('FeedForwardNeuralNetwork') == 1, 'FeedForwardNeuralNetwork 가 1개 있어야 합니다.'
    norms = sum((isinstance(module, torch.nn.LayerNorm) for module in layer.modules()))
    assert norms == 3, f'하위 층마다 layer normalization 이 하나씩(3개) 있어야 하는데 {norms}개입니다.'

@test_case(points=None, hidden=False, 
    failure_message="forward 가 세 하위 층을 거친 결과를 return 하는지 확인하세요.")
def test_q2_decoder_layer_forward(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = env['DecoderLayer'](16, 32, 4, 0.1).eval()
        dec, enc = (torch.randn(2, 5, 16), torch.randn(2, 5, 16))
    src_mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    trg_mask = torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 1, 5, 5)
    try:
        out = layer(dec, enc, src_mask, trg_mask)
    except Exception as error:
        raise AssertionError(f'DecoderLayer.forward(dec, enc, src_mask, trg_mask) 호출 중 {type(error).__name__}: {error}') from None
    assert out is not None, 'forward 가 None 을 반환했습니다. 마지막 결과를 return 하세요.'
    assert isinstance(out, torch.Tensor), f'forward 는 텐서를 반환해야 하는데 {type(out).__name__} 입니다.'
    assert tuple(out.shape) == (2, 5, 16), f'입력 dec 모양이 (2, 5, 16)이면 출력도 (2, 5, 16)이어야 하는데 {tuple(out.shape)} 입니다.'
    assert torch.isfinite(out).all(), '출력에 NaN 또는 inf 가 있습니다.'

@test_case(points=None, hidden=False, 
    failure_message="masked self-attention 에는 trg_mask 를, encoder-decoder attention 에는 (query=디코더, key=value=enc, src_mask) 를 주었는지 확인하세요.")
def test_q2_decoder_layer_masks(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = env['DecoderLayer'](16, 32, 4, 0.0).eval()
        dec, enc = (torch.randn(2, 6, 16), torch.randn(2, 6, 16))
        new_dec, new_enc = (torch.randn(2, 6, 16), torch.randn(2, 6, 16))
    src_keep = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=torch.bool)
    src_mask = src_keep[:, None, None, :].expand(2, 1, 6, 6)
    trg_mask = torch.ones(6, 6, dtype=torch.bool).tril().expand(2, 1, 6, 6)

    def run(d, e):
        with torch.no_grad():
            return layer(d, e, src_mask, trg_mask)
    base = run(dec, enc)
    later = dec.clone()
    later[:, 3:] = new_dec[:, 3:]
    assert torch.allclose(run(later, enc)[:, :3], base[:, :3], atol=1e-05), 'dec 의 위치 3 이후만 바꿨는데 위치 0..2 의 출력이 바뀌었습니다: 미래 위치가 보입니다. masked self-attention 에 trg_mask 를 주었는지 확인하세요(src_mask 가 아니라).'
    earlier = dec.clone()
    earlier[:, 1] = new_dec[:, 1]
    assert not torch.allclose(run(earlier, enc)[:, 2:], base[:, 2:], atol=1e-05), 'dec 의 위치 1 을 바꿨는데 뒤쪽 위치의 출력이 그대로입니다: self-attention 이 앞 위치를 보지 않습니다(query=key=value=dec).'
    hidden = enc.clone()
    hidden[1, 4:] = new_enc[1, 4:]
    assert torch.allclose(run(dec, hidden), base, atol=1e-05), '원문 패딩 위치(src_mask 로 가려진 곳)의 enc 를 바꿨는데 출력이 바뀌었습니다: encoder-decoder attention 에 src_mask 가 아닌 마스크(trg_mask?)를 주었거나 mask 를 빠뜨렸습니다.'
    seen = enc.clone()
    seen[:, 0] = new_enc[:, 0]
    assert not torch.allclose(run(dec, seen), base, atol=1e-05), 'enc 를 바꿔도 출력이 그대로입니다: encoder-decoder attention 의 key/value 로 enc 를 쓰세요.'

@test_case(points=None, hidden=False, 
    failure_message="하위 층마다 norm(dropout(하위층 출력) + 하위층 입력) 처럼 residual 을 더했는지 확인하세요.")
def test_q2_decoder_layer_residuals(env):
    import copy
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = env['DecoderLayer'](16, 32, 4, 0.0).eval()
        dec, other, enc = (torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16))
    src_mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    trg_mask = torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 1, 5, 5)
    sublayers = [name for name, module in layer.named_modules() if type(module).__name__ in ('MultiHeadAttention', 'FeedForwardNeuralNetwork')]
    assert sublayers, 'DecoderLayer 에 MultiHeadAttention / FeedForwardNeuralNetwork 가 없습니다.'
    for name in sublayers:
        silenced = copy.deepcopy(layer)
        with torch.no_grad():
            for parameter in silenced.get_submodule(name).parameters():
                parameter.zero_()
            same = torch.allclose(silenced(dec, enc, src_mask, trg_mask), silenced(other, enc, src_mask, trg_mask), atol=1e-06)
        assert not same, f'`{name}` 의 출력을 0으로 만들면 DecoderLayer 의 출력이 입력 dec 와 무관해집니다: `{name}` 둘레의 residual(하위층 출력 + 하위층 입력)이 빠졌습니다.'

