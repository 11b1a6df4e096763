// The event loop the built-in scenario and the claims replay share: jobs arrive in order of
// their (nondecreasing) arrival times, leave at the times their starts push onto `ends`, and
// wait in one FIFO queue that is retried, in order, after each instant's departures.
// Header-only; the callbacks own the state; not thread-safe.
#ifndef GPUPLANE_SIM_FIFO_EVENTS_H_
#define GPUPLANE_SIM_FIFO_EVENTS_H_

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

// Runs arrivals (job j at arrival_of(j), j = 0..jobs-1) and the departures in `ends`, in time
// order, arrivals first at equal times. Before each event, advance(t). An arrival that is not
// tried or does not start (try_start(j) false) joins the queue. At an instant's departures,
// depart(j) for each (true: j joins the queue again), then the queue is retried in order.
// try_start must push the job's departure onto `ends` when it starts it. Returns the jobs
// still waiting when no event is left.
template <class ArrivalOf, class Advance, class TryStart, class Depart>
std::list<size_t> RunFifoEvents(size_t jobs, ArrivalOf arrival_of, JobEnds& ends, Arrivals arrivals,
                                Advance advance, TryStart try_start, Depart depart) {
  std::list<size_t> queue;
  size_t next = 0;
  while (next < jobs || !ends.empty()) {
    const bool arrival = next < jobs && (ends.empty() || arrival_of(next) <= ends.top().time);
    const double now = arrival ? arrival_of(next) : ends.top().time;
    advance(now);
    if (arrival) {
      const size_t j = next++;
      const bool may_try = arrivals == Arrivals::kTryFirst || queue.empty();
      if (!may_try || !try_start(j)) queue.push_back(j);
      continue;
    }
    while (!ends.empty() && ends.top().time == now) {
      const size_t j = ends.top().job;
      ends.pop();
      if (depart(j)) queue.push_back(j);
    }
    for (auto it = queue.begin(); it != queue.end();) {
      it = try_start(*it) ? queue.erase(it) : std::next(it);
    }
  }
  return queue;
}

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_FIFO_EVENTS_H_
