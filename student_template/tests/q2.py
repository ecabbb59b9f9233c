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
    assert kinds.count('LayerNormalization') == 3, f"LayerNormalization 이 3개 있어야 하는데 {kinds.count('LayerNormalization')}개입니다."
    assert kinds.count('Dropout') >= 3, '하위 층마다 nn.Dropout 이 하나씩(3개) 있어야 합니다.'

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

