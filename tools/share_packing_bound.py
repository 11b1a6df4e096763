#!/usr/bin/env python3
"""How full can a cluster be at 100% arrived workload in the FGD fill experiment?

At arrived workload x = 100 the submitted pods request exactly the cluster's GPU capacity, so
the unallocated capacity equals the GPU demand of the pods that failed, and it is at least the
free space stranded inside GPUs that host shares. This script estimates that stranded space
for a trace's share pods (1 GPU, < 1000 milli), scaled to x = 100, ignoring CPU, memory, GPU
models and arrival order (all of which only make it worse):

- floor: an 810-milli pod leaves 190 milli on its GPU that only pods of at most 190 milli can
  use, so if all n of them are placed at least S = 190 n - (demand of those small pods) is
  stranded; if k of them fail instead, the failed demand is at least 810 k while the stranded
  space is at least S - 190 k, and since both equal the unallocated capacity, it is at least
  max(810 k, S - 190 k) >= 0.81 S for any k: a ceiling no policy can pass;
- offline packing, bounds: the Martello-Toth L2 lower bound on the GPUs any packing of all
  these share pods needs, and best-fit decreasing over them at once (a packing that knows the
  future): the best possible packing strands between the two.

Usage: tools/share_packing_bound.py ../shared/data/openb/openb_pod_list_default.csv [GPUS]
(GPUS: the cluster's GPU count, 6212 for openb_node_list_gpu_node.csv)
"""
import collections
import csv
import math
import sys


def l2_bound(items, cap=1000):
    """Martello-Toth L2: a lower bound on the bins needed to pack `items`."""
    best = 0
    for k in sorted({0} | {w for w in items if w <= cap // 2}):
        big = [w for w in items if w > cap - k]
        mid = [w for w in items if cap / 2 < w <= cap - k]
        small = sum(w for w in items if k <= w <= cap / 2)
        room = len(mid) * cap - sum(mid)
        best = max(best, len(big) + len(mid) + max(0, math.ceil((small - room) / cap)))
    return best


def main():
    path = sys.argv[1]
    gpus = int(sys.argv[2]) if len(sys.argv) > 2 else 6212
    shares, demand = [], 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            n, m = int(row["num_gpu"]), int(row["gpu_milli"])
            if n <= 0:
                continue
            demand += n * (min(m, 1000) if n == 1 else 1000)
            if n == 1 and m < 1000:
                shares.append(m)
    scale = gpus * 1000 / demand  # trace copies arrived at x = 100
    counts = collections.Counter(shares)
    items = sorted((s for s, k in counts.items() for _ in range(round(k * scale))), reverse=True)
    small = sum(s for s in items if s <= 190)
    floor = max(0, 190 * round(counts[810] * scale) - small) / 1000
    bins = []
    for s in items:
        best = -1
        for i, free in enumerate(bins):
            if free >= s and (best < 0 or free < bins[best]):
                best = i
        if best < 0:
            bins.append(1000 - s)
        else:
            bins[best] -= s
    packed = sum(bins) / 1000
    lower = (l2_bound(items) * 1000 - sum(items)) / 1000
    print(f"{path}: {len(items)} share pods at x=100 ({sum(items) / 1000:.1f} GPUs of demand)")
    print(f"  any policy: at least {0.81 * floor:.1f} GPUs unallocated -> allocation <= "
          f"{100 - 0.81 * floor * 100 / gpus:.2f}%")
    print(f"  every 810-milli pod placed: {floor:.1f} GPUs stranded -> allocation <= "
          f"{100 - floor * 100 / gpus:.2f}%")
    print(f"  any packing of all share pods (L2 bound): {lower:.1f} GPUs stranded -> allocation "
          f"<= {100 - lower * 100 / gpus:.2f}%")
    print(f"  offline best-fit decreasing: {len(bins)} GPUs, {packed:.1f} GPUs stranded "
          f"-> allocation <= {100 - packed * 100 / gpus:.2f}%")


if __name__ == "__main__":
    main()
