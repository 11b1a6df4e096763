#include "sched/packing_lp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "sched/cluster_view.h"

namespace gpuplane::sched {
namespace {

constexpr double kPivotEps = 1e-9;    // smallest tableau entry taken as a pivot
constexpr double kCostEps = 1e-7;     // reduced costs above -this are taken as optimal
constexpr double kFeasEps = 1e-7;     // relative error tolerated in the basic solution
constexpr int kMaxColumns = 5000;     // patterns at most (the traces need tens to hundreds)
constexpr long kMaxPivots = 1000000;  // per optimization; a guard, never reached in tests
constexpr int kDegenerateRun = 50;    // degenerate pivots in a row before Bland's rule
constexpr int kReinvertEvery = 50;    // columns between rebuilds of the tableau

// A simplex tableau for max c x, A x <= b, x >= 0 with b >= 0. Columns 0..m-1 are the slacks
// (their part of the tableau is the basis inverse, so a column added later enters as B^-1 a,
// and their reduced costs are the dual prices); structural column j is column m + j. The
// original columns are kept so the tableau can be rebuilt from its basis when floating-point
// error has crept in.
class Tableau {
 public:
  explicit Tableau(std::vector<double> b) : b_(std::move(b)) { Reset(); }

  void AddColumn(std::vector<double> a, double value) {
    const size_t m = b_.size();
    for (size_t i = 0; i < m; ++i) {
      double t = 0;
      for (size_t k = 0; k < m; ++k) t += rows_[i][k] * a[k];
      rows_[i].push_back(t);
    }
    double z = -value;
    for (size_t k = 0; k < m; ++k) z += cost_[k] * a[k];
    cost_.push_back(z);
    a_.push_back(std::move(a));
    c_.push_back(value);
  }

  // Pivots to an optimum. The entering column is the one of most negative reduced cost
  // (Dantzig), which needs far fewer pivots than Bland's first improving column; after a run
  // of pivots that do not raise the objective (degenerate vertices, where Dantzig's rule can
  // cycle) it keeps to Bland's rule, which cannot.
  void Optimize() {
    int stalled = 0;
    for (long pivots = 0; pivots < kMaxPivots; ++pivots) {
      const bool bland = stalled >= kDegenerateRun;
      size_t enter = cost_.size();
      for (size_t j = 0; j < cost_.size(); ++j) {
        if (cost_[j] >= -kCostEps) continue;
        if (enter == cost_.size() || (!bland && cost_[j] < cost_[enter])) enter = j;
        if (bland) break;
      }
      if (enter == cost_.size()) return;
      size_t leave = rows_.size();
      double best = 0;
      for (size_t i = 0; i < rows_.size(); ++i) {
        const double a = rows_[i][enter];
        if (a <= kPivotEps) continue;
        const double ratio = rhs_[i] / a;
        if (leave == rows_.size() || ratio < best - 1e-12 ||
            (ratio <= best + 1e-12 && basis_[i] < basis_[leave])) {
          leave = i;
          best = ratio;
        }
      }
      if (leave == rows_.size()) return;  // unbounded: impossible here (the GPU row bounds all)
      const double before = objective_;
      Pivot(leave, enter);
      if (objective_ - before <= 1e-9 * (1 + std::abs(before))) ++stalled;
    }
  }

  // Whether the basic solution still solves the original rows and is nonnegative.
  bool Consistent() const {
    const size_t m = b_.size();
    std::vector<double> lhs(m, 0.0);
    for (size_t i = 0; i < m; ++i) {
      if (rhs_[i] < -kFeasEps * (1 + std::abs(b_[i]))) return false;
      const size_t j = basis_[i];
      if (j < m) {
        lhs[j] += rhs_[i];
      } else {
        for (size_t k = 0; k < m; ++k) lhs[k] += a_[j - m][k] * rhs_[i];
      }
    }
    for (size_t k = 0; k < m; ++k) {
      if (std::abs(lhs[k] - b_[k]) > kFeasEps * (1 + std::abs(b_[k]))) return false;
    }
    return true;
  }

  // Rebuilds the tableau from the original columns for the current basis (Gauss-Jordan with
  // partial pivoting); falls back to the slack basis if that basis is singular or infeasible.
  void Rebuild() {
    const size_t m = b_.size();
    // [B | I] -> [I | B^-1]
    std::vector<std::vector<double>> aug(m, std::vector<double>(2 * m, 0.0));
    for (size_t i = 0; i < m; ++i) {
      const size_t j = basis_[i];
      for (size_t k = 0; k < m; ++k) aug[k][i] = j < m ? (k == j ? 1.0 : 0.0) : a_[j - m][k];
      aug[i][m + i] = 1;
    }
    for (size_t col = 0; col < m; ++col) {
      size_t p = col;
      for (size_t r = col + 1; r < m; ++r) {
        if (std::abs(aug[r][col]) > std::abs(aug[p][col])) p = r;
      }
      if (std::abs(aug[p][col]) < 1e-12) return Reset();
      std::swap(aug[p], aug[col]);
      const double d = aug[col][col];
      for (double& v : aug[col]) v /= d;
      for (size_t r = 0; r < m; ++r) {
        const double f = aug[r][col];
        if (r == col || f == 0) continue;
        for (size_t k = 0; k < 2 * m; ++k) aug[r][k] -= f * aug[col][k];
      }
    }
    // Row i of B^-1 belongs to basic variable basis_[i].
    std::vector<double> y(m, 0.0);
    objective_ = 0;
    for (size_t i = 0; i < m; ++i) {
      const double* inv = &aug[i][m];
      double x = 0;
      for (size_t k = 0; k < m; ++k) x += inv[k] * b_[k];
      if (x < -kFeasEps * (1 + std::abs(b_[i]))) return Reset();
      rhs_[i] = std::max(0.0, x);
      const double cb = basis_[i] < m ? 0 : c_[basis_[i] - m];
      objective_ += cb * rhs_[i];
      for (size_t k = 0; k < m; ++k) y[k] += cb * inv[k];
      rows_[i].assign(inv, inv + m);
      for (const std::vector<double>& a : a_) {
        double t = 0;
        for (size_t k = 0; k < m; ++k) t += inv[k] * a[k];
        rows_[i].push_back(t);
      }
    }
    cost_.assign(y.begin(), y.end());
    for (size_t j = 0; j < a_.size(); ++j) {
      double z = -c_[j];
      for (size_t k = 0; k < m; ++k) z += y[k] * a_[j][k];
      cost_.push_back(z);
    }
  }

  double Dual(size_t row) const { return cost_[row]; }
  double Objective() const { return objective_; }
  // Structural column j's value in the current basic solution.
  double Value(size_t j) const {
    for (size_t i = 0; i < basis_.size(); ++i) {
      if (basis_[i] == b_.size() + j) return rhs_[i];
    }
    return 0;
  }

 private:
  // The slack basis: x = 0, slacks = b.
  void Reset() {
    const size_t m = b_.size();
    rows_.assign(m, std::vector<double>(m + a_.size(), 0.0));
    basis_.resize(m);
    rhs_ = b_;
    for (size_t i = 0; i < m; ++i) {
      rows_[i][i] = 1;
      basis_[i] = i;
      for (size_t j = 0; j < a_.size(); ++j) rows_[i][m + j] = a_[j][i];
    }
    cost_.assign(m, 0.0);
    for (double c : c_) cost_.push_back(-c);
    objective_ = 0;
  }

  void Pivot(size_t r, size_t e) {
    std::vector<double>& pivot_row = rows_[r];
    const double p = pivot_row[e];
    for (double& v : pivot_row) v /= p;
    rhs_[r] /= p;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (i == r) continue;
      const double f = rows_[i][e];
      if (f == 0) continue;
      for (size_t j = 0; j < pivot_row.size(); ++j) rows_[i][j] -= f * pivot_row[j];
      rhs_[i] -= f * rhs_[r];
    }
    const double f = cost_[e];
    for (size_t j = 0; j < pivot_row.size(); ++j) cost_[j] -= f * pivot_row[j];
    objective_ -= f * rhs_[r];
    basis_[r] = e;
  }

  std::vector<double> b_;               // original right-hand side
  std::vector<std::vector<double>> a_;  // original structural columns
  std::vector<double> c_;               // their objective values
  std::vector<std::vector<double>> rows_;
  std::vector<double> rhs_;
  std::vector<double> cost_;  // reduced costs; a slack's is its row's dual price
  std::vector<size_t> basis_;
  double objective_ = 0;
};

// The pattern of largest sum of (packed - price) within one GPU (unbounded knapsack, exact
// over integer milli) and that sum.
std::pair<std::vector<int>, double> BestPattern(const std::vector<PackingItem>& items,
                                                const std::vector<double>& prices) {
  std::vector<double> best(kMilli + 1, 0.0);
  std::vector<int> choice(kMilli + 1, -1);
  for (int u = 1; u <= kMilli; ++u) {
    best[u] = best[u - 1];
    for (size_t i = 0; i < items.size(); ++i) {
      const double profit = items[i].packed() - prices[i];
      // Sizes outside 1..1000 (a caller's mistake) are never packed rather than looping.
      if (profit <= 0 || items[i].milli < 1 || items[i].milli > u) continue;
      const double v = best[u - items[i].milli] + profit;
      if (v > best[u] + 1e-12) {
        best[u] = v;
        choice[u] = static_cast<int>(i);
      }
    }
  }
  std::vector<int> counts(items.size(), 0);
  for (int u = kMilli; u > 0;) {
    if (choice[u] < 0) {
      --u;
      continue;
    }
    ++counts[choice[u]];
    u -= items[choice[u]].milli;
  }
  return {std::move(counts), best[kMilli]};
}

// Optimizes, rebuilding the tableau first if floating-point error has made it inconsistent.
void Solve(Tableau& tableau, bool rebuild) {
  if (rebuild) tableau.Rebuild();
  tableau.Optimize();
  if (!tableau.Consistent()) {
    tableau.Rebuild();
    tableau.Optimize();
  }
}

}  // namespace

PackingSolution SolvePackingLp(const std::vector<PackingItem>& items, double gpus) {
  const size_t m = items.size();
  // The right-hand side is perturbed by distinct tiny amounts: cutting-stock programs are
  // highly degenerate (many equal ratios), where the simplex stalls for a very long time;
  // perturbed, every pivot makes progress. The prices do not depend on it, the solution moves
  // by about 1e-7 relative, and the bound below is proven for the true right-hand side.
  std::vector<double> rhs{gpus};
  for (const PackingItem& item : items) rhs.push_back(item.count);
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (double& b : rhs) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    b += 1e-7 * (1 + b) * (0.5 + static_cast<double>(state >> 11) / 9007199254740992.0);
  }
  Tableau tableau(rhs);
  std::vector<std::vector<int>> columns;
  std::vector<double> prices(m, 0.0);
  double gpu_price = 0;
  while (true) {
    Solve(tableau, !columns.empty() && columns.size() % kReinvertEvery == 0);
    gpu_price = std::max(0.0, tableau.Dual(0));
    for (size_t i = 0; i < m; ++i) prices[i] = std::max(0.0, tableau.Dual(i + 1));
    if (static_cast<int>(columns.size()) >= kMaxColumns) break;
    auto [counts, value] = BestPattern(items, prices);
    if (value - gpu_price <= 1e-6) break;
    std::vector<double> a{1};
    double packed = 0;
    for (size_t i = 0; i < m; ++i) {
      a.push_back(counts[i]);
      packed += counts[i] * items[i].packed();
    }
    tableau.AddColumn(std::move(a), packed);
    columns.push_back(std::move(counts));
  }
  PackingSolution solution;
  solution.packed_milli = tableau.Objective();
  solution.gpu_price = gpu_price;
  solution.item_prices = prices;
  solution.columns = static_cast<int>(columns.size());
  for (size_t j = 0; j < columns.size(); ++j) {
    const double x = tableau.Value(j);
    if (x > 1e-9) solution.patterns.push_back({columns[j], x});
  }
  // Weak duality: raising the GPU price by the best pattern's excess makes the prices
  // feasible for every pattern, so the dual objective bounds every packing.
  const double excess = std::max(0.0, BestPattern(items, prices).second - gpu_price);
  double bound = gpus * (gpu_price + excess), demand = 0;
  for (size_t i = 0; i < m; ++i) {
    bound += items[i].count * prices[i];
    demand += items[i].count * items[i].packed();
  }
  solution.bound_milli = std::min({bound, demand, gpus * kMilli});
  return solution;
}

GroupedItems GroupBySize(const std::map<int, double>& count_by_milli, int width) {
  GroupedItems out;
  std::map<int, size_t> item_of_class;
  for (const auto& [milli, count] : count_by_milli) {
    if (milli < 1) continue;  // takes no GPU: nothing to pack
    const int cls = milli >= kMilli ? kMilli : (milli - 1) / width;
    auto [it, added] = item_of_class.emplace(cls, out.items.size());
    if (added) out.items.push_back({milli, 0, 0});
    PackingItem& item = out.items[it->second];
    item.milli = std::min(item.milli, milli);  // ascending input: the first is the smallest
    item.value = std::max(item.value, static_cast<double>(milli));
    item.count += count;
    out.item_of_milli[milli] = it->second;
  }
  return out;
}

}  // namespace gpuplane::sched
