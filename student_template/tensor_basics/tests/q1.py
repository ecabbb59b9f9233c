from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 30

@test_case(points=None, hidden=False, 
    failure_message="softmax([0, 0]) 는 [0.5, 0.5] 입니다: 마지막 차원에서 exp 의 합으로 나눴는지 확인하세요.")
def test_q1_uniform(env):
    import torch
    out = env['softmax'](torch.zeros(2, 2))
    assert torch.allclose(out, torch.full((2, 2), 0.5))

