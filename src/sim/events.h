// The simulator's one event loop, which every simulated workload runs (fill, trace replay,
// claims replay, built-in scenario): jobs arrive in order of their (nondecreasing) arrival
// times, leave at the times their starts push onto `ends`, and wait in a WaitQueue, the queue
// strategy, which is retried after each instant's departures. What a start is (a Session
// decision, a policy placement) and what is measured are the caller's, through callbacks.
// Header-only; the callbacks and the queue own the state; not thread-safe.
#ifndef GPUPLANE_SIM_EVENTS_H_
#define GPUPLANE_SIM_EVENTS_H_

#include <cstddef>
#include <functional>
#include <iterator>
#include <list>
#include <queue>
#include <vector>

namespace gpuplane::sim {

// A job's departure; earlier first, then the lower job index.
struct JobEnd {
  double time;
  size_t job;
  bool operator>(const JobEnd& o) const { return time != o.time ? time > o.time : job > o.job; }
};
using JobEnds = std::priority_queue<JobEnd, std::vector<JobEnd>, std::greater<>>;

enum class Arrivals {
  kBehindQueue,  // an arrival is tried at once only when nobody waits (no overtaking)
  kTryFirst,     // an arrival is tried at once even when others wait
};

// The queue strategy: which jobs wait, and which a retry pass tries, in what order.
class WaitQueue {
 public:
  virtual ~WaitQueue() = default;
  virtual void Push(size_t job) = 0;
  virtual size_t size() const = 0;
  bool empty() const { return size() == 0; }
  // One pass after an instant's departures: try_start(j) true means j started and leaves.
  virtual void Retry(const std::function<bool(size_t)>& try_start) = 0;
};

// Every waiting job, tried in arrival order on each pass.
class FifoQueue final : public WaitQueue {
 public:
  void Push(size_t job) override { jobs_.push_back(job); }
  size_t size() const override { return jobs_.size(); }
  void Retry(const std::function<bool(size_t)>& try_start) override {
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      it = try_start(*it) ? jobs_.erase(it) : std::next(it);
    }
  }

 private:
  std::list<size_t> jobs_;
};

// Runs arrivals (job j at arrival_of(j), j = 0..jobs-1) and the departures in `ends`, in time
// order, arrivals first at equal times. Before each event, advance(t). An arrival that is not
// tried or does not start (try_start(j) false) joins the queue. At an instant's departures,
// depart(j) for each (true: j joins the queue again), then one queue.Retry. try_start must
// push the job's departure onto `ends` when it starts it (nothing, for a job that never
// leaves). The jobs still waiting when no event is left stay in `queue`.
template <class ArrivalOf, class Advance, class TryStart, class Depart>
void RunEvents(size_t jobs, ArrivalOf arrival_of, JobEnds& ends, Arrivals arrivals,
               WaitQueue& queue, Advance advance, TryStart try_start, Depart depart) {
  const std::function<bool(size_t)> start = try_start;
  size_t next = 0;
  while (next < jobs || !ends.empty()) {
    const bool arrival = next < jobs && (ends.empty() || arrival_of(next) <= ends.top().time);
    const double now = arrival ? arrival_of(next) : ends.top().time;
    advance(now);
    if (arrival) {
      const size_t j = next++;
      const bool may_try = arrivals == Arrivals::kTryFirst || queue.empty();
      if (!may_try || !try_start(j)) queue.Push(j);
      continue;
    }
    while (!ends.empty() && ends.top().time == now) {
      const size_t j = ends.top().job;
      ends.pop();
      if (depart(j)) queue.Push(j);
    }
    queue.Retry(start);
  }
}

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_EVENTS_H_
