#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace ds {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long an idle worker waits for the next loop before it sleeps. Every waiter spins for
// kSpinsBeforeYield checks, then yields between checks, so that with more threads than cores a
// waiting thread hands its core to one that still has work.
constexpr std::chrono::microseconds kSpinBeforeSleep{200};
constexpr int kSpinsBeforeYield = 1 << 11;
// Ranges per thread of a loop, claimed first come: the two vCPUs of a small VM run at different
// speeds, and halves fixed per thread left the faster one waiting (in a Q4_K decode, the caller
// waited 645-698 ms of about 5 s in loops with one range per thread, 383-503 with four).
constexpr int kChunksPerThread = 4;

inline void Backoff(int spins) {
  if (spins < kSpinsBeforeYield) {
    CpuRelax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace

int ThreadPool::DefaultThreadCount() {
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : DefaultThreadCount()) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunChunks() {
  for (int c = next_chunk_.fetch_add(1, std::memory_order_relaxed); c < num_chunks_;
       c = next_chunk_.fetch_add(1, std::memory_order_relaxed)) {
    int64_t begin = c * chunk_;
    int64_t end = std::min(n_, begin + chunk_);
    if (begin < end) (*fn_)(begin, end);
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = (n + grain - 1) / grain;
  int chunks = static_cast<int>(std::min<int64_t>(max_chunks, num_threads_ * kChunksPerThread));
  if (chunks <= 1 || num_threads_ == 1) {
    fn(0, n);
    return;
  }
  fn_ = &fn;
  n_ = n;
  chunk_ = (n + chunks - 1) / chunks;
  num_chunks_ = chunks;
  next_chunk_.store(0, std::memory_order_relaxed);
  StartLoop();
  RunChunks();
  AwaitWorkers();
  fn_ = nullptr;
}

void ThreadPool::OnEveryThread(FunctionRef<void(int)> fn) {
  if (num_threads_ == 1) return fn(0);
  per_thread_fn_ = &fn;
  StartLoop();
  fn(0);
  AwaitWorkers();
  per_thread_fn_ = nullptr;
}

void ThreadPool::StartLoop() {
  pending_workers_.store(num_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: ordered before the load of sleeping_workers_
  if (sleeping_workers_.load() > 0) {
    // A worker checks generation_ under mu_ before it sleeps; taking mu_ here means it either saw
    // the new value or is already waiting for this notification.
    { std::lock_guard<std::mutex> lock(mu_); }
    work_cv_.notify_all();
  }
}

void ThreadPool::AwaitWorkers() {
  // The count stops growing once it has reached the yield phase: a long chunk cannot overflow it.
  for (int spins = 0; pending_workers_.load(std::memory_order_acquire) != 0;
       spins = std::min(spins + 1, kSpinsBeforeYield)) {
    Backoff(spins);
  }
}

bool ThreadPool::AwaitLoop(uint64_t* seen) {
  const auto sleep_at = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (int spins = 0;; ++spins) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    const uint64_t generation = generation_.load(std::memory_order_acquire);
    if (generation != *seen) {
      *seen = generation;
      return true;
    }
    Backoff(spins);
    if (spins % 64 == 63 && std::chrono::steady_clock::now() >= sleep_at) break;
  }
  std::unique_lock<std::mutex> lock(mu_);
  sleeping_workers_.fetch_add(1);  // seq_cst: ordered before the predicate's load of generation_
  work_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != *seen; });
  sleeping_workers_.fetch_sub(1);
  if (stop_.load()) return false;
  *seen = generation_.load(std::memory_order_acquire);
  return true;
}

void ThreadPool::WorkerLoop(int thread) {
  uint64_t seen = 0;
  while (AwaitLoop(&seen)) {
    if (per_thread_fn_ != nullptr) {
      (*per_thread_fn_)(thread);
    } else {
      RunChunks();
    }
    pending_workers_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace ds
