#!/usr/bin/env python3
"""The PyTorch peer of `make bench` (issue 15, target 5).

Two measurements, each the PyTorch counterpart of one of ours:

  models  the protocol of `starter bench` (cmd/starter/bench.go): per model, two
          clients train at once, each in its own process with one thread
          (torch.set_num_threads(1)), then one alone; each client holds 600
          synthetic samples of the dataset's shape (uniform pixels and labels) and
          trains in calls of 10 SGD steps (forward, backward, update; lr 0.01) on
          minibatches of 50 (ResNet-18: calls of 1 step), after one warm-up call.
          Prints samples/s, all clients together and one alone.

  demo    a plain in-process FedAvg loop for examples/demo.yaml: MLP
          784-200-200-10 on Fashion-MNIST (pixels byte/255), 100 clients split by
          NIID-Bench's Dirichlet label skew (min size 10), 10 clients a round drawn
          uniformly, 10 local SGD steps of batch 50 at lr 0.05, θ ← θ + Σ_k (N/m) p_k Δ_k,
          30 rounds, for the spec's 4 points (alpha 0.1 and 0.5 × seeds 1 and 2). It
          measures what the demo's points measure by default (sweep.MetricsConfig):
          each trained client's loss on its full training set before and after local
          training, and every 5 rounds (and the last) the global model on the test
          split, on every client's local test set (test: split, test_fraction 0.2)
          and on every client's full training set. Prints ms per round (wall time of
          the whole run, data loading included, over all rounds).

The models are ours (trainer/net.go) layer by layer; their parameter counts
(trainable weights plus BatchNorm running statistics, as our flat vectors hold
them) are printed for the caller to compare with `starter bench --json`
(infra/bench/peer/join.py fails on a mismatch). Initialisation is PyTorch's
default throughout: it does not change the speed.

Needs Debian's python3-torch (`make torch`); run it with /usr/bin/python3. Only
figures come out of it: nothing is asserted about time.

  torch_peer.py models [--models mlp,lenet] [--seconds 3] [--clients 2] [--json]
  torch_peer.py demo --data DIR [--threads 1] [--procs 1] [--rounds 30] [--json]
"""

import argparse
import gzip
import json
import multiprocessing as mp
import os
import queue
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# The models of `starter bench`: name → input shape (C, H, W). The five paper
# models of issue 15 are PAPER_MODELS; the others are there to compare too.
SHAPES = {
    "logreg": (1, 28, 28),
    "mlp": (1, 28, 28),
    "cnn-hics": (1, 28, 28),
    "cnn-hics-3conv": (1, 28, 28),
    "lenet": (1, 28, 28),
    "cnn-hics-cifar": (3, 32, 32),
    "cnn-fedeba-cifar": (3, 32, 32),
    "resnet18": (3, 32, 32),
}
PAPER_MODELS = ["mlp", "cnn-hics", "lenet", "cnn-fedeba-cifar", "resnet18"]
CLASSES = 10


class BasicBlock(nn.Module):
    """relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), trainer/net.go basicBlock."""

    def __init__(self, cin, c, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != c:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, c, 1, stride, 0, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 for 32×32 inputs (trainer/net.go resnet18; FNR-FL's ResNet18_cifar10)."""

    def __init__(self, cin, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, c0 = [], 64
        for stage, c in enumerate([64, 128, 256, 512]):
            for blk in range(2):
                blocks.append(BasicBlock(c0, c, 2 if stage > 0 and blk == 0 else 1))
                c0 = c
        self.layers = nn.Sequential(*blocks)
        self.out = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.out(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def build(name, shape, classes=CLASSES):
    """The net of trainer/net.go for arch name, input shape (C, H, W)."""
    c, h, w = shape
    if name == "logreg":
        return nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, classes))
    if name == "mlp":  # Hidden [200, 200], ReLU
        return nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, 200), nn.ReLU(), nn.Linear(200, 200), nn.ReLU(),
                             nn.Linear(200, classes))
    if name == "cnn-hics":  # conv5 → PReLU → BN → pool, twice; dropout 0.2; linear
        s = lambda n: ((n - 4) // 2 - 4) // 2
        return nn.Sequential(
            nn.Conv2d(c, 32, 5), nn.PReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 5), nn.PReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
            nn.Dropout(0.2), nn.Flatten(), nn.Linear(32 * s(h) * s(w), classes))
    if name == "cnn-hics-3conv":
        return nn.Sequential(
            nn.Conv2d(c, 32, 3, 1, 1, bias=False), nn.PReLU(), nn.BatchNorm2d(32),
            nn.Conv2d(32, 32, 3, 1, 1), nn.PReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, 1, 1), nn.PReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * (h // 4) * (w // 4), 64), nn.ReLU(), nn.Linear(64, classes))
    if name == "cnn-hics-cifar":
        s = lambda n: ((n - 2) // 2 - 2) // 2 - 2
        return nn.Sequential(
            nn.Conv2d(c, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.2),
            nn.Conv2d(64, 64, 3), nn.Dropout(0.2),
            nn.Flatten(), nn.Linear(64 * s(h) * s(w), 64), nn.ReLU(), nn.Linear(64, classes))
    if name == "cnn-fedeba-cifar":
        s = lambda n: ((n - 4) // 2 - 4) // 2
        return nn.Sequential(
            nn.Conv2d(c, 64, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * s(h) * s(w), 384), nn.ReLU(), nn.Linear(384, 192), nn.ReLU(),
            nn.Linear(192, classes))
    if name == "lenet":  # activation relu (our default)
        s = lambda n: ((n - 4) // 2 - 4) // 2
        return nn.Sequential(
            nn.Conv2d(c, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(16 * s(h) * s(w), 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, classes))
    if name == "resnet18":
        return ResNet18(c, classes)
    raise SystemExit(f"torch_peer: unknown model {name!r}; use {', '.join(SHAPES)}")


def count(model):
    """Our NumParams: trainable parameters plus BatchNorm running mean and variance."""
    n = sum(p.numel() for p in model.parameters())
    return n + sum(b.numel() for k, b in model.named_buffers() if not k.endswith("num_batches_tracked"))


# ---- models: the protocol of `starter bench` ----

def _client(name, batch, seconds, seed, barrier, out):
    """One client process: warm up, wait for the others, train for seconds."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    shape = SHAPES[name]
    model = build(name, shape).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    n = 600
    x, y = torch.rand(n, *shape), torch.randint(0, CLASSES, (n,))
    steps = 1 if name == "resnet18" else 10

    def call():  # one trainer.Train call: `steps` minibatches of an epoch's shuffle
        perm = torch.randperm(n)
        for s in range(steps):
            idx = perm[(s * batch) % n:(s * batch) % n + batch]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
        return steps * len(idx)

    call()
    barrier.wait()
    start, samples = time.perf_counter(), 0
    while samples == 0 or time.perf_counter() - start < seconds:
        samples += call()
    out.put((samples, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def _gather(procs, out, what):
    """Starts procs and returns what each put on out; fails if one exited with an error."""
    for p in procs:
        p.start()
    res = []
    while len(res) < len(procs):
        try:
            res.append(out.get(timeout=1))
        except queue.Empty:
            # A process that failed (missing data, say) puts nothing: stop
            # waiting for it instead of waiting forever.
            for p in procs:
                if p.exitcode not in (None, 0):
                    for q in procs:
                        q.kill()
                    raise SystemExit(f"torch_peer: {what}: a process exited with {p.exitcode}")
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"torch_peer: {what}: a process exited with {p.exitcode}")
    return res


def _concurrent(ctx, name, batch, seconds, clients):
    """samples/s of `clients` processes training at once (all samples over the slowest's time), the
    slowest's time, and the processes' peak resident memory in MB, summed (each holds its own
    Python and torch)."""
    barrier, out = ctx.Barrier(clients), ctx.Queue()
    res = _gather([ctx.Process(target=_client, args=(name, batch, seconds, i, barrier, out)) for i in range(clients)],
                  out, name)
    return sum(s for s, _, _ in res) / max(e for _, e, _ in res), max(e for _, e, _ in res), sum(r for _, _, r in res)


def cmd_models(a):
    ctx = mp.get_context("spawn")
    names = PAPER_MODELS if a.models == "" else list(SHAPES) if a.models == "all" else a.models.split(",")
    rep = {"torch": torch.__version__, "threads_per_client": 1, "models": []}
    for name in names:
        params = count(build(name, SHAPES[name]))
        all_, el, rss = _concurrent(ctx, name, a.batch, a.seconds, a.clients)
        one, el1, rss1 = _concurrent(ctx, name, a.batch, a.seconds / 2, 1)
        m = {"name": name, "params": params, "batch": a.batch, "clients": a.clients,
             "samples_per_s": all_, "samples_per_s_1": one, "seconds": el + el1,
             "peak_rss_mb": rss, "peak_rss_mb_1": rss1}
        rep["models"].append(m)
        if not a.json:
            print(f"{name:<17} {all_:8.0f} samples/s ({a.clients} clients), {one:7.0f} alone, {params} parameters",
                  flush=True)
    if a.json:
        json.dump(rep, sys.stdout, indent=2)
        print()


# ---- demo: a plain FedAvg loop for examples/demo.yaml ----

def read_idx(path):
    """An IDX file (dataset/idx.go), plain or gzipped, as a numpy uint8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fmnist(root):
    def find(stem):
        for name in (stem, stem + ".gz"):
            if os.path.exists(os.path.join(root, name)):
                return os.path.join(root, name)
        raise SystemExit(f"torch_peer: {stem} not found in {root}; run 'make data' (starter data fetch fmnist)")
    xs = [read_idx(find(f"{s}-images-idx3-ubyte")) for s in ("train", "t10k")]
    ys = [read_idx(find(f"{s}-labels-idx1-ubyte")) for s in ("train", "t10k")]
    # x = byte/255 (normalize: unit, torchvision's ToTensor).
    return [(torch.from_numpy(x.reshape(len(x), -1).astype(np.float32) / 255), torch.from_numpy(y.astype(np.int64)))
            for x, y in zip(xs, ys)]


def dirichlet(labels, clients, alpha, rng, min_size=10):
    """NIID-Bench's noniid-labeldir (partition.Dirichlet): per-class Dir(alpha) shares, full clients masked."""
    n = len(labels)
    while True:
        batches = [[] for _ in range(clients)]
        for k in range(CLASSES):
            idx = np.flatnonzero(labels == k)
            rng.shuffle(idx)
            p = rng.dirichlet(np.repeat(alpha, clients))
            p = np.array([q * (len(b) < n / clients) for q, b in zip(p, batches)])
            p = p / p.sum()
            cuts = (np.cumsum(p) * len(idx)).astype(int)[:-1]
            for b, piece in zip(batches, np.split(idx, cuts)):
                b.extend(piece.tolist())
        if min(len(b) for b in batches) >= min_size:
            return [np.sort(np.array(b, dtype=np.int64)) for b in batches]


def client_tests(train_labels, test_labels, parts, fraction, rng):
    """Each client's local test set: fraction·n_k test samples with its label mix (test: split)."""
    by_class = [np.flatnonzero(test_labels == k) for k in range(CLASSES)]
    out = []
    for part in parts:
        counts = np.bincount(train_labels[part], minlength=CLASSES)
        want = np.floor(counts * fraction).astype(int)
        out.append(np.concatenate([rng.choice(by_class[k], min(want[k], len(by_class[k])), replace=False)
                                   for k in range(CLASSES)]).astype(np.int64))
    return out


def run_point(train, test, alpha, seed, a):
    """One point of the demo; returns (rounds, final test accuracy)."""
    (xtr, ytr), (xte, yte) = train, test
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    parts = dirichlet(ytr.numpy(), a.clients, alpha, rng)
    tests = client_tests(ytr.numpy(), yte.numpy(), parts, a.test_fraction, rng)
    parts_t = [torch.from_numpy(p) for p in parts]
    tests_t = [torch.from_numpy(t) for t in tests]
    sizes = np.array([len(p) for p in parts], dtype=np.float64)
    p_k = sizes / sizes.sum()

    model = build("mlp", (1, 28, 28))
    params = list(model.parameters())
    glob = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=a.lr)

    def set_weights(ws):
        with torch.no_grad():
            for p, w in zip(params, ws):
                p.copy_(w)

    @torch.no_grad()
    def loss_acc(idx, x, y):  # loss sum and hits on x[idx], in chunks of 1000
        ls, hits = 0.0, 0
        for i in range(0, len(idx), 1000):
            j = idx[i:i + 1000]
            out = model(x[j])
            ls += F.cross_entropy(out, y[j], reduction="sum").item()
            hits += (out.argmax(1) == y[j]).sum().item()
        return ls, hits

    acc = 0.0
    for r in range(1, a.rounds + 1):
        chosen = rng.choice(a.clients, a.per_round, replace=False)
        delta = [torch.zeros_like(w) for w in glob]
        for k in chosen:
            set_weights(glob)
            idx = parts_t[k]
            if a.metrics:
                loss_acc(idx, xtr, ytr)  # F_k(θ^t)
            perm = idx[torch.randperm(len(idx))]
            b = min(a.batch, len(idx))
            for s in range(a.local_steps):
                lo = (s * b) % len(idx)
                j = perm[lo:lo + b]
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(model(xtr[j]), ytr[j]).backward()
                opt.step()
            if a.metrics:
                loss_acc(idx, xtr, ytr)  # F_k(θ_k)
            wk = a.clients / a.per_round * p_k[k]
            with torch.no_grad():
                for d, p, g in zip(delta, params, glob):
                    d.add_(p - g, alpha=wk)
        for g, d in zip(glob, delta):
            g.add_(d)
        if r % a.eval_every == 0 or r == a.rounds:
            set_weights(glob)
            _, hits = loss_acc(torch.arange(len(yte)), xte, yte)
            acc = hits / len(yte)
            if a.metrics:
                for k in range(a.clients):
                    loss_acc(tests_t[k], xte, yte)
                    loss_acc(parts_t[k], xtr, ytr)
    return a.rounds, acc


def _demo_proc(points, a, out):
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    start = time.perf_counter()
    train, test = load_fmnist(a.data)
    res = [run_point(train, test, alpha, seed, a) for alpha, seed in points]
    out.put((sum(r for r, _ in res), [acc for _, acc in res], time.perf_counter() - start))


def cmd_demo(a):
    points = [(float(p.split(":")[0]), int(p.split(":")[1])) for p in a.points.split(",")]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    shares = [points[i::a.procs] for i in range(a.procs)]
    start = time.perf_counter()
    procs = [ctx.Process(target=_demo_proc, args=(s, a, out)) for s in shares if s]
    res = _gather(procs, out, "demo")
    wall = time.perf_counter() - start
    rounds = sum(r for r, _, _ in res)
    rep = {"torch": torch.__version__, "threads": a.threads, "procs": len(procs), "metrics": a.metrics,
           "points": len(points), "rounds": rounds, "wall_s": wall, "ms_per_round": 1000 * wall / rounds,
           "final_accuracy": [acc for _, accs, _ in res for acc in accs]}
    if a.json:
        json.dump(rep, sys.stdout, indent=2)
        print()
    else:
        print(f"PyTorch FedAvg loop, {len(procs)} process(es) x {a.threads} thread(s): {rounds} rounds in {wall:.1f} s, "
              f"{rep['ms_per_round']:.0f} ms/round; final test accuracy {', '.join(f'{x:.3f}' for x in rep['final_accuracy'])}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("models", help="training speed per model (the protocol of starter bench)")
    m.add_argument("--models", default="", help="comma-separated; default the five paper models; all for all")
    m.add_argument("--batch", type=int, default=50)
    m.add_argument("--seconds", type=float, default=3, help="measuring time per figure")
    m.add_argument("--clients", type=int, default=2, help="client processes at once, one thread each")
    m.add_argument("--json", action="store_true")
    d = sub.add_parser("demo", help="a plain FedAvg loop for examples/demo.yaml, ms per round")
    d.add_argument("--data", default=os.path.join(os.environ.get("FLSWEEP_DATA_DIR", ".data/datasets"), "fmnist"))
    d.add_argument("--threads", type=int, default=1, help="torch threads per process")
    d.add_argument("--procs", type=int, default=1, help="processes sharing the points (the spec's run.concurrency)")
    d.add_argument("--points", default="0.1:1,0.1:2,0.5:1,0.5:2", help="alpha:seed,... (the demo's grid)")
    d.add_argument("--rounds", type=int, default=30)
    d.add_argument("--clients", type=int, default=100)
    d.add_argument("--per-round", type=int, default=10)
    d.add_argument("--local-steps", type=int, default=10)
    d.add_argument("--batch", type=int, default=50)
    d.add_argument("--lr", type=float, default=0.05)
    d.add_argument("--eval-every", type=int, default=5)
    d.add_argument("--test-fraction", type=float, default=0.2)
    d.add_argument("--no-metrics", dest="metrics", action="store_false",
                   help="train and test accuracy only (no client losses, local tests or global training loss)")
    d.add_argument("--json", action="store_true")
    a = ap.parse_args()
    # Debian's torch runs its products on the system BLAS (OpenBLAS), whose own
    # thread pool torch.set_num_threads does not bound: the worker processes,
    # which import torch afresh (spawn), get the thread count through the
    # environment. Without it two one-thread clients ran the MLP 5x slower.
    threads = str(a.threads if a.cmd == "demo" else 1)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    cmd_models(a) if a.cmd == "models" else cmd_demo(a)


if __name__ == "__main__":
    main()
