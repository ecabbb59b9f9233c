from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 10

@test_case(points=None, hidden=False, 
    failure_message="W1 -> ReLU -> dropout -> W2 순서인지 확인하세요.")
def test_q4_by_hand(env):
    import torch
    ffn_class = env.get('FeedForwardNeuralNetwork')
    assert ffn_class is not None, 'FeedForwardNeuralNetwork 가 정의되어 있지 않습니다. 과제 4 셀을 실행하세요.'
    ffn = ffn_class(2, 2, 0.0).eval()
    linears = [m for m in ffn.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 2, f'nn.Linear 가 2개(W1, W2) 있어야 하는데 {len(linears)}개입니다.'
    with torch.no_grad():
        for linear in linears:
            linear.weight.copy_(torch.eye(2))
            linear.bias.zero_()
        out = ffn(torch.tensor([[[1.0, -2.0]]]))
    assert tuple(out.shape) == (1, 1, 2), f'출력 모양이 (1, 1, 2) 여야 하는데 {tuple(out.shape)} 입니다.'
    assert torch.allclose(out, torch.tensor([[[1.0, 0.0]]])), f'두 층을 항등 변환으로 두면 [1, -2] 는 ReLU 를 거쳐 [1, 0] 이 되어야 하는데 {out.flatten().tolist()} 입니다.'

@test_case(points=None, hidden=False, 
    failure_message="Dropout 에 drop_prob 를 쓰고 ReLU 뒤에 두었는지 확인하세요.")
def test_q4_dropout(env):
    import torch
    ffn = env['FeedForwardNeuralNetwork'](4, 8, 1.0).train()
    out = ffn(torch.randn(2, 3, 4))
    w2 = [m for m in ffn.modules() if isinstance(m, torch.nn.Linear)][-1]
    assert torch.allclose(out, w2.bias.detach().expand_as(out)), 'drop_prob=1.0, train 모드에서는 W2 의 bias 만 남아야 합니다. dropout 이 W1 과 ReLU 뒤, W2 앞에 있는지 확인하세요.'

