from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 10

@test_case(points=None, hidden=False, 
    failure_message="출력 [:, :-1] 과 정답 [:, 1:] 을 비교하고, 패딩을 뺀 토큰 수로 나눈 스칼라를 반환하는지 확인하세요.")
def test_q5_loss_is_finite_scalar(env):
    import torch
    calculate_loss = env.get('calculate_loss')
    assert callable(calculate_loss), 'calculate_loss 가 정의되어 있지 않습니다. 과제 5 셀을 실행하세요.'
    target_language = env.get('tgt_language', 'en')
    where = env.get('device', 'cpu')
    pad = env.get('pad_idx', 3)
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 11, generator=generator).to(where).requires_grad_()
    tgt = torch.tensor([[1, 4, 5, 6, 2, pad], [1, 7, 2, pad, pad, pad]]).to(where)
    saved = env.get('vocab_size')
    env['vocab_size'] = {env.get('src_language', 'de'): 13, target_language: 11}
    try:
        loss = calculate_loss(logits, tgt, torch.nn.CrossEntropyLoss(reduction='none'))
    except Exception as error:
        raise AssertionError(f'calculate_loss(decoder_output, tgt_batch, criterion) 호출 중 {type(error).__name__}: {error}') from None
    finally:
        env['vocab_size'] = saved
    assert isinstance(loss, torch.Tensor), f'손실은 텐서여야 하는데 {type(loss).__name__} 입니다.'
    assert loss.dim() == 0, f'손실은 스칼라(모양 ())여야 하는데 모양이 {tuple(loss.shape)} 입니다. 평균까지 계산하세요.'
    assert torch.isfinite(loss), f'손실이 유한한 값이 아닙니다: {loss.item()}'
    assert loss.item() > 0, '무작위 logits 의 cross-entropy 는 0보다 커야 합니다.'
    loss.backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0, '손실에서 logits 로 기울기가 흐르지 않습니다(.item() 이나 .detach() 를 쓰지 않았는지 확인하세요).'

@test_case(points=None, hidden=False, 
    failure_message="decoder_output[:, :-1] 을 tgt_batch[:, 1:] 과 비교하고, 패딩이 아닌 타깃 토큰의 손실 합을 그 토큰 수로 나누세요.")
def test_q5_loss_properties(env):
    import math
    import torch
    calculate_loss = env['calculate_loss']
    target_language = env.get('tgt_language', 'en')
    where = env.get('device', 'cpu')
    pad = env.get('pad_idx', 3)
    tgt = torch.tensor([[1, 4, 5, 6, 2, pad], [1, 7, 2, pad, pad, pad]]).to(where)
    saved = env.get('vocab_size')
    env['vocab_size'] = {env.get('src_language', 'de'): 13, target_language: 11}

    def loss_of(logits):
        return float(calculate_loss(logits.to(where), tgt, torch.nn.CrossEntropyLoss(reduction='none')))
    try:
        uniform = loss_of(torch.zeros(2, 6, 11))
        confident = torch.zeros(2, 6, 11)
        for row in range(2):
            for t in range(5):
                confident[row, t, int(tgt[row, t + 1])] = 30.0
        sure = loss_of(confident)
        smoothing = torch.nn.CrossEntropyLoss(reduction='none', label_smoothing=0.1)
        smoothed = float(calculate_loss(confident.to(where), tgt, smoothing))
        noisy = confident.clone()
        generator = torch.Generator().manual_seed(0)
        for row, t in ((0, 4), (0, 5), (1, 2), (1, 3), (1, 4), (1, 5)):
            noisy[row, t] = torch.randn(11, generator=generator) * 5
        changed = loss_of(noisy)
    finally:
        env['vocab_size'] = saved
    assert abs(smoothed - sure) > 0.001, 'label smoothing 이 있는 criterion 을 넘겨도 손실이 같습니다: calculate_loss 가 인자로 받은 criterion 대신 직접 만든 손실 함수를 쓰는 것 같습니다. 넘겨받은 criterion 으로 손실을 계산하세요.'
    assert abs(uniform - math.log(11)) < 0.0001, f'logits 가 모두 0이면 손실은 ln(11) = {math.log(11):.4f} 이어야 하는데 {uniform:.4f} 입니다: 패딩을 포함한 위치 수나 batch 크기로 나누지 않았는지 확인하세요.'
    assert sure < 0.001, f'위치 t 의 출력이 다음 토큰 tgt[:, t+1] 을 확신하는데 손실이 {sure:.4f} 입니다: decoder_output[:, :-1] 과 tgt_batch[:, 1:] 을 비교하세요(한 칸 shift).'
    assert abs(changed - sure) < 0.0001, f'타깃이 패딩인 위치의 예측만 바꿨는데 손실이 {sure:.4f} 에서 {changed:.4f} 로 바뀌었습니다: 패딩 타깃을 빼고 평균을 내세요(패딩까지 평균하면 안 됩니다).'

