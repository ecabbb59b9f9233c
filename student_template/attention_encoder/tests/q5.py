from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 20

@test_case(points=None, hidden=False, 
    failure_message="EncoderLayer.__init__ 에서 주석에 적힌 하위 모듈을 모두 만들었는지 확인하세요.")
def test_q5_modules(env):
    import torch
    layer_class = env.get('EncoderLayer')
    assert layer_class is not None, 'EncoderLayer 가 정의되어 있지 않습니다. 과제 5 셀을 실행하세요.'
    layer = layer_class(16, 32, 4, 0.1)
    kinds = [type(module).__name__ for module in layer.modules()]
    assert kinds.count('MultiHeadAttention') == 1, f"MultiHeadAttention 이 1개 있어야 하는데 {kinds.count('MultiHeadAttention')}개입니다."
    assert kinds.count('FeedForwardNeuralNetwork') == 1, 'FeedForwardNeuralNetwork 가 1개 있어야 합니다.'
    norms = sum((isinstance(module, torch.nn.LayerNorm) for module in layer.modules()))
    assert norms == 2, f'하위 층마다 layer normalization 이 하나씩(2개) 있어야 하는데 {norms}개입니다.'

@test_case(points=None, hidden=False, 
    failure_message="각 하위 층을 norm(dropout(하위층 출력) + 하위층 입력) 으로 마무리했는지 확인하세요.")
def test_q5_post_norm(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = env['EncoderLayer'](16, 32, 4, 0.1).eval()
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(4)) * 3 + 1
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    with torch.no_grad():
        out = layer(x, mask)
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 5, 16), f"출력 모양은 (2, 5, 16) 이어야 합니다: {getattr(out, 'shape', type(out).__name__)}"
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=0.0001), '각 위치의 평균이 0 이 아닙니다: 마지막 단계가 layer normalization 이어야 합니다(post-norm).'
    assert torch.allclose(out.var(-1, unbiased=False), torch.ones(2, 5), atol=0.01), '각 위치의 분산이 1 이 아닙니다: 마지막 단계가 layer normalization 이어야 합니다(post-norm).'

@test_case(points=None, hidden=False, 
    failure_message="padding_mask 를 self-attention 에 넘겼는지 확인하세요.")
def test_q5_padding(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = env['EncoderLayer'](16, 32, 4, 0.0).eval()
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(1, 6, 16, generator=generator)
    ids = torch.tensor([[4, 5, 6, 7, 3, 3]])
    mask = (ids != 3)[:, None, None, :].expand(1, 1, 6, 6)
    changed = x.clone()
    changed[0, 4:] = torch.randn(2, 16, generator=generator) * 3
    with torch.no_grad():
        before, after = (layer(x, mask), layer(changed, mask))
    assert torch.allclose(before[0, :4], after[0, :4], atol=1e-05), '패딩 위치의 입력을 바꿨더니 실제 토큰 위치의 출력이 바뀌었습니다: padding_mask 를 self-attention 에 넘기세요.'

