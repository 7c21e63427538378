// A fixed pool of worker threads for data-parallel loops. The calling thread takes part in
// every loop, so a pool of N threads starts N-1 workers.
// Thread safety: ParallelFor may be called from one thread at a time (the engine thread).
// Results must not depend on the number of threads: work is split into contiguous ranges and
// every output element is written by exactly one task.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ds {

class ThreadPool {
 public:
  // num_threads <= 0 means one per online CPU.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), each at least `grain` long
  // (except the last), and returns when all are done.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  static int DefaultThreadCount();

 private:
  void WorkerLoop(int worker_index);
  void RunChunks(int thread_index);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;  // bumped per ParallelFor; workers wait for a new value
  bool stop_ = false;
  int pending_workers_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  int num_chunks_ = 0;
};

}  // namespace ds
