#!/usr/bin/env python3
"""How full can a cluster be at 100% arrived workload in the FGD fill experiment?

At arrived workload x = 100 the submitted pods request exactly the cluster's GPU capacity, so
the unallocated capacity equals the GPU demand of the pods that failed, and it is at least the
free space stranded inside GPUs that host shares. This script bounds it for a trace's pods
scaled to x = 100, ignoring CPU, memory, GPU models, node boundaries and arrival order (all of
which only make it worse):

- floor: an 810-milli pod leaves 190 milli on its GPU that only pods of at most 190 milli can
  use, so if all n of them are placed at least S = 190 n - (demand of those small pods) is
  stranded; if k of them fail instead, the failed demand is at least 810 k while the stranded
  space is at least S - 190 k, and since both equal the unallocated capacity, it is at least
  max(810 k, S - 190 k) >= 0.81 S for any k: a ceiling no policy can pass;
- the packing program (Gilmore-Gomory cutting stock, maximizing packed milli-GPU, solved
  exactly in rationals by column generation) over all GPU requests at x = 100 (whole GPUs
  too): a bound no placement can pass (`gpuplane simulate --mode fill` prints it per seed);
- an offline packing that reaches almost that bound: the program's patterns rounded down, the
  remaining pods best-fit into the remaining GPUs;
- for comparison, best-fit decreasing over the share pods alone, as a packing that knows the
  future but not the optimum.

Usage: tools/share_packing_bound.py ../shared/data/openb/openb_pod_list_default.csv [GPUS]
(GPUS: the cluster's GPU count, 6212 for openb_node_list_gpu_node.csv)
"""

import collections
import csv
import sys
from fractions import Fraction

CAP = 1000


def simplex(columns, rhs):
    """max sum(value_j x_j) s.t. sum(a_j x_j) <= rhs, x >= 0, with rhs >= 0; columns are
    (a, value). Exact (Fractions), Bland's rule. Returns (optimum, duals, x)."""
    rows, n = len(rhs), len(columns)
    tab = [[Fraction(columns[j][0][i]) for j in range(n)] + [Fraction(int(k == i)) for k in range(rows)]
           + [Fraction(rhs[i])] for i in range(rows)]
    cost = [-Fraction(v) for _, v in columns] + [Fraction(0)] * (rows + 1)
    basis = [n + i for i in range(rows)]
    while True:
        enter = next((j for j in range(n + rows) if cost[j] < 0), None)
        if enter is None:
            break
        leave = None
        for i in range(rows):
            if tab[i][enter] > 0:
                ratio = tab[i][-1] / tab[i][enter]
                if leave is None or ratio < leave[0] or (ratio == leave[0] and basis[i] < basis[leave[1]]):
                    leave = (ratio, i)
        r = leave[1]
        p = tab[r][enter]
        tab[r] = [v / p for v in tab[r]]
        for i in range(rows):
            if i != r and tab[i][enter] != 0:
                f = tab[i][enter]
                tab[i] = [a - f * b for a, b in zip(tab[i], tab[r])]
        f = cost[enter]
        cost = [a - f * b for a, b in zip(cost, tab[r])]
        basis[r] = enter
    x = [Fraction(0)] * n
    for i, b in enumerate(basis):
        if b < n:
            x[b] = tab[i][-1]
    return cost[-1], cost[n:n + rows], x


def best_pattern(sizes, prices):
    """The multiset of sizes within one GPU of largest sum(size - price) (unbounded knapsack)."""
    best, choice = [Fraction(0)] * (CAP + 1), [None] * (CAP + 1)
    for u in range(1, CAP + 1):
        best[u] = best[u - 1]
        for i, s in enumerate(sizes):
            if s <= u and s - prices[i] > 0 and best[u - s] + s - prices[i] > best[u]:
                best[u], choice[u] = best[u - s] + s - prices[i], i
    counts, u = [0] * len(sizes), CAP
    while u > 0:
        if choice[u] is None:
            u -= 1
        else:
            counts[choice[u]] += 1
            u -= sizes[choice[u]]
    return counts, best[CAP]


def packing_program(sizes, counts, gpus):
    """Column generation; returns (optimum in milli, [(pattern counts, GPUs)])."""
    columns, rhs = [], [gpus] + counts
    while True:
        value, duals, x = simplex(columns, rhs)
        pattern, reduced = best_pattern(sizes, duals[1:])
        if reduced <= duals[0]:
            return value, [(columns[j][0][1:], x[j]) for j in range(len(columns)) if x[j] > 0]
        columns.append(([1] + pattern, sum(k * s for k, s in zip(pattern, sizes))))


def best_fit(items, bins, limit):
    """Best fit of `items` (largest first) into free spaces `bins`, opening GPUs up to `limit`
    bins in all; returns the packed milli."""
    packed = 0
    for s in sorted(items, reverse=True):
        best = min((i for i, free in enumerate(bins) if free >= s), key=lambda i: bins[i], default=None)
        if best is None and len(bins) < limit:
            bins.append(CAP)
            best = len(bins) - 1
        if best is not None:
            bins[best] -= s
            packed += s
    return packed


def main():
    path = sys.argv[1]
    gpus = int(sys.argv[2]) if len(sys.argv) > 2 else 6212
    per_gpu, demand = collections.Counter(), 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            n, m = int(row["num_gpu"]), int(row["gpu_milli"])
            if n <= 0:
                continue
            demand += n * (min(m, CAP) if n == 1 else CAP)
            per_gpu[min(m, CAP) if n == 1 else CAP] += n
    scale = gpus * CAP / demand  # trace copies arrived at x = 100
    counts = {s: round(k * scale) for s, k in per_gpu.items()}
    shares = [s for s, k in counts.items() if s < CAP for _ in range(k)]
    small = sum(s for s in shares if s <= 190)
    floor = max(0, 190 * counts.get(810, 0) - small) / CAP
    print(f"{path}: {len(shares)} share pods and {counts.get(CAP, 0)} whole GPUs at x=100 "
          f"({sum(shares) / CAP:.1f} + {counts.get(CAP, 0)} GPUs of demand, {gpus} GPUs)")
    print(f"  any policy: at least {0.81 * floor:.1f} GPUs unallocated -> allocation <= "
          f"{100 - 0.81 * floor * 100 / gpus:.2f}%")
    print(f"  every 810-milli pod placed: {floor:.1f} GPUs stranded -> allocation <= "
          f"{100 - floor * 100 / gpus:.2f}%")
    sizes = sorted(counts)
    optimum, patterns = packing_program(sizes, [counts[s] for s in sizes], gpus)
    print(f"  packing program (no placement can pass it): allocation <= "
          f"{float(optimum) * 100 / (gpus * CAP):.2f}%")
    left, used, packed = dict(counts), 0, 0
    for pattern, x in patterns:
        k = int(x)  # rounded down
        for s, c in zip(sizes, pattern):
            left[s] -= c * k
        used += k
        packed += k * sum(s * c for s, c in zip(sizes, pattern))
    packed += best_fit([s for s, k in left.items() for _ in range(k)], [], gpus - used)
    print(f"  an offline packing from it (patterns rounded down, the rest best-fit): allocation "
          f"{packed * 100 / (gpus * CAP):.2f}%")
    share_bins = []
    best_fit(shares, share_bins, gpus)
    stranded = sum(share_bins) / CAP
    print(f"  best-fit decreasing of the share pods alone: {len(share_bins)} GPUs, {stranded:.1f} "
          f"GPUs stranded -> allocation {100 - stranded * 100 / gpus:.2f}%")


if __name__ == "__main__":
    main()
