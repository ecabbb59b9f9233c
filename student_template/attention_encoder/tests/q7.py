from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 10

@test_case(points=None, hidden=False, 
    failure_message="과제 1~6 의 공개 점검을 먼저 통과시키세요: 학습이 진행되지 않으면 어텐션이나 위치 인코딩에 문제가 있습니다.")
def test_q7_learns(env):
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(0)
        encoder = env['Encoder'](14, 10, 16, 32, 2, 1, 0.0)
        head = torch.nn.Linear(16, 14)
        parameters = list(encoder.parameters()) + list(head.parameters())
        optimizer = torch.optim.Adam(parameters, lr=0.003)
        criterion = torch.nn.CrossEntropyLoss(ignore_index=3)
        losses = []
        for _ in range(40):
            inputs, targets = env['reversal_batch'](generator, 32)
            mask = (inputs != 3)[:, None, None, :].expand(-1, 1, 10, 10)
            loss = criterion(head(encoder(inputs, mask)).reshape(-1, 14), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    torch.set_num_threads(threads)
    first, last = (sum(losses[:10]) / 10, sum(losses[-10:]) / 10)
    assert last < first - 0.1, f'40 스텝 동안 손실이 {first:.3f} 에서 {last:.3f} 로 거의 줄지 않았습니다.'

