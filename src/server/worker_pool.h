// A fixed set of threads running submitted tasks in order, with a bound on the tasks that wait:
// a full pool refuses at once, so a caller can answer 503 instead of queueing without end.
// Thread safety: TrySubmit from any thread; the destructor runs the tasks already accepted,
// then joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ds::server {

class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_waiting);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a pool thread; false (and `task` dropped) when every thread is busy and
  // max_waiting tasks already wait.
  bool TrySubmit(std::function<void()> task);
  // Tasks accepted and not yet started.
  size_t waiting() const;

 private:
  void Run();

  const size_t max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  int idle_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ds::server
