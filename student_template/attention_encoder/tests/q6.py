from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 15

@test_case(points=None, hidden=False, 
    failure_message="EncoderLayer 를 num_layers 개 새로 만들어 nn.ModuleList(또는 nn.Sequential) 에 담았는지 확인하세요.")
def test_q6_layers(env):
    import torch
    encoder_class = env.get('Encoder')
    assert encoder_class is not None, 'Encoder 가 정의되어 있지 않습니다. 과제 6 셀을 실행하세요.'
    encoder = encoder_class(11, 20, 16, 32, 4, 3, 0.1)
    layers = [m for m in encoder.modules() if type(m).__name__ == 'EncoderLayer']
    assert len(layers) == 3, f'num_layers=3 이면 EncoderLayer 가 3개 등록되어야 하는데 {len(layers)}개입니다. nn.ModuleList(또는 nn.Sequential) 에 담았나요?'
    one_layer = sum((p.numel() for p in layers[0].parameters()))
    total = sum((p.numel() for p in encoder.parameters()))
    assert total == 11 * 16 + 3 * one_layer, f'파라미터 수가 임베딩 11x16 + 층 3개 = {11 * 16 + 3 * one_layer} 이어야 하는데 {total} 입니다. 층마다 새로 만들었는지, 과제에 없는 파라미터(마지막에 더한 LayerNorm, 학습되는 위치 임베딩 등)가 있는지 확인하세요.'

@test_case(points=None, hidden=False, 
    failure_message="임베딩 뒤에 모든 층을 차례로 통과시키고, 각 층에 padding_mask 를 넘겼는지 확인하세요.")
def test_q6_forward(env):
    import torch
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = env['Encoder'](11, 20, 16, 32, 4, 2, 0.0).eval()
    ids = torch.tensor([[4, 5, 5, 6, 3, 3], [7, 8, 9, 10, 4, 5]])
    mask = (ids != 3)[:, None, None, :].expand(2, 1, 6, 6)
    with torch.no_grad():
        out = encoder(ids, mask)
        assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 6, 16), f"출력 모양은 (2, 6, 16) 이어야 합니다: {getattr(out, 'shape', type(out).__name__)}"
        assert not torch.allclose(out[0, 1], out[0, 2], atol=0.0001), '같은 토큰이 다른 위치에서 같은 출력을 냅니다: transformer_embedding(위치 인코딩 포함)을 썼는지 확인하세요.'
        changed = ids.clone()
        changed[0, 4:] = torch.tensor([9, 10])
        again = encoder(changed, mask)
    assert torch.allclose(out[0, :4], again[0, :4], atol=1e-05), '마스크로 가려진 위치의 토큰을 바꿨더니 다른 위치의 출력이 바뀌었습니다: 모든 층에 padding_mask 를 넘기세요.'

