from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 20

@test_case(points=None, hidden=False, 
    failure_message="Wq, Wk, Wv, Wo 를 nn.Linear(embedding_dim, embedding_dim) 으로 만들었는지 확인하세요.")
def test_q2_layout(env):
    import torch
    mha_class = env.get('MultiHeadAttention')
    assert mha_class is not None, 'MultiHeadAttention 이 정의되어 있지 않습니다. 과제 2 셀을 실행하세요.'
    mha = mha_class(16, 4)
    linears = [m for m in mha.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 4, f'nn.Linear 가 4개(Wq, Wk, Wv, Wo) 있어야 하는데 {len(linears)}개입니다.'
    assert all((tuple(m.weight.shape) == (16, 16) and m.bias is not None for m in linears)), '네 투영은 모두 bias 가 있는 nn.Linear(16, 16) 이어야 합니다.'
    total = sum((p.numel() for p in mha.parameters()))
    assert total == 4 * (16 * 16 + 16), f'파라미터 수가 4 x (16x16 + 16) = 1088 이어야 하는데 {total} 입니다.'

@test_case(points=None, hidden=False, 
    failure_message="출력 모양 (B, L, d) 과, 마스크를 self.attention 에 넘겼는지 확인하세요.")
def test_q2_shape_and_padding(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        mha = env['MultiHeadAttention'](16, 4).eval()
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 5, 16, generator=generator)
    ids = torch.tensor([[4, 5, 6, 7, 8], [4, 5, 6, 3, 3]])
    mask = (ids != 3)[:, None, None, :].expand(2, 1, 5, 5)
    with torch.no_grad():
        out = mha(x, x, x, mask)
        assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 5, 16), f"출력 모양은 (2, 5, 16) 이어야 합니다: {getattr(out, 'shape', type(out).__name__)}"
        changed = x.clone()
        changed[1, 3:] = 5.0
        again = mha(x, changed, changed, mask)
    assert torch.allclose(out[1], again[1], atol=1e-05), '패딩 위치의 key/value 를 바꿨더니 출력이 바뀌었습니다. mask 를 self.attention 에 넘겼나요?'

@test_case(points=None, hidden=False, 
    failure_message="헤드를 나눌 때 view(B, L, h, d_k) 다음 transpose(1, 2) 를 했는지, 합칠 때 반대 순서로 했는지 확인하세요.")
def test_q2_positions_stay_apart(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        mha = env['MultiHeadAttention'](16, 4).eval()
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(1, 6, 16, generator=generator)
    mask = torch.ones(1, 1, 6, 6, dtype=torch.bool)
    order = torch.tensor([5, 2, 0, 4, 1, 3])
    with torch.no_grad():
        out = mha(x, x, x, mask)
        shuffled = mha(x[:, order], x[:, order], x[:, order], mask)
    assert torch.allclose(out[:, order], shuffled, atol=1e-05), '위치 순서를 섞어 넣었더니 출력이 같은 방식으로 섞이지 않았습니다: 헤드를 나누거나 합치는 과정에서 위치가 섞입니다.'

