from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 20

@test_case(points=None, hidden=False, 
    failure_message="Transformer.forward 에서 인코더와 디코더를 차례로 호출하고 디코더 출력을 반환하는지 확인하세요.")
def test_q4_transformer_forward(env):
    import torch
    Transformer = env.get('Transformer')
    assert Transformer is not None, 'Transformer 가 정의되어 있지 않습니다. 과제 4 셀을 실행하세요.'
    languages = (env.get('src_language', 'de'), env.get('tgt_language', 'en'))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = Transformer({languages[0]: 13, languages[1]: 11}, 8, 16, 32, 4, 2, 0.1).eval()
    src = torch.tensor([[1, 4, 5, 6, 2, 3], [1, 7, 8, 2, 3, 3]])
    tgt = torch.tensor([[1, 9, 10, 2, 3, 3], [1, 4, 5, 6, 7, 2]])
    src_mask = (src != 3)[:, None, None, :].expand(2, 1, 6, 6)
    tgt_mask = torch.ones(6, 6, dtype=torch.bool).tril() & (tgt != 3)[:, None, None, :]
    try:
        out = model(src, tgt, src_mask, tgt_mask)
    except Exception as error:
        raise AssertionError(f'model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask) 호출 중 {type(error).__name__}: {error}') from None
    assert isinstance(out, torch.Tensor), f'forward 는 디코더의 logits 텐서를 반환해야 하는데 {type(out).__name__} 입니다.'
    assert tuple(out.shape) == (2, 6, 11), f'logits 모양은 (batch_size, tgt_length, 번역 어휘 크기) = (2, 6, 11)이어야 하는데 {tuple(out.shape)} 입니다.'
    assert torch.isfinite(out).all(), '출력에 NaN 또는 inf 가 있습니다.'

@test_case(points=None, hidden=False, 
    failure_message="process_batch_for_train 의 모델 호출 한 줄(decoder_output = ...)을 채웠는지 확인하세요.")
def test_q4_train_step_calls_model(env):
    import torch
    step = env.get('process_batch_for_train')
    assert callable(step), 'process_batch_for_train 이 정의되어 있지 않습니다. 과제 4의 학습 스텝 셀을 실행하세요.'
    languages = (env.get('src_language', 'de'), env.get('tgt_language', 'en'))
    where = env.get('device', 'cpu')
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = env['Transformer']({languages[0]: 13, languages[1]: 11}, 8, 16, 32, 4, 1, 0.0).to(where)
    before = [p.detach().clone() for p in model.parameters()]
    src = torch.tensor([[1, 4, 5, 2], [1, 7, 2, 3]])
    tgt = torch.tensor([[1, 9, 10, 2], [1, 4, 2, 3]])
    saved = {name: env.get(name) for name in ('create_look_ahead_mask_for_attention', 'calculate_loss')}
    env['create_look_ahead_mask_for_attention'] = lambda batch, pad: torch.ones(batch.size(1), batch.size(1), dtype=torch.bool, device=batch.device).tril().expand(batch.size(0), 1, -1, -1)
    env['calculate_loss'] = lambda output, batch, criterion: output.float().square().mean()
    try:
        loss = step(model, src, tgt, torch.nn.CrossEntropyLoss(reduction='none'), torch.optim.SGD(model.parameters(), lr=0.1))
    except Exception as error:
        raise AssertionError(f'process_batch_for_train 호출 중 {type(error).__name__}: {error} — decoder_output = model(...) 줄을 채웠는지 확인하세요.') from None
    finally:
        env.update(saved)
    assert isinstance(loss, float), f'process_batch_for_train 은 loss.item() (float)을 반환해야 하는데 {type(loss).__name__} 입니다.'
    changed = any((not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters())))
    assert changed, '한 스텝 뒤에도 모델 파라미터가 그대로입니다. 모델의 출력으로 손실을 계산했는지 확인하세요.'

