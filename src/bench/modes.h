// The four benchmark modes. Each runs its workload against one or two servers, the second in
// alternation with the first item by item, and returns a Report. A request that fails becomes a
// failed row with what it measured and its error, and the mode goes on; so does a server that
// cannot be calibrated, whose rows are all marked failed in calibration without being sent.
// Thread safety: each call owns its state; concurrency runs its clients on their own threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/report.h"
#include "bench/target.h"

namespace ds::bench {

// Prefill and decode at each context size, every prompt unique so no cache can serve it.
struct SweepOptions {
  std::vector<int64_t> sizes;  // target prompt tokens
  int64_t decode_tokens = 128;
  int repeats = 1;
};
StatusOr<Report> RunSweep(const std::vector<Target>& targets, const SweepOptions& options);

// Each size cold (a unique prompt), then warm (the same request again).
struct CompareOptions {
  std::vector<int64_t> sizes;
  int64_t decode_tokens = 16;
};
StatusOr<Report> RunCompare(const std::vector<Target>& targets, const CompareOptions& options);

// Recorded agent sessions (one JSON request per line: method, path, headers, body), sent body by
// body as recorded except for the model name and a cap on max_tokens.
struct ReplayOptions {
  std::vector<std::string> trace_files;
  int64_t max_tokens = 16;
  bool interleave = false;  // several traces turn by turn, as conversations sharing a server
};
StatusOr<Report> RunReplay(const std::vector<Target>& targets, const ReplayOptions& options);

// N clients at once, each sending its own unique prompts one after the other.
struct ConcurrencyOptions {
  std::vector<int64_t> clients;
  int64_t requests_per_client = 2;
  int64_t prompt_tokens = 1024;
  int64_t decode_tokens = 64;
};
StatusOr<Report> RunConcurrency(const std::vector<Target>& targets,
                                const ConcurrencyOptions& options);

}  // namespace ds::bench
