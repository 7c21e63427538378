#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ds::engine {

bool RequestHandle::Next(TokenEvent* token, DoneEvent* done) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !tokens_.empty() || finished_; });
  if (!tokens_.empty()) {
    *token = std::move(tokens_.front());
    tokens_.pop_front();
    return true;
  }
  *done = done_;
  return false;
}

int64_t RequestHandle::num_tokens_produced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_produced_;
}

void RequestHandle::PushToken(TokenEvent token) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tokens_.push_back(std::move(token));
    ++num_produced_;
  }
  cv_.notify_all();
}

void RequestHandle::PushDone(DoneEvent done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = std::move(done);
    finished_ = true;
  }
  cv_.notify_all();
}

// Recurrent states kept from the last decode steps, so an interrupted request can be snapshotted
// near the last token its client received rather than at the last one computed (the server
// notices a gone client a few tokens late). Every kRecentStateStride-th position is kept, which
// bounds the copying to 1/kRecentStateStride of a snapshot per token and reaches back
// kRecentStates * kRecentStateStride positions.
namespace {

constexpr int64_t kRecentStates = 4;
constexpr int64_t kRecentStateStride = 4;

}  // namespace

struct Engine::RecentState {
  int64_t position = -1;
  std::vector<uint8_t> recurrent;  // SequenceState::Snapshot(kRecurrentOnly) at `position`
};

struct Engine::Slot {
  state::SequenceState state;
  std::vector<RecentState> recent_states;  // ring indexed by position / kRecentStateStride
  std::shared_ptr<RequestHandle> handle;  // null when the slot is free
  bool started = false;                   // restored and planned (Start)
  RequestOptions options;
  std::vector<StorePoint> store_points;   // ascending, past the restored prefix
  size_t next_store_point = 0;
  std::unique_ptr<Sampler> sampler;
  std::vector<int32_t> history;  // prompt then generated ids
  int64_t generated = 0;
  Clock::time_point arrival, admitted, prefill_start, first_token;
  RequestTimings timings;

  explicit Slot(state::StateLayout layout) : state(std::move(layout)) {}
};

Engine::Engine(model::Model* model, EngineOptions options)
    : model_(model), options_(options), pool_(options.threads),
      logits_(model->hparams().n_vocab) {
  state::StateLayout layout = model_->StateLayoutFor(options_.context_tokens);
  layout.k_dtype = options_.k_dtype;
  layout.v_dtype = options_.v_dtype;
  if (options_.cache.budget_bytes > 0) {
    cache_ = std::make_unique<StateCache>(options_.cache, layout);
  }
  for (int i = 0; i < options_.max_parallel; ++i) {
    slots_.push_back(std::make_unique<Slot>(layout));
  }
  thread_ = std::thread([this] { Loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& slot : slots_) {
    if (slot->handle) Finish(slot.get(), UnavailableError("the server is shutting down"),
                             StopReason::kCallback, /*store_state=*/false);
  }
  for (Pending& p : queue_) {
    p.handle->PushDone({UnavailableError("the server is shutting down"), StopReason::kCallback,
                        {}});
  }
}

int Engine::num_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

StatusOr<std::shared_ptr<RequestHandle>> Engine::Submit(RequestOptions options) {
  const int64_t n_vocab = model_->hparams().n_vocab;
  if (options.prompt.empty()) return InvalidArgumentError("the prompt is empty");
  if (options.max_new_tokens == 0) {
    return InvalidArgumentError("the number of tokens to generate must be at least 1");
  }
  for (int32_t id : options.prompt) {
    if (id < 0 || id >= n_vocab) {
      return InvalidArgumentError("token id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(n_vocab));
    }
  }
  const int64_t n_prompt = static_cast<int64_t>(options.prompt.size());
  if (n_prompt >= options_.context_tokens) {
    return OutOfRangeError("the prompt has " + std::to_string(n_prompt) +
                           " tokens, but the context size is " +
                           std::to_string(options_.context_tokens));
  }
  int64_t room = options_.context_tokens - n_prompt;
  options.max_new_tokens =
      options.max_new_tokens < 0 ? room : std::min(options.max_new_tokens, room);
  auto handle = std::make_shared<RequestHandle>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(queue_.size()) >= options_.max_queued) {
      return UnavailableError("the server is busy: " + std::to_string(queue_.size()) +
                                    " requests are already waiting");
    }
    queue_.push_back({std::move(options), handle, Clock::now()});
  }
  cv_.notify_all();
  return handle;
}

void Engine::Admit() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& slot : slots_) {
    if (slot->handle || queue_.empty()) continue;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    slot->handle = p.handle;
    slot->started = false;
    slot->options = std::move(p.options);
    slot->sampler = std::make_unique<Sampler>(slot->options.sampling);
    // Reserved up front so that a decode step does not grow it.
    slot->history.reserve(slot->options.prompt.size() + slot->options.max_new_tokens);
    slot->history.assign(slot->options.prompt.begin(), slot->options.prompt.end());
    slot->generated = 0;
    slot->arrival = p.arrival;
    slot->admitted = Clock::now();
    slot->timings = {};
    slot->timings.queue_s = std::chrono::duration<double>(slot->admitted - p.arrival).count();
    slot->timings.generation.prompt_tokens = static_cast<int64_t>(slot->options.prompt.size());
    ++num_active_;
  }
}

void Engine::Start(Slot* slot) {
  slot->started = true;
  const std::vector<int32_t>& prompt = slot->options.prompt;
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  int64_t resumed = 0;
  if (cache_ != nullptr) {
    slot->timings.cache = cache_->Restore(prompt, &slot->state);
    resumed = slot->timings.cache.resumed_tokens;
  } else {
    slot->state.Clear();
  }
  Timings& t = slot->timings.generation;
  t.cached_prompt_tokens = resumed;
  t.computed_prompt_tokens = n_prompt - resumed;
  slot->store_points.clear();
  slot->next_store_point = 0;
  for (RecentState& recent : slot->recent_states) recent.position = -1;
  if (cache_ != nullptr) {
    slot->store_points = PlanStorePoints(slot->options.boundary_positions, n_prompt, resumed,
                                         cache_->options().snapshot_interval_tokens,
                                         cache_->has_recurrent_state());
  }
  slot->prefill_start = Clock::now();
}

void Engine::KeepRecentState(Slot* slot) {
  if (cache_ == nullptr || !cache_->has_recurrent_state()) return;
  const int64_t position = slot->state.num_tokens();
  if (position % kRecentStateStride != 0) return;
  slot->recent_states.resize(kRecentStates);
  RecentState& recent = slot->recent_states[position / kRecentStateStride % kRecentStates];
  recent.position = position;
  slot->state.SnapshotTo(state::SequenceState::Parts::kRecurrentOnly, &recent.recurrent);
}

void Engine::StoreFinalState(Slot* slot) {
  // The state at the end of the request holds the prompt and every generated id but the last,
  // which was sampled and not yet fed.
  const int64_t reached = slot->state.num_tokens();
  const auto n_prompt = static_cast<int64_t>(slot->options.prompt.size());
  if (reached <= slot->timings.cache.resumed_tokens) return;
  if (!slot->handle->client_gone()) {
    cache_->Store(slot->history, slot->state, cache::SnapshotKind::kGenerationEnd);
    return;
  }
  // At or just before the end of the tokens the client received, when such a state is at hand.
  const int64_t delivered = slot->handle->tokens_delivered();
  int64_t target = reached;
  if (reached >= n_prompt && delivered < reached - n_prompt) target = n_prompt + delivered;
  if (target == reached) {
    cache_->Store(slot->history, slot->state, cache::SnapshotKind::kInterrupted);
    return;
  }
  if (!cache_->has_recurrent_state()) {
    if (target > slot->timings.cache.resumed_tokens) {
      cache_->StoreAt(slot->history, slot->state, target, {}, cache::SnapshotKind::kInterrupted);
    }
    return;
  }
  const Engine::RecentState* best = nullptr;
  for (const RecentState& recent : slot->recent_states) {
    if (recent.position > slot->timings.cache.resumed_tokens && recent.position <= target &&
        (best == nullptr || recent.position > best->position)) {
      best = &recent;
    }
  }
  if (best != nullptr) {
    cache_->StoreAt(slot->history, slot->state, best->position, best->recurrent,
                    cache::SnapshotKind::kInterrupted);
  } else {
    cache_->Store(slot->history, slot->state, cache::SnapshotKind::kInterrupted);
  }
}

void Engine::Finish(Slot* slot, Status status, StopReason reason, bool store_state) {
  if (store_state && status.ok() && cache_ != nullptr && slot->started) StoreFinalState(slot);
  slot->handle->PushDone({std::move(status), reason, slot->timings});
  slot->handle.reset();
  slot->sampler.reset();
  --num_active_;
}

bool Engine::Prefill(Slot* slot) {
  const int64_t n_prompt = static_cast<int64_t>(slot->options.prompt.size());
  const int64_t begin = slot->state.num_tokens();
  int64_t end = std::min(begin + options_.prefill_chunk_tokens, n_prompt);
  if (slot->next_store_point < slot->store_points.size()) {
    end = std::min(end, slot->store_points[slot->next_store_point].position);
  }
  std::span<const int32_t> chunk(slot->options.prompt.data() + begin, end - begin);
  Status status = model_->Forward(chunk, &slot->state, model::LogitsMode::kLast, logits_.data(),
                                  &pool_);
  if (!status.ok()) {
    Finish(slot, status, StopReason::kLength);
    return false;
  }
  if (slot->next_store_point < slot->store_points.size() &&
      slot->store_points[slot->next_store_point].position == end) {
    cache_->Store(slot->options.prompt, slot->state,
                  slot->store_points[slot->next_store_point].kind);
    ++slot->next_store_point;
  }
  return true;
}

bool Engine::Step(Slot* slot) {
  if (slot->handle->cancelled()) {
    Finish(slot, OkStatus(), StopReason::kCallback);
    return false;
  }
  const int64_t n_prompt = static_cast<int64_t>(slot->options.prompt.size());
  Timings& t = slot->timings.generation;
  if (slot->state.num_tokens() < n_prompt) {
    if (!Prefill(slot)) return false;
    if (slot->state.num_tokens() < n_prompt) return true;  // more prefill next step
  } else {
    std::span<const int32_t> last(&slot->history.back(), 1);
    Status status = model_->Forward(last, &slot->state, model::LogitsMode::kLast,
                                    logits_.data(), &pool_);
    if (!status.ok()) {
      Finish(slot, status, StopReason::kLength);
      return false;
    }
  }
  KeepRecentState(slot);
  int32_t id = slot->sampler->Sample(logits_, slot->history, slot->generated);
  TokenEvent event;
  event.id = id;
  event.logprob = logits_[id] - LogSoftmaxNormalizer(logits_);
  if (slot->options.top_logprobs > 0) event.top = TopLogprobs(logits_, slot->options.top_logprobs);
  Clock::time_point now = Clock::now();
  if (slot->generated == 0) {
    slot->first_token = now;
    t.prefill_s = std::chrono::duration<double>(now - slot->prefill_start).count();
    slot->timings.ttft_s = std::chrono::duration<double>(now - slot->arrival).count();
  }
  t.decode_s = std::chrono::duration<double>(now - slot->first_token).count();
  slot->history.push_back(id);
  ++slot->generated;
  t.generated_tokens = slot->generated;
  slot->handle->PushToken(std::move(event));
  if (slot->options.stop_ids.count(id)) {
    Finish(slot, OkStatus(), StopReason::kStopToken);
    return false;
  }
  if (slot->generated >= slot->options.max_new_tokens) {
    Finish(slot, OkStatus(), StopReason::kLength);
    return false;
  }
  return true;
}

void Engine::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty() || num_active_ > 0; });
      if (stop_) return;
    }
    Admit();
    for (auto& slot : slots_) {
      if (slot->handle && !slot->started) Start(slot.get());
      if (slot->handle) Step(slot.get());
    }
  }
}

}  // namespace ds::engine
