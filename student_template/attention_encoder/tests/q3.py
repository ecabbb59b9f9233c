from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 10

@test_case(points=None, hidden=False, 
    failure_message="forward 가 표의 앞 x.size(1) 개 행을 (L, embedding_dim) 모양으로 반환하는지 확인하세요.")
def test_q3_shape(env):
    import torch
    pe_class = env.get('PositionalEncoding')
    assert pe_class is not None, 'PositionalEncoding 이 정의되어 있지 않습니다. 과제 3 셀을 실행하세요.'
    pe = pe_class(50, 16)
    rows = pe(torch.full((2, 7), 5))
    assert isinstance(rows, torch.Tensor), f'텐서를 반환해야 하는데 {type(rows).__name__} 입니다.'
    assert tuple(rows.shape) == (7, 16), f'길이 7 인 배치에는 (7, 16) 을 반환해야 하는데 {tuple(rows.shape)} 입니다. 표를 x 에 더하지 말고 행만 반환하세요.'
    assert len(list(pe.parameters())) == 0, '위치 표는 학습하지 않습니다: nn.Parameter 를 쓰지 마세요.'

@test_case(points=None, hidden=False, 
    failure_message="짝수 열은 sin, 홀수 열은 cos, 각도는 pos / 10000^(2i/d) (2i 는 짝수 열 번호) 인지 확인하세요.")
def test_q3_by_hand(env):
    import math
    import torch
    table = env['PositionalEncoding'](6, 8)(torch.zeros(1, 6, dtype=torch.long)).double()
    assert torch.allclose(table[0], torch.tensor([0.0, 1.0] * 4, dtype=torch.double), atol=1e-05), f'0번 행은 [0, 1, 0, 1, ...] 이어야 하는데 {table[0].tolist()} 입니다.'
    assert abs(table[1, 0] - math.sin(1)) < 1e-05, '[1, 0] 은 sin(1) 이어야 합니다(짝수 열은 sin).'
    assert abs(table[1, 1] - math.cos(1)) < 1e-05, '[1, 1] 은 cos(1) 이어야 합니다(홀수 열은 cos).'
    assert abs(table[5, 2] - math.sin(0.5)) < 1e-05, f'[5, 2] 는 sin(5 / 10000^(2/8)) = sin(0.5) = 0.4794 이어야 하는데 {float(table[5, 2]):.4f} 입니다. 지수에 i 가 아니라 2i 를 썼는지 확인하세요.'
    assert abs(table[5, 3] - math.cos(0.5)) < 1e-05, '[5, 3] 은 cos(0.5) 이어야 합니다: 2i+1 번 열은 2i 번 열과 같은 각도를 씁니다.'

