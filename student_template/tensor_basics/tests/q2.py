from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 40

@test_case(points=None, hidden=False, 
    failure_message="query 와 key 가 모두 0 이면 가중치가 고르게 나뉘어 value 의 평균이 나와야 합니다.")
def test_q2_uniform(env):
    import torch
    value = torch.arange(6.0).reshape(1, 3, 2)
    out = env['attention'](torch.zeros(1, 2, 4), torch.zeros(1, 3, 4), value)
    assert torch.allclose(out, value.mean(dim=1, keepdim=True).expand(1, 2, 2))

