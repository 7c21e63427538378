// A loaded language model: hyperparameters, bound weights and a Forward() that advances one
// sequence's state by a batch of tokens. One file per architecture implements Model; Load()
// is the only place that maps an architecture name to its implementation.
// Thread safety: Forward() uses per-model scratch buffers, so it is called from one thread at a
// time (the engine thread); the weights are shared read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "base/thread_pool.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "state/sequence_state.h"

namespace ds::model {

enum class LogitsMode {
  kLast,  // logits of the last token only: [n_vocab]
  kAll,   // logits of every token: [n_tokens][n_vocab]
};

class Model {
 public:
  virtual ~Model() = default;

  // Loads the architecture named by general.architecture. The File must outlive the Model, which
  // may rewrite weights it holds in memory into the kernels' layout (gguf::File::
  // RewriteTensorOnce), after which they read only through this Model or another of the File.
  static StatusOr<std::unique_ptr<Model>> Load(gguf::File& file);

  const HParams& hparams() const { return hparams_; }
  // The state shape one sequence needs for a context of `max_tokens`.
  virtual state::StateLayout StateLayoutFor(int64_t max_tokens) const = 0;

  // Runs `tokens` at positions state->num_tokens() onward, appends them to the state and writes
  // logits per `mode` to `logits`. OutOfRange when the context would overflow; the state is
  // unchanged then. REQUIRES: every token id < n_vocab (callers validate), tokens non-empty.
  virtual Status Forward(std::span<const int32_t> tokens, state::SequenceState* state,
                         LogitsMode mode, float* logits, ThreadPool* pool) = 0;

 protected:
  explicit Model(HParams hparams) : hparams_(std::move(hparams)) {}
  HParams hparams_;
};

}  // namespace ds::model
