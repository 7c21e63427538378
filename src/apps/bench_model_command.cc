// `deltaserve bench-model`: prefill (ppN) and decode (tgN) throughput at several context depths,
// like llama-bench, next to this machine's memory read bandwidth, FMA peak and int8 dot-product
// peak measured in the same run: decode is stated as a fraction of the bandwidth floor (active
// weight bytes per token over bandwidth) and prefill as a fraction of both peaks (float weights
// multiply with FMAs; quantised ones with int8 dot products on int8 activations, whose peak on
// AVX-512 VNNI is four times the FMA peak, so their prefill may pass 100% of the FMA peak).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>

#include "apps/commands.h"
#include "apps/cpu_name.h"
#include "apps/cpu_steal.h"
#include "apps/kv_quant.h"
#include "apps/loaded_model.h"
#include "apps/memory_bandwidth.h"
#include "apps/thread_round_trip.h"
#include "apps/token_cost.h"
#include "base/clock.h"
#include "kernels/kernels.h"

namespace ds::apps {
namespace {

struct BenchFlags {
  std::string model_path;
  bool mmap = false;
  int64_t n_prompt = 512;
  int64_t n_gen = 128;
  std::vector<int64_t> depths = {0, 4096};
  int repetitions = 3;
  int warmup_runs = 1;
  int threads = 0;
  int kv_quant_bits = 0;
  int v_quant_bits = kValueBitsAsKeys;
};

struct Sample {
  double mean = 0;
  double stddev = 0;
};

Sample Summarise(const std::vector<double>& rates) {
  Sample s;
  s.mean = std::accumulate(rates.begin(), rates.end(), 0.0) / rates.size();
  for (double r : rates) s.stddev += (r - s.mean) * (r - s.mean);
  s.stddev = rates.size() > 1 ? std::sqrt(s.stddev / (rates.size() - 1)) : 0.0;
  return s;
}

std::vector<int32_t> RandomTokens(int64_t count, int64_t n_vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids(count);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % n_vocab);
  return ids;
}

// Tokens per second of one run from `base` (a snapshot at the depth): a prompt of n_prompt tokens
// in chunks of 512, or n_gen single-token decode steps.
StatusOr<double> TimeOnce(model::Model& model, const state::StateLayout& layout,
                          const std::vector<uint8_t>& base, int64_t n_prompt, int64_t n_gen,
                          ThreadPool* pool, int rep) {
  state::SequenceState state(layout);
  DS_RETURN_IF_ERROR(state.Restore(base));
  const int64_t n_vocab = model.hparams().n_vocab;
  std::vector<float> logits(n_vocab);
  int64_t count = n_prompt > 0 ? n_prompt : n_gen;
  std::vector<int32_t> ids = RandomTokens(count, n_vocab, 1000 + rep);
  Clock::time_point start = Clock::now();
  if (n_prompt > 0) {
    for (int64_t begin = 0; begin < n_prompt; begin += 512) {
      int64_t n = std::min<int64_t>(512, n_prompt - begin);
      DS_RETURN_IF_ERROR(model.Forward(std::span<const int32_t>(ids).subspan(begin, n), &state,
                                       model::LogitsMode::kLast, logits.data(), pool));
    }
  } else {
    for (int64_t i = 0; i < n_gen; ++i) {
      DS_RETURN_IF_ERROR(model.Forward(std::span<const int32_t>(&ids[i], 1), &state,
                                       model::LogitsMode::kLast, logits.data(), pool));
    }
  }
  return count / SecondsSince(start);
}

Status Bench(const BenchFlags& flags) {
  if (flags.warmup_runs < 0) {
    return InvalidArgumentError("--warmup takes a number of runs, 0 or more, not " +
                                std::to_string(flags.warmup_runs));
  }
  const gguf::Residency residency =
      flags.mmap ? gguf::Residency::kMapped : gguf::Residency::kHugePages;
  DS_ASSIGN_OR_RETURN(LoadedModel loaded, OpenModel(flags.model_path, residency));
  model::Model& model = *loaded.model;
  DS_ASSIGN_OR_RETURN(const KvDtypes kv_dtypes,
                      KvDtypesFor(flags.kv_quant_bits, flags.v_quant_bits, model.hparams()));
  ThreadPool pool(flags.threads);
  const ReadBandwidthMeter bandwidth_meter;
  const double bandwidth_gbps = bandwidth_meter.MeasureGBps(&pool);
  const double fma_gflops = kernels::MeasureFmaPeakGflops(&pool);
  const double int8_gops = kernels::MeasureInt8DotPeakGops(&pool);
  const TokenCost cost = ActiveCostPerToken(*loaded.file, model.hparams());
  const double floor_tps = bandwidth_gbps * 1e9 / cost.weight_bytes;
  std::printf("cpu: %s\n", DescribeCpu().c_str());
  std::printf("memory read bandwidth: %.2f GB/s (%d threads; read again before each decode "
              "test and after it, whose floor takes the higher reading)\n",
              bandwidth_gbps, pool.num_threads());
  if (const std::optional<double> ns = MeasureThreadRoundTripNs(&pool)) {
    std::printf("thread round trip: %.0f ns (a cache line from thread 0 to thread 1 and back; "
                "read again after each decode test)\n",
                *ns);
  }
  std::printf("FMA peak: %.1f GFLOPS (%d threads, %s kernels)\n", fma_gflops, pool.num_threads(),
              std::string(kernels::ActiveIsa()).c_str());
  if (int8_gops > 0) {
    std::printf("int8 dot peak: %.1f GOPS (%d threads, a multiply-add counts two)\n", int8_gops,
                pool.num_threads());
  }
  std::printf("per token: %.1f MiB of active weights, %.1f M multiply-adds; decode floor %.1f "
              "tok/s (weights only); K cache %s, V cache %s\n",
              cost.weight_bytes / 1048576.0, cost.macs / 1e6, floor_tps,
              std::string(tensor::DTypeName(kv_dtypes.key)).c_str(),
              std::string(tensor::DTypeName(kv_dtypes.value)).c_str());
  std::printf("weights: %s\n", WeightsResidencyText(*loaded.file));
  std::printf("runs per test: %d untimed, then %d timed\n", flags.warmup_runs, flags.repetitions);
  const double size_mib = loaded.file->bytes().size() / 1048576.0;
  int64_t num_params = 0;
  for (const gguf::TensorInfo& info : loaded.file->tensors()) num_params += info.num_elements();
  std::printf("| model | size | params | threads | test | t/s | of the hardware |\n"
              "|---|---|---|---|---|---|---|\n");
  StealMeter steal;
  for (int64_t depth : flags.depths) {
    const int64_t ctx = depth + std::max(flags.n_prompt, flags.n_gen) + 1;
    state::StateLayout layout = model.StateLayoutFor(ctx);
    layout.k_dtype = kv_dtypes.key;
    layout.v_dtype = kv_dtypes.value;
    state::SequenceState warm(layout);
    std::vector<float> logits(model.hparams().n_vocab);
    std::vector<int32_t> prefix = RandomTokens(depth, model.hparams().n_vocab, 7);
    for (int64_t begin = 0; begin < depth; begin += 512) {
      int64_t n = std::min<int64_t>(512, depth - begin);
      DS_RETURN_IF_ERROR(model.Forward(std::span<const int32_t>(prefix).subspan(begin, n), &warm,
                                       model::LogitsMode::kLast, logits.data(), &pool));
    }
    const std::vector<uint8_t> base = warm.Snapshot();
    for (bool prefill : {true, false}) {
      if ((prefill ? flags.n_prompt : flags.n_gen) <= 0) continue;
      // Untimed: a test's first run also maps the weights' pages and fills the caches.
      for (int run = 0; run < flags.warmup_runs; ++run) {
        DS_RETURN_IF_ERROR(TimeOnce(model, layout, base, prefill ? flags.n_prompt : 0,
                                    prefill ? 0 : flags.n_gen, &pool, -1 - run)
                               .status());
      }
      // On a shared host the bandwidth drifts with the other guests' load (one machine read
      // 39 to 65 GB/s across a morning's runs), so a decode rate is set against readings taken
      // just before and just after it, the higher of the two: a single reading taken in a
      // moment of heavy neighbours once put a decode at 103% of its floor.
      double test_bandwidth_gbps = prefill ? bandwidth_gbps : bandwidth_meter.MeasureGBps(&pool);
      std::vector<double> rates;
      for (int rep = 0; rep < flags.repetitions; ++rep) {
        steal.Begin();
        DS_ASSIGN_OR_RETURN(double rate,
                            TimeOnce(model, layout, base, prefill ? flags.n_prompt : 0,
                                     prefill ? 0 : flags.n_gen, &pool, rep));
        steal.End();
        rates.push_back(rate);
      }
      if (!prefill) {
        test_bandwidth_gbps = std::max(test_bandwidth_gbps, bandwidth_meter.MeasureGBps(&pool));
      }
      Sample s = Summarise(rates);
      std::string test = (prefill ? "pp" + std::to_string(flags.n_prompt)
                                  : "tg" + std::to_string(flags.n_gen)) +
                         (depth > 0 ? " @ d" + std::to_string(depth) : "");
      // Prefill: weight-matrix GFLOPS over the peaks; decode: the rate over the floor.
      char ratio[96];
      if (prefill) {
        const double gflops = 2.0 * cost.macs * s.mean / 1e9;
        const int n = std::snprintf(ratio, sizeof ratio, "%.1f GFLOPS, %.1f%% of FMA peak",
                                    gflops, 100.0 * gflops / fma_gflops);
        if (int8_gops > 0) {
          std::snprintf(ratio + n, sizeof ratio - static_cast<size_t>(n),
                        ", %.1f%% of int8 dot peak", 100.0 * gflops / int8_gops);
        }
      } else {
        const double test_floor_tps = test_bandwidth_gbps * 1e9 / cost.weight_bytes;
        const int n = std::snprintf(ratio, sizeof ratio, "%.1f%% of floor (%.2f GB/s",
                                    100.0 * s.mean / test_floor_tps, test_bandwidth_gbps);
        const std::optional<double> round_trip_ns = MeasureThreadRoundTripNs(&pool);
        std::snprintf(ratio + n, sizeof ratio - static_cast<size_t>(n),
                      round_trip_ns ? ", round trip %.0f ns)" : ")", round_trip_ns.value_or(0.0));
      }
      std::printf("| %s | %.1f MiB | %.1f M | %d | %s | %.2f ± %.2f | %s |\n",
                  model.hparams().arch.c_str(), size_mib, num_params / 1e6, pool.num_threads(),
                  test.c_str(), s.mean, s.stddev, ratio);
      std::fflush(stdout);
    }
  }
  // A share well above zero means the host ran other guests on these CPUs: the threads ran
  // slower than the bandwidth and FMA readings (taken first) assume.
  constexpr const char* kStealLine = "CPU time taken by the host (steal) during the timed runs";
  if (const std::optional<double> share = steal.StolenShare()) {
    std::printf("%s: %.1f%%\n", kStealLine, 100.0 * *share);
  } else if (ReadCpuTicks().has_value()) {
    std::printf("%s: not measured (the runs took less than one tick of the kernel's CPU clock)\n",
                kStealLine);
  }
  return OkStatus();
}

}  // namespace

CommandFn RegisterBenchModel(CLI::App* app) {
  auto flags = std::make_shared<BenchFlags>();
  app->add_option("-m,--model", flags->model_path, "GGUF model (default: the embedded model)");
  app->add_option("-p,--n-prompt", flags->n_prompt, "prompt tokens per prefill test")
      ->capture_default_str();
  app->add_option("-n,--n-gen", flags->n_gen, "tokens per decode test")->capture_default_str();
  app->add_option("-d,--depths", flags->depths, "context depths to test at")
      ->capture_default_str();
  app->add_option("-r,--repetitions", flags->repetitions, "runs per test")->capture_default_str();
  app->add_option("--warmup", flags->warmup_runs,
                  "untimed runs before each test's timed ones (the first maps the weights)")
      ->capture_default_str();
  app->add_option("-t,--threads", flags->threads, "threads (default: one per CPU)");
  app->add_option("--kv-quant", flags->kv_quant_bits, kKvQuantHelp)->capture_default_str();
  app->add_option("--v-quant", flags->v_quant_bits, kValueQuantHelp);
  app->add_flag("--mmap", flags->mmap, kMmapHelp);
  return [flags] {
    Status status = Bench(*flags);
    if (status.ok()) return 0;
    std::fprintf(stderr, "deltaserve bench-model: %s\n", status.message().c_str());
    return 1;
  };
}

}  // namespace ds::apps
