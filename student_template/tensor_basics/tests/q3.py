from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 30

@test_case(points=None, hidden=False, 
    failure_message="정규화한 행의 평균은 beta, 표준편차는 gamma 여야 합니다(eps 가 작을 때).")
def test_q3_moments(env):
    import torch
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    out = env['layer_norm'](x, torch.ones(4), torch.zeros(4))
    assert torch.allclose(out.mean(), torch.tensor(0.0), atol=1e-05)
    assert torch.allclose(out.pow(2).mean(), torch.tensor(1.0), atol=0.001)

