#!/usr/bin/env python3
"""Joins our figures and the PyTorch peer's into the side-by-side tables of `make bench`.

  join.py models --ours A.json[,B.json] [--purego C.json[,D.json]] [--peer E.json[,F.json]]
      A, B: `starter bench --json` of the default build; C, D: of the pure-Go build (optional);
      E, F: `torch_peer.py models --json` (optional: absent when torch is not installed).
      A model measured several times (peer.sh's BENCH_REPEAT: the runs in the same order in every
      list) is shown by its medians, and each ratio by the median of the runs' own ratios, with
      their range: a run's figures share the machine's state, which drifts between runs.
      Fails if a model's parameter count differs between ours and the peer's.
  join.py demo --rounds R.json [--peer NAME=P.json ...]
      R: infra/bench/rounds.sh's ROUNDS_JSON; P: `torch_peer.py demo --json`.

Standard library only. Figures only: nothing about time is asserted.
"""

import argparse
import json
import sys


def load(paths):
    """The runs of each model in one or more bench reports, in order, the models' names in order of
    first appearance, and the first report's header. A report of one model lends it the process's
    peak memory."""
    runs, order, head = {}, [], None
    for p in filter(None, (paths or "").split(",")):
        with open(p) as f:
            rep = json.load(f)
        head = head or rep
        if len(rep["models"]) == 1 and rep.get("peak_rss_mb"):
            rep["models"][0]["peak_rss_mb"] = rep["peak_rss_mb"]  # one model per process: its peak memory
        for m in rep["models"]:
            if m["name"] not in runs:
                order.append(m["name"])
            runs.setdefault(m["name"], []).append(m)
    return head, runs, order


def median(xs):
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def rate(runs, key="samples_per_s"):
    """The median of a model's runs' figure, formatted."""
    return f"{median([r[key] for r in runs]):,.0f}"


def ratio(a, b):
    """The median of the runs' ratios a/b (runs paired in order), with their range when there are
    several."""
    rs = [x["samples_per_s"] / y["samples_per_s"] for x, y in zip(a, b)]
    return f"{median(rs):.2f}" + (f" ({min(rs):.2f}-{max(rs):.2f})" if len(rs) > 1 else "")


def peak(runs):
    ps = [r["peak_rss_mb"] for r in runs if r.get("peak_rss_mb")]
    return f"{max(ps):,.0f}" if ps else "-"


def table(rows, head):
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print(line(head))
    for r in rows:
        print(line(r))


def cmd_models(a):
    ours_h, ours, order = load(a.ours)
    pg_h, pg, _ = load(a.purego)
    peer_h, peer, _ = load(a.peer)
    bad = [n for n in order if n in peer and peer[n][0]["params"] != ours[n][0]["params"]]
    head = ["model", "params", "PyTorch samples/s", f"ours ({ours_h['blas']} build) samples/s", "ours/PyTorch",
            "PyTorch peak MB", "ours peak MB"]
    if pg:
        head += ["pure Go build samples/s", "pure Go/PyTorch", "ours/pure Go"]
    rows = []
    for n in order:
        o, t, g = ours[n], peer.get(n), pg.get(n)
        params = o[0]["params"]
        row = [n, params if not t or t[0]["params"] == params else f"{params} (PyTorch {t[0]['params']}!)",
               rate(t) if t else "-", rate(o), ratio(o, t) if t else "-",
               peak(t) if t else "-", peak(o)]
        if pg:
            row += [rate(g) if g else "-", ratio(g, t) if g and t else "-", ratio(o, g) if g else "-"]
        rows.append(row)
    runs = max(len(r) for r in ours.values())
    print()
    print(f"Training speed, {ours_h['cores']} cores, batch 50, SGD, {ours[order[0]][0]['clients']} clients at once "
          f"(ours: goroutines; PyTorch: processes with one thread each); samples/s of all clients together"
          + (f", medians of {runs} runs (each model's figures back to back in every run; a ratio is the median "
             f"of the runs' own ratios, their range in brackets)" if runs > 1 else "") + ":")
    table(rows, head)
    print(f"ours: build {ours_h['version']}, products {ours_h['blas_core']}, "
          f"elementwise {ours_h['elementwise']}; SGEMM {ours_h['machine_sgemm_gflops']:.1f} GFLOP/s"
          + (f"; pure Go: build {pg_h['version']}, products {pg_h['blas_core']}, elementwise {pg_h['elementwise']}"
             if pg else ""))
    print("peak MB: resident memory at its peak (the largest of the runs); PyTorch's summed over its client "
          "processes (each holds its own Python and torch), ours one process training the clients at once "
          "(starter bench --models NAME)")
    if peer_h:
        print(f"PyTorch {peer_h['torch']} (torch.set_num_threads(1) per client process); alone (one client): "
              + ", ".join(f"{n} {rate(peer[n], 'samples_per_s_1')} vs ours {rate(ours[n], 'samples_per_s_1')}"
                          for n in order if n in peer))
    else:
        print("PyTorch: not installed, no peer figures ('make torch' installs Debian's python3-torch)")
    if bad:
        sys.exit(f"join: parameter counts differ between ours and PyTorch for {', '.join(bad)}: the peer is not the same model")


def cmd_demo(a):
    with open(a.rounds) as f:
        r = json.load(f)
    ours = [("ours, in-process (starter run --local)", 1000 * r["in_process_s_per_round"]),
            ("ours, through Temporal (dev server, one worker)", 1000 * r["temporal_s_per_round"])]
    peers = []
    for spec in a.peer or []:
        label, path = spec.split("=", 1)
        with open(path) as f:
            p = json.load(f)
        peers.append((f"PyTorch loop, {label}", p["ms_per_round"], p))
    print()
    print(f"Demo workload ({r['spec']}: {r['rounds']} rounds; FedAvg, MLP, 10 clients x 10 steps of 50 a round, "
          f"with the demo's default measurements); ms per round, wall time over all rounds, start-up included:")
    rows = [[label, f"{ms:,.0f}", "", ""] for label, ms, _ in peers]
    for label, ms in ours:
        rows.append([label, f"{ms:,.0f}"] + ([f"{p[1] / ms:.2f}" for p in peers[:1]] or ["-"])
                    + ([f"{min(p[1] for p in peers) / ms:.2f}"] if peers else ["-"]))
    table(rows, ["run", "ms/round", "speed vs PyTorch 1 thread", "vs fastest PyTorch"])
    print(f"ours: build {r['version']}; Temporal / in-process {r['temporal_s_per_round'] / r['in_process_s_per_round']:.2f}; "
          f"identical final models in both modes: {r['identical']}")
    if peers:
        print("PyTorch final test accuracies (ours: the sweep's results): "
              + "; ".join(f"{label.split(', ', 1)[1]}: " + ", ".join(f"{x:.3f}" for x in p["final_accuracy"])
                          for label, _, p in peers))
    else:
        print("PyTorch: no peer figures (see above why)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("models")
    m.add_argument("--ours", required=True)
    m.add_argument("--purego", default="")
    m.add_argument("--peer", default="")
    d = sub.add_parser("demo")
    d.add_argument("--rounds", required=True)
    d.add_argument("--peer", action="append", help="LABEL=FILE")
    a = ap.parse_args()
    cmd_models(a) if a.cmd == "models" else cmd_demo(a)


if __name__ == "__main__":
    main()
