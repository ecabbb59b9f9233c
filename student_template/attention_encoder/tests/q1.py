from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 15

@test_case(points=None, hidden=False, 
    failure_message="forward 가 softmax(...) @ value 를 (B, h, L_q, d_v) 모양으로 반환하는지 확인하세요.")
def test_q1_shape(env):
    import torch
    attention_class = env.get('ScaledDotProductAttention')
    assert attention_class is not None, 'ScaledDotProductAttention 이 정의되어 있지 않습니다. 과제 1 셀을 실행하세요.'
    attention = attention_class(8, 4)
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(2, 3, 5, 4, generator=generator)
    key = torch.randn(2, 3, 6, 4, generator=generator)
    value = torch.randn(2, 3, 6, 7, generator=generator)
    mask = torch.ones(2, 1, 5, 6, dtype=torch.bool)
    out = attention(query, key, value, mask)
    assert isinstance(out, torch.Tensor), f'텐서를 반환해야 하는데 {type(out).__name__} 입니다. return 을 빠뜨렸나요?'
    assert tuple(out.shape) == (2, 3, 5, 7), f'출력 모양은 (2, 3, 5, 7) 이어야 하는데 {tuple(out.shape)} 입니다. 가중치 (B, h, L_q, L_k) @ value (B, h, L_k, d_v) 를 계산하세요.'

@test_case(points=None, hidden=False, 
    failure_message="점수를 sqrt(attention_dim) 으로 나누고, 가려진 key 의 점수를 softmax 전에 -1e10 으로 바꿨는지 확인하세요.")
def test_q1_by_hand(env):
    import math
    import torch
    attention = env['ScaledDotProductAttention'](8, 4)
    query = torch.tensor([[[[2.0, 0.0, 0.0, 0.0]]]])
    key = torch.tensor([[[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])
    value = torch.tensor([[[[1.0], [0.0]]]])
    got = float(attention(query, key, value, torch.tensor([[[[1, 1]]]])))
    if abs(got - math.e ** 2 / (math.e ** 2 + 1)) < 0.0001:
        raise AssertionError('결과가 0.8808 입니다: 점수를 sqrt(attention_dim) 으로 나누지 않았습니다.')
    if abs(got - 0.5) < 0.0001:
        raise AssertionError('결과가 0.5 입니다: 가중치가 query 와 key 에 따라 달라지지 않습니다. 점수 query @ key^T 를 쓰세요.')
    assert abs(got - math.e / (math.e + 1)) < 0.0001, f'손으로 계산한 값은 e/(e+1) = 0.7311 인데 {got:.4f} 입니다. sqrt(embedding_dim) 이 아니라 sqrt(attention_dim) 으로 나누세요.'
    blocked = float(attention(query, key, value, torch.tensor([[[[0, 1]]]])))
    assert abs(blocked) < 1e-06, f'값 1 을 가진 key 를 가렸으니 결과는 0 이어야 하는데 {blocked:.4f} 입니다. 가려진 점수를 softmax 전에 -1e10 으로 바꾸세요.'

@test_case(points=None, hidden=False, 
    failure_message="softmax 를 마지막 차원(key 축)에 적용했는지, 가려진 key 의 가중치가 0 인지 확인하세요.")
def test_q1_weights(env):
    import torch
    attention = env['ScaledDotProductAttention'](8, 4)
    generator = torch.Generator().manual_seed(1)
    query = torch.randn(1, 2, 3, 4, generator=generator)
    key = torch.randn(1, 2, 5, 4, generator=generator)
    identity = torch.eye(5).expand(1, 2, 5, 5)
    mask = torch.tensor([[[[1, 1, 1, 0, 0]] * 3]])
    weights = attention(query, key, identity, mask)
    sums = weights.sum(-1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-05), f'query 마다 가중치의 합은 1 이어야 하는데 {sums[0, 0].tolist()} 입니다. softmax 는 dim=-1 (key 축) 입니다.'
    assert float(weights[..., 3:].abs().max()) < 1e-06, '가려진 key(마스크 0)가 가중치를 받습니다.'

