from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 20

@test_case(points=6, hidden=False, 
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

@test_case(points=8, hidden=False, 
    failure_message="forward 는 원문을 원문 패딩 마스크와 함께 인코더에 넣고, 타깃 배치 전체와 인코더 출력, 두 마스크(원문 패딩 마스크, look-ahead mask 순서)를 디코더에 넘겨 그 출력을 반환합니다.")
def test_q4_forward_routes_inputs(env):
    import torch
    from torch import nn

    class StandInDecoder(nn.Module):
        """Replaces Decoder here (only forward's own work is checked); records what it is given."""

        def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers, drop_prob):
            super().__init__()
            self.table = nn.Embedding(vocab_size, embedding_dim)
            self.project = nn.Linear(embedding_dim, vocab_size)
            self.seen = []

        def forward(self, dec, enc, src_mask, trg_mask):
            output = self.project(self.table(dec) + enc.mean(dim=1, keepdim=True))
            self.seen.append((dec, enc, src_mask, trg_mask, output))
            return output
    languages = (env.get('src_language', 'de'), env.get('tgt_language', 'en'))
    saved = env.get('Decoder')
    env['Decoder'] = StandInDecoder
    try:
        with torch.random.fork_rng():
            torch.manual_seed(0)
            model = env['Transformer']({languages[0]: 13, languages[1]: 11}, 8, 16, 32, 4, 1, 0.0).eval()
    finally:
        env['Decoder'] = saved
    decoders = [m for m in model.modules() if isinstance(m, StandInDecoder)]
    encoders = [m for m in model.modules() if type(m).__name__ == 'Encoder']
    assert len(decoders) == 1 and len(encoders) == 1, 'Transformer 에는 Encoder 와 Decoder 가 하나씩 있어야 합니다.'
    src = torch.tensor([[1, 4, 5, 6, 2, 3], [1, 7, 8, 2, 3, 3]])
    tgt = torch.tensor([[1, 9, 10, 2, 3, 3], [1, 4, 5, 6, 7, 2]])
    src_mask = (src != 3)[:, None, None, :].expand(2, 1, 6, 6)
    tgt_mask = torch.ones(6, 6, dtype=torch.bool).tril() & (tgt != 3)[:, None, None, :]
    with torch.no_grad():
        out = model(src, tgt, src_mask, tgt_mask)
        expected_enc = encoders[0](src, src_mask)
    assert decoders[0].seen, 'forward 가 self.decoder 를 호출하지 않습니다.'
    dec_in, enc_in, src_in, trg_in, dec_out = decoders[0].seen[-1]
    assert torch.equal(dec_in, tgt), '디코더의 첫 인자는 tgt_batch 전체여야 합니다(teacher forcing; 원문이나 잘린 타깃이 아니라).'
    assert torch.is_tensor(enc_in) and enc_in.shape == expected_enc.shape and torch.allclose(enc_in, expected_enc, atol=1e-05), '디코더에 넘긴 인코더 출력이 원문을 원문 패딩 마스크와 함께 인코더에 넣은 결과와 다릅니다: 인코더에 마스크를 주고 그 출력을 그대로 넘기세요.'
    assert torch.equal((src_in != 0).expand(2, 1, 6, 6), src_mask) and torch.equal((trg_in != 0).expand(2, 1, 6, 6), tgt_mask), '디코더에 마스크를 (…, src_padding_mask, tgt_attention_mask) 순서로 넘기세요: 두 마스크가 바뀌었습니다.'
    assert torch.is_tensor(out) and torch.equal(out, dec_out), 'forward 는 디코더의 출력(logits)을 그대로 반환해야 합니다.'

@test_case(points=6, hidden=False, 
    failure_message="process_batch_for_train 의 모델 호출 한 줄을 채웠는지, 모델에 원문 배치, 타깃 배치 전체, 원문 패딩 마스크, look-ahead mask 를 이 순서로 넘겼는지 확인하세요.")
def test_q4_train_step_calls_model(env):
    import inspect
    import torch
    from torch import nn
    step = env.get('process_batch_for_train')
    assert callable(step), 'process_batch_for_train 이 정의되어 있지 않습니다. 과제 4의 학습 스텝 셀을 실행하세요.'

    class RecordingModel(nn.Module):
        """Stands in for the Transformer: records its arguments, returns logits (B, T, 11)."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(13, 8)
            self.out = nn.Linear(8, 11)
            self.calls = []

        def forward(self, *args, **kwargs):
            self.calls.append((args, kwargs))
            src, tgt = (list(args) + list(kwargs.values()))[:2]
            return self.out(torch.tanh(self.embed(tgt) + self.embed(src).mean(dim=1, keepdim=True)))
    where = env.get('device', 'cpu')
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = RecordingModel().to(where)
    before = [p.detach().clone() for p in model.parameters()]
    src = torch.tensor([[1, 4, 5, 2], [1, 7, 2, 3]])
    tgt = torch.tensor([[1, 9, 10, 2], [1, 4, 2, 3]])
    criterion, optimizer = (nn.CrossEntropyLoss(reduction='none'), torch.optim.SGD(model.parameters(), lr=0.1))
    tgt_mask = torch.ones(4, 4, dtype=torch.bool).tril() & (tgt != 3)[:, None, None, :]
    stand_ins = {'create_look_ahead_mask_for_attention': lambda batch, pad, *rest: tgt_mask.to(batch.device), 'calculate_loss': lambda output, batch, *rest: output.float().square().mean()}
    roles = {'model': model, 'src': src, 'source': src, 'tgt': tgt, 'trg': tgt, 'target': tgt, 'crit': criterion, 'loss_f': criterion, 'optim': optimizer, 'batch': (src, tgt)}
    names = list(inspect.signature(step).parameters)
    found = [next((value for key, value in roles.items() if key in name.lower()), None) for name in names]
    args = found if all((v is not None for v in found)) else [model, src, tgt, criterion, optimizer]
    bound = {'model': model, 'criterion': criterion, 'optimizer': optimizer}
    swap = {**stand_ins, **{k: v for k, v in bound.items() if not any((v is a for a in args))}}
    missing = object()
    saved = {name: env.get(name, missing) for name in swap}
    env.update(swap)
    try:
        loss = step(*args)
    except Exception as error:
        raise AssertionError(f'process_batch_for_train 호출 중 {type(error).__name__}: {error} — decoder_output = model(...) 줄을 채웠는지 확인하세요.') from None
    finally:
        for name, value in saved.items():
            if value is missing:
                env.pop(name, None)
            else:
                env[name] = value
    assert len(model.calls) == 1, f'한 배치에 모델을 한 번 호출해야 하는데 {len(model.calls)}번 호출했습니다.'
    call, keywords = model.calls[0]
    given = [value.detach().cpu() if torch.is_tensor(value) else value for value in list(call) + list(keywords.values())]
    assert len(given) == 4, 'model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask) 처럼 네 인자를 넘기세요.'
    assert torch.equal(given[0], src) and torch.equal(given[1], tgt), '모델에는 (src_batch, tgt_batch, …) 순서로, tgt_batch 는 자르지 않고 전체를 넘기세요(shift 는 calculate_loss 가 합니다).'
    src_keep = (src != 3)[:, None, None, :].expand(2, 1, 4, 4)
    assert torch.equal((given[2] != 0).expand(2, 1, 4, 4), src_keep), '세 번째 인자는 원문 패딩 마스크(src_padding_mask)여야 합니다: 마스크 순서가 바뀌지 않았는지 확인하세요.'
    assert torch.equal((given[3] != 0).expand(2, 1, 4, 4), tgt_mask), '네 번째 인자는 look-ahead mask(tgt_attention_mask)여야 합니다.'
    assert isinstance(loss, float), f'process_batch_for_train 은 loss.item() (float)을 반환해야 하는데 {type(loss).__name__} 입니다.'
    changed = any((not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters())))
    assert changed, '한 스텝 뒤에도 모델 파라미터가 그대로입니다. loss.backward() 와 optimizer.step() 을 호출했는지 확인하세요.'

