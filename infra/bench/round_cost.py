#!/usr/bin/env python3
"""Orchestration cost per round of a point workflow, from its Temporal history.

    infra/bench/round_cost.py [--temporal bin/temporal] [--address localhost:7233] WORKFLOW_ID

WORKFLOW_ID is a point workflow (sweep/<sweep>/<point>). The script reads its
history (`temporal workflow show --output json`), and the histories of its child
round workflows when its rounds ran as RoundWorkflows, and prints per round (or
per RunRound activity, which may run several rounds) the wall interval, the time
spent in activities' work, and the rest: the orchestration
(docs/architecture.md, "The cost of a round"). Only the latest run of a
Continue-As-New chain is read. Asserts nothing; timings from the event times.
"""
import argparse
import base64
import json
import statistics
import subprocess
from datetime import datetime


def ts(e):
    t = e["eventTime"].rstrip("Z")
    main, frac = (t.split(".") + ["0"])[:2]
    return datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").timestamp() + float("0." + frac)


def attrs(e):
    for k, v in e.items():
        if k.endswith("Attributes"):
            return v
    return {}


def kind(e, suffix):
    return e["eventType"].endswith(suffix)


def history(args, wid):
    out = subprocess.check_output([args.temporal, "workflow", "show", "--address", args.address, "-w", wid, "--output", "json"])
    return json.loads(out)["events"]


def activities(events):
    """(name, scheduled, started, completed, result) of every completed activity."""
    sched, started, out = {}, {}, []
    for e in events:
        a, eid = attrs(e), int(e["eventId"])
        if kind(e, "ACTIVITY_TASK_SCHEDULED"):
            sched[eid] = (a["activityType"]["name"], ts(e))
        elif kind(e, "ACTIVITY_TASK_STARTED"):
            started[int(a["scheduledEventId"])] = ts(e)
        elif kind(e, "ACTIVITY_TASK_COMPLETED"):
            s = int(a["scheduledEventId"])
            res = (a.get("result") or {}).get("payloads", [{}])[0].get("data")
            if isinstance(res, str):
                res = json.loads(base64.b64decode(res))
            out.append((sched[s][0], sched[s][1], started[s], ts(e), res))
    return out


def table(rows):
    keys = list(rows[0])
    print(" ".join(f"{k:>13s}" for k in keys))
    for r in rows:
        print(" ".join(f"{r[k]:13.1f}" for k in keys))
    for name, f in (("median", statistics.median), ("mean", statistics.mean)):
        print(f"{name:>13s} " + " ".join(f"{f([r[k] for r in rows]):13.1f}" for k in keys[1:]))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--temporal", default="bin/temporal")
    p.add_argument("--address", default="localhost:7233")
    p.add_argument("workflow")
    args = p.parse_args()
    ev = history(args, args.workflow)
    children = [attrs(e)["workflowExecution"]["workflowId"] for e in ev if kind(e, "CHILD_WORKFLOW_EXECUTION_COMPLETED")]
    done = [ts(e) for e in ev if kind(e, "CHILD_WORKFLOW_EXECUTION_COMPLETED")]
    rows = []
    if children:
        # Round workflows: the interval between two rounds' completions,
        # minus the training span and the other activities' work.
        for i in range(1, len(children)):
            acts = activities(history(args, children[i]))
            train = [a for a in acts if a[0] == "TrainClients"]
            work = (max(a[3] for a in train) - min(a[2] for a in train)) if train else 0
            work += sum(a[3] - a[2] for a in acts if a[0] != "TrainClients")
            wall = done[i] - done[i - 1]
            rows.append({"round": i + 1, "wall_ms": 1000 * wall, "work_ms": 1000 * work, "orch_ms": 1000 * (wall - work)})
        table(rows)
        print(f"child rounds: orchestration {statistics.mean(r['orch_ms'] for r in rows):.1f} ms per round")
        return
    runs = [a for a in activities(ev) if a[0] == "RunRound"]
    for i in range(1, len(runs)):
        _, s, b, c, res = runs[i]
        n = len((res or {}).get("rounds") or []) or 1
        wall = c - runs[i - 1][3]
        rows.append({"rounds": n, "wall_ms": 1000 * wall, "work_ms": 1000 * (c - b), "orch_ms": 1000 * (wall - (c - b))})
    table(rows)
    n = sum(r["rounds"] for r in rows)
    print(f"RunRound: {n} rounds in {len(rows)} activities; orchestration "
          f"{sum(r['orch_ms'] for r in rows) / len(rows):.1f} ms per activity, {sum(r['orch_ms'] for r in rows) / n:.1f} ms per round")


if __name__ == "__main__":
    main()
