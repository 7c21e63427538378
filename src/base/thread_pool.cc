#include "base/thread_pool.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

namespace ds {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long an idle worker waits for the next loop before it sleeps. A worker spins for
// kSpinsBeforeYield checks (about 38 us at 18.6 ns a pause on a Zen 5 VM), then yields between
// checks, so that with more threads than cores a waiting thread hands its core to one that still
// has work.
constexpr std::chrono::microseconds kSpinBeforeSleep{200};
constexpr int kSpinsBeforeYield = 1 << 11;
// How long the caller spins at the end of a loop before it yields between checks. Yielding
// after kSpinsBeforeYield spins, as a worker does, the caller waited that long in enough of a
// decode step's loops that 2.5% of a bench model Q8_0 decode's samples were in sched_yield and
// the kernel's interrupt re-enabling: each yield is a system call, whose return (slow in a VM)
// delayed the loops after it. With this spin (then counted as 2^14 pauses, about 300 us; in
// time it read the same, 1.002) and the shares below, tg64 was 9.4% faster than before both
// (median of nine interleaved pairs), of which the shares gave 4.8%.
constexpr std::chrono::microseconds kCallerSpinBeforeYield{300};
// Ranges per thread of a loop: the two vCPUs of a small VM run at different speeds, and halves
// fixed per thread left the faster one waiting (in a Q4_K decode, the caller waited 645-698 ms
// of about 5 s in loops with one range per thread, 383-503 with four). Claimed from one counter,
// eight ranges a thread decoded slower than four (bench Q8_0 tg64 0.947, median of seven
// interleaved pairs): each range a thread took started a new stream of weights that its
// prefetches had not reached. Claimed from each thread's own share in order, eight decoded 4.8%
// faster than four from one counter (nine pairs, both with kCallerSpinBeforeYield). 16 decoded
// Q8_0 as fast as eight (1.007) and Q4_K slower (0.986): each range costs a claim and a
// kernel's set-up for the token, a larger part of a Q4_K range.
constexpr int kChunksPerThread = 8;
// A share's ranges shrink from its front to its back, each kRangeShrink of the one before: its
// owner starts on the largest, and what is left to take from another share when a thread runs
// out is the smallest, so the threads finish closer together. In a Q4_K decode of the bench
// model, ranges of one size left the caller waiting for the worker 0.85-1.2 us at the end of a
// loop, shrinking ones 0.57-0.78 us (nine runs each); decode steps alternating between the two
// every four tokens in one process took 0.980, 0.996 and 1.002 as long (three runs of 2048
// tokens).
constexpr double kRangeShrink = 0.75;

// kShareCuts[k][i]: where range i of a share cut into k ranges starts, as a fraction of the
// share, (1 - r^i) / (1 - r^k); computed once, not on every loop.
using ShareCuts = std::array<std::array<double, kChunksPerThread + 1>, kChunksPerThread + 1>;
constexpr ShareCuts MakeShareCuts() {
  ShareCuts cuts{};
  for (int k = 1; k <= kChunksPerThread; ++k) {
    double r_to_k = 1.0;
    for (int i = 0; i < k; ++i) r_to_k *= kRangeShrink;
    double r_to_i = 1.0;
    for (int i = 0; i <= k; ++i) {
      cuts[k][i] = (1.0 - r_to_i) / (1.0 - r_to_k);
      r_to_i *= kRangeShrink;
    }
  }
  return cuts;
}
constexpr ShareCuts kShareCuts = MakeShareCuts();

constexpr uint64_t PackShare(uint32_t next, uint32_t end) {
  return next | static_cast<uint64_t>(end) << 32;
}

// Claims the first (from_back: last) range left in a share; false when none is.
bool ClaimRange(std::atomic<uint64_t>& bounds, bool from_back, int* chunk) {
  uint64_t seen = bounds.load(std::memory_order_relaxed);
  for (;;) {
    const auto next = static_cast<uint32_t>(seen), end = static_cast<uint32_t>(seen >> 32);
    if (next >= end) return false;
    const uint64_t rest = from_back ? PackShare(next, end - 1) : PackShare(next + 1, end);
    if (bounds.compare_exchange_weak(seen, rest, std::memory_order_relaxed)) {
      *chunk = static_cast<int>(from_back ? end - 1 : next);
      return true;
    }
  }
}

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
    : num_threads_(num_threads > 0 ? num_threads : DefaultThreadCount()),
      shares_(num_threads_),
      range_starts_(num_threads_ * kChunksPerThread + 1) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunChunks(int thread) {
  const auto run = [&](int c) {
    const int64_t begin = range_starts_[c];
    const int64_t end = range_starts_[c + 1];
    if (begin < end) (*fn_)(begin, end);
  };
  int c;
  while (ClaimRange(shares_[thread].bounds, /*from_back=*/false, &c)) run(c);
  for (int other = 1; other < num_threads_; ++other) {
    auto& bounds = shares_[(thread + other) % num_threads_].bounds;
    while (ClaimRange(bounds, /*from_back=*/true, &c)) run(c);
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
  SplitShares(n, chunks);
  StartLoop();
  RunChunks(0);
  AwaitWorkers();
  fn_ = nullptr;
}

void ThreadPool::SplitShares(int64_t n, int chunks) {
  for (int t = 0; t < num_threads_; ++t) {
    const int first = chunks * t / num_threads_;
    const int end = chunks * (t + 1) / num_threads_;
    const int64_t share_begin = n * first / chunks;
    const auto share_size = static_cast<double>(n * end / chunks - share_begin);
    const auto& cuts = kShareCuts[end - first];
    for (int c = first; c < end; ++c) {
      range_starts_[c] = share_begin + std::llround(share_size * cuts[c - first]);
    }
    shares_[t].bounds.store(PackShare(static_cast<uint32_t>(first), static_cast<uint32_t>(end)),
                            std::memory_order_relaxed);
  }
  range_starts_[chunks] = n;
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
  if (pending_workers_.load(std::memory_order_acquire) == 0) return;
  const auto yield_at = std::chrono::steady_clock::now() + kCallerSpinBeforeYield;
  bool yielding = false;
  for (int spins = 0; pending_workers_.load(std::memory_order_acquire) != 0; ++spins) {
    if (yielding) {
      std::this_thread::yield();
    } else {
      CpuRelax();
      yielding = spins % 64 == 63 && std::chrono::steady_clock::now() >= yield_at;
    }
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
      RunChunks(thread);
    }
    pending_workers_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace ds
