// A fixed pool of worker threads for data-parallel loops. The calling thread takes part in
// every loop, so a pool of N threads starts N-1 workers.
// Between loops a worker spins for a short while before it sleeps: a decode step runs hundreds
// of small loops a few microseconds apart, and waking a sleeping thread costs more than most of
// them. An idle pool sleeps.
// Thread safety: ParallelFor and OnEveryThread may be called from one thread at a time (the
// engine thread).
// Results must not depend on the number of threads: work is split into contiguous ranges and
// every output element is written by exactly one task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "base/function_ref.h"

namespace ds {

class ThreadPool {
 public:
  // num_threads <= 0 means one per online CPU.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), no more of them than n / grain
  // rounded up (a loop of one grain runs inline), and returns when all are done. Allocates
  // nothing.
  void ParallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

  // Calls fn(t) once on each of the pool's threads, t in [0, num_threads()) (the caller is 0),
  // and returns when all are done: the same t runs on the same thread call after call, so work
  // split by t finds the data it wrote in the previous call in its own core's caches.
  void OnEveryThread(FunctionRef<void(int)> fn);

  static int DefaultThreadCount();

 private:
  void WorkerLoop(int thread);
  // Waits until generation_ differs from *seen (then updates it) or the pool stops (false).
  bool AwaitLoop(uint64_t* seen);
  // Runs ranges of the current loop until none is left unclaimed: first those of its own share
  // from the front, then others' from the back.
  void RunChunks(int thread);
  // Splits [0, n) into `chunks` ranges (range_starts_) and hands each thread its share of them.
  void SplitShares(int64_t n, int chunks);
  // Starts the current loop on the workers (after fn_ or per_thread_fn_ is set).
  void StartLoop();
  // Waits until every worker has finished the current loop.
  void AwaitWorkers();

  int num_threads_;
  std::vector<std::thread> workers_;
  // The current loop, written before generation_ is bumped and read by workers after they see it.
  const FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  const FunctionRef<void(int)>* per_thread_fn_ = nullptr;  // set instead of fn_ by OnEveryThread
  // Each thread's share of the current loop's ranges, [next, end) packed as next | end << 32:
  // its owner claims from the front, so that consecutive ranges continue one stream of memory
  // the prefetches are already ahead in, and a thread that has run out claims from the back.
  struct alignas(64) Share {
    std::atomic<uint64_t> bounds{0};
  };
  std::vector<Share> shares_;
  // The current loop's ranges: range c is [range_starts_[c], range_starts_[c + 1]).
  std::vector<int64_t> range_starts_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_workers_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // only for sleeping and waking
  std::condition_variable work_cv_;
};

}  // namespace ds
