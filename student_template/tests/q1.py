from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 10

@test_case(points=2, hidden=False, 
    failure_message="과제 1 셀을 다시 실행하고 반환값의 모양을 확인하세요.")
def test_q1_mask_shape(env):
    import torch
    make_mask = env.get('create_look_ahead_mask_for_attention')
    assert callable(make_mask), 'create_look_ahead_mask_for_attention 이 정의되어 있지 않습니다. 과제 1 셀을 실행하세요.'
    pad = env.get('pad_idx', 3)
    batch = torch.tensor([[1, 7, 8, 9, 2], [1, 5, 2, pad, pad]])
    try:
        mask = make_mask(batch, pad)
    except Exception as error:
        raise AssertionError(f'create_look_ahead_mask_for_attention(batch, pad_idx) 호출 중 {type(error).__name__}: {error} — 빈칸(look_ahead_mask = ...)을 채웠는지 확인하세요.') from None
    assert isinstance(mask, torch.Tensor), f'텐서를 반환해야 하는데 {type(mask).__name__} 을(를) 반환했습니다.'
    assert tuple(mask.shape) == (2, 1, 5, 5), f'batch 모양이 (2, 5)이면 mask 모양은 (2, 1, 5, 5)여야 하는데 {tuple(mask.shape)} 입니다.'

@test_case(points=4, hidden=False, 
    failure_message="하삼각 행렬(j <= i 인 곳만 1)을 만들었는지, 패딩 마스크와 합쳐졌는지 확인하세요.")
def test_q1_mask_causal_and_padding(env):
    import torch
    make_mask = env['create_look_ahead_mask_for_attention']
    pad = env.get('pad_idx', 3)
    batch = torch.tensor([[1, 7, 8, 9, 2], [1, 5, 2, pad, pad]])
    visible = make_mask(batch, pad).detach().cpu() != 0
    later = torch.ones(5, 5, dtype=torch.bool).triu(diagonal=1)
    assert not visible[:, 0][:, later].any(), '위치 i 가 뒤쪽 위치 j > i 를 볼 수 있습니다. 대각선 위쪽은 0이어야 합니다.'
    assert visible[0, 0].diagonal().all(), '패딩이 없는 문장에서 각 위치는 자기 자신을 볼 수 있어야 합니다(대각선이 1).'
    assert not visible[1, 0, :, 3:].any(), '패딩 토큰(key) 열은 0이어야 합니다. 아래 줄의 패딩 마스크와의 결합을 지우지 않았는지 확인하세요.'

@test_case(points=4, hidden=False, 
    failure_message="패딩이 없는 위치에서는 j <= i 인 칸이 모두 1이어야 합니다. 하삼각을 만들 때 diagonal 인자나 전치(transpose)를 확인하세요.")
def test_q1_mask_allows_the_past(env):
    import torch
    make_mask = env['create_look_ahead_mask_for_attention']
    pad = env.get('pad_idx', 3)
    batch = torch.tensor([[1, 7, 8, 9, 2], [1, 5, 2, pad, pad]])
    visible = make_mask(batch, pad).detach().cpu() != 0
    past = torch.ones(5, 5, dtype=torch.bool).tril()
    assert torch.equal(visible[0, 0], past), f'패딩이 없는 첫 문장의 마스크는 5x5 하삼각(대각선 포함)이어야 하는데 {visible[0, 0].int().tolist()} 입니다. 막힌 칸이 있다면 diagonal 인자를, 위쪽이 열려 있다면 tril/triu 를 확인하세요.'
    assert torch.equal(visible[1, 0, :, :3], past[:, :3]), f'둘째 문장의 패딩이 아닌 열(key 0..2)은 하삼각이어야 하는데 {visible[1, 0, :, :3].int().tolist()} 입니다. 패딩 마스크를 query 행에 적용하지 않았는지 확인하세요.'

