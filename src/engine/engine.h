// The engine: one thread that owns all inference state and serves up to `max_parallel`
// sequences, interleaving prefill chunks and decode steps; further requests wait in a bounded
// queue, and beyond it Submit() refuses with Unavailable (HTTP 503: retry later).
//
// Requests talk to the engine thread through a RequestHandle: the engine pushes token and done
// events into the handle, the caller (an HTTP thread) blocks on Next(). Cancel() (a client that
// disconnected) stops generation before the next token and frees the sequence.
// Thread safety: Submit() and every RequestHandle method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/generate.h"
#include "engine/request_timings.h"
#include "engine/sampler.h"
#include "engine/state_cache.h"
#include "engine/store_points.h"
#include "model/model.h"

namespace ds::engine {

struct EngineOptions {
  int max_parallel = 1;         // sequences served at once
  int max_queued = 64;          // requests waiting for a sequence; beyond, Submit refuses
  int64_t context_tokens = 8192;  // per sequence
  int64_t prefill_chunk_tokens = 512;  // per engine step, so decodes of others stay responsive
  int threads = 0;              // 0: one per CPU
  // How attention K rows are stored: kF32 or kQ8_0 (--kv-quant 8); V rows: the same, or kQ4_0
  // (--v-quant 4).
  tensor::DType k_dtype = tensor::DType::kF32;
  tensor::DType v_dtype = tensor::DType::kF32;
  StateCacheOptions cache;      // the prefix cache; off unless given a budget
};

struct RequestOptions {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int64_t max_new_tokens = -1;  // -1: until the context is full
  int64_t top_logprobs = 0;
  std::unordered_set<int32_t> stop_ids;
  // Prompt positions where a message starts or the system+tools block ends; with a hybrid model
  // the prefill stops there to snapshot the recurrent state, where later requests diverge.
  std::vector<int64_t> boundary_positions;
};

struct TokenEvent {
  int32_t id = 0;
  float logprob = 0;  // of the chosen id under the raw logits
  std::vector<TokenLogprob> top;  // top_logprobs best, when requested
};

struct DoneEvent {
  Status status;
  StopReason stop_reason = StopReason::kLength;
  RequestTimings timings;
};

class RequestHandle {
 public:
  // Blocks until the next token or the end. Returns true with *token set, or false with *done
  // set once the request has finished (then always false).
  bool Next(TokenEvent* token, DoneEvent* done);
  // The client went away after receiving the first `tokens_delivered` generated tokens: the
  // engine stops before the next token and snapshots the state right after the delivered ones
  // (the last few states are kept for this), so a client that keeps the partial reply resumes
  // there; reports kCallback.
  void Cancel(int64_t tokens_delivered = std::numeric_limits<int64_t>::max()) {
    tokens_delivered_ = tokens_delivered;
    client_gone_ = true;
    cancelled_ = true;
  }
  // Ends generation early for a reason of the caller's (a stop string); also reports kCallback.
  void StopGenerating() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  bool client_gone() const { return client_gone_; }
  int64_t tokens_delivered() const { return tokens_delivered_; }
  // Tokens the engine has produced for this request so far.
  int64_t num_tokens_produced() const;

 private:
  friend class Engine;
  void PushToken(TokenEvent token);
  void PushDone(DoneEvent done);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> tokens_;
  int64_t num_produced_ = 0;
  bool finished_ = false;
  DoneEvent done_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> client_gone_{false};
  std::atomic<int64_t> tokens_delivered_{std::numeric_limits<int64_t>::max()};
};

class Engine {
 public:
  Engine(model::Model* model, EngineOptions options);
  ~Engine();  // stops the thread; unfinished requests end with Unavailable
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and enqueues. InvalidArgument for bad ids, OutOfRange when the prompt does not fit
  // the context, Unavailable when the queue is full.
  StatusOr<std::shared_ptr<RequestHandle>> Submit(RequestOptions options);

  const EngineOptions& options() const { return options_; }
  // Null when the cache is off.
  const StateCache* cache() const { return cache_.get(); }
  int num_active() const { return num_active_.load(); }
  int num_queued() const;

 private:
  struct Slot;
  struct RecentState;
  void Loop();
  void Admit();
  // Restores the slot's prompt from the cache and plans where its prefill stops to snapshot.
  void Start(Slot* slot);
  bool Step(Slot* slot);  // returns false when the slot's request finished
  bool Prefill(Slot* slot);  // one chunk; returns false when the request failed
  // Stores the state reached, unless the engine is shutting down or the state is unusable.
  void Finish(Slot* slot, Status status, StopReason reason, bool store_state = true);
  void StoreFinalState(Slot* slot);
  // Hybrid models: keeps the recurrent slots of the position just computed (Cancel()).
  void KeepRecentState(Slot* slot);

  model::Model* model_;
  EngineOptions options_;
  ThreadPool pool_;
  std::unique_ptr<StateCache> cache_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<float> logits_;  // [n_vocab], reused by every step

  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Pending {
    RequestOptions options;
    std::shared_ptr<RequestHandle> handle;
    Clock::time_point arrival;
  };
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::atomic<int> num_active_{0};
  std::thread thread_;
};

}  // namespace ds::engine
