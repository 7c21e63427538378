// Golden end-to-end test: the deltaserve binary, through `run --json`, reproduces the reference
// tokenisation, greedy ids and top-10 logprobs recorded with an independent implementation for
// every prompt of every reference model in ../shared (tolerances from testdata/SCHEMA.md), and
// for the same models rewritten in the other layouts llama.cpp's converter publishes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/published_layout.h"
#include "base/file_text.h"

namespace {

using nlohmann::json;

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string JoinIds(const json& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + std::to_string(id.get<int>());
  return out;
}

std::string StderrPath() {
  return (std::filesystem::temp_directory_path() /
          ("conformance-stderr-" + std::to_string(getpid()))).string();
}

std::string LastStderr() {
  auto text = ds::ReadFileText(StderrPath());
  return text.ok() ? *text : "";
}

// Log lines go to stderr, which the failure message shows and LastStderr() returns.
json RunJson(const std::string& model, const std::string& prompt_args,
             const std::string& extra_flags) {
  std::string cmd = std::string(DELTASERVE_BIN) + " run -m " + Quote(model) + " " + prompt_args +
                    " " + extra_flags +
                    " -n 32 --temp 0 --logprobs 10 --json -t 2 2>" + Quote(StderrPath());
  std::string out = Shell(cmd);
  json parsed = json::parse(out, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << cmd << "\n" << out << "\n" << LastStderr();
  return parsed;
}


// Every reference top-10 id must appear in ours with a logprob within `tol`, except an id that
// fell just outside our top 10 because it ties with our 10th within the tolerance.
void ExpectStepsMatch(const json& ref_steps, const json& ours, double tol,
                      const std::string& label) {
  ASSERT_EQ(ours.size(), ref_steps.size()) << label;
  double worst = 0;
  for (size_t s = 0; s < ref_steps.size(); ++s) {
    std::map<int, double> got;
    double our_last = 0;
    for (const auto& e : ours[s]) {
      got[e["id"].get<int>()] = e["logprob"].get<double>();
      our_last = e["logprob"].get<double>();
    }
    for (const auto& ref : ref_steps[s]["top"]) {
      double ref_lp = ref["logprob"].get<double>();
      auto it = got.find(ref["id"].get<int>());
      if (it == got.end()) {
        EXPECT_LE(std::fabs(ref_lp - our_last), tol) << label << " step " << s << " id " << ref["id"];
        continue;
      }
      worst = std::max(worst, std::fabs(it->second - ref_lp));
      EXPECT_LE(std::fabs(it->second - ref_lp), tol) << label << " step " << s << " id " << ref["id"];
    }
  }
  std::printf("%s: max |logprob - ref| = %.2e (tolerance %.0e)\n", label.c_str(), worst, tol);
}

// `extra_flags` are added to every run. A lossy option (the 8-bit KV cache) may change a near
// tie and so the greedy continuation: with `same_ids` false the ids are not compared, and the
// logprobs are compared only while both continuations agree.
// `model` is the reference model's file unless given (another layout of the same weights).
void CheckModel(const std::string& stem, double tol, const std::string& extra_flags = "",
                bool same_ids = true, std::string model = "") {
  if (model.empty()) model = SharedDir() + "/" + stem + ".gguf";
  std::ifstream refs_file(SharedDir() + "/" + stem + ".refs.json");
  if (!std::filesystem::exists(model) || !refs_file) {
    GTEST_SKIP() << "reference model " << model << " not found; set DS_SHARED_DIR";
  }
  json refs = json::parse(refs_file);
  for (const auto& prompt : refs["prompts"]) {
    const std::string label = stem + "/" + prompt["name"].get<std::string>() +
                              (extra_flags.empty() ? "" : " " + extra_flags);
    json ours = RunJson(model, "--prompt-ids " + JoinIds(prompt["prompt_ids"]), extra_flags);
    ASSERT_FALSE(ours.is_discarded()) << label;
    json ref_steps = prompt["steps"];
    if (same_ids) {
      EXPECT_EQ(ours["generated_ids"], prompt["generated_ids"]) << label;
    } else {
      size_t agree = 0;
      while (agree < ref_steps.size() && agree < ours["generated_ids"].size() &&
             ours["generated_ids"][agree] == prompt["generated_ids"][agree]) {
        ++agree;
      }
      std::printf("%s: greedy ids agree for %zu of %zu steps\n", label.c_str(), agree,
                  ref_steps.size());
      // Step `agree` is still conditioned on the same prefix; later steps are not.
      const size_t comparable = std::min(ref_steps.size(), agree + 1);
      ref_steps = json(std::vector<json>(ref_steps.begin(), ref_steps.begin() + comparable));
      ours["top_logprobs"] = json(std::vector<json>(ours["top_logprobs"].begin(),
                                                    ours["top_logprobs"].begin() + comparable));
    }
    if (prompt.contains("f32_activation_reference")) {
      // F16 weights with f32 activations: held to the F32-activation reference (SCHEMA.md §6).
      for (size_t s = 0; s < ref_steps.size(); ++s) {
        ref_steps[s]["top"] = prompt["f32_activation_reference"]["steps"][s]["top"];
      }
    }
    ExpectStepsMatch(ref_steps, ours["top_logprobs"], tol, label);
    if (same_ids && prompt["kind"] != "ids") {
      json by_text =
          RunJson(model, "-p " + Quote(prompt["text"].get<std::string>()), extra_flags);
      ASSERT_FALSE(by_text.is_discarded()) << label;
      EXPECT_EQ(by_text["prompt_ids"], prompt["prompt_ids"]) << label << " (tokenised from text)";
      EXPECT_EQ(by_text["generated_ids"], prompt["generated_ids"]) << label << " (from text)";
    }
  }
}

TEST(ConformanceTest, Stories260K) { CheckModel("models/stories260K", 1e-3); }
TEST(ConformanceTest, Qwen35Moe) { CheckModel("testdata/hybrid/qwen35moe-pub", 1e-3); }
TEST(ConformanceTest, Qwen35DenseF16) { CheckModel("testdata/hybrid/qwen35-pub", 1e-3); }
TEST(ConformanceTest, Qwen3Next) { CheckModel("testdata/hybrid/qwen3next-pub", 1e-3); }

// The 8-bit KV cache against the same references: its effect on logprobs, printed per prompt.
// The bounds are what these random-weight models show (2-3e-2 for qwen35moe and qwen35; up to
// 0.4 for qwen3next, whose attention is far sharper) with room for noise; a wrong dequantisation
// is off by whole nats.
TEST(ConformanceTest, Qwen35MoeQ8Kv) {
  CheckModel("testdata/hybrid/qwen35moe-pub", 0.1, "--kv-quant 8", false);
}
TEST(ConformanceTest, Qwen35DenseF16Q8Kv) {
  CheckModel("testdata/hybrid/qwen35-pub", 0.1, "--kv-quant 8", false);
}
TEST(ConformanceTest, Qwen3NextQ8Kv) {
  CheckModel("testdata/hybrid/qwen3next-pub", 0.75, "--kv-quant 8", false);
}

// 8-bit K with 4-bit V the same way. V's steps are 16 times as coarse, and these models' logprobs
// move 2.5-60 times as far (0.26-1.02 for qwen35moe, 0.18-0.45 for qwen35, 0.34-1.17 for
// qwen3next, the same from the integer sums and from the float path); the bound leaves room for
// noise.
TEST(ConformanceTest, HybridsWith4BitValues) {
  for (const char* stem : {"testdata/hybrid/qwen35moe-pub", "testdata/hybrid/qwen35-pub",
                           "testdata/hybrid/qwen3next-pub"}) {
    CheckModel(stem, 2.0, "--kv-quant 8 --v-quant 4", false);
  }
}

// Files as llama.cpp's converter writes them by default (an MTP block after the trunk) and with
// its options (fused expert gate and up, a recurrent_layers array, the MTP block's own embedding
// and head): the trunk is the same, so the outputs are the references', and an unknown tensor
// is a warning.
void CheckPublishedLayout(const std::string& stem, const ds::apps::PublishedLayout& layout) {
  const std::string source = SharedDir() + "/" + stem + ".gguf";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " not found; set DS_SHARED_DIR";
  auto file = ds::gguf::File::Open(source, ds::gguf::Residency::kMapped);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto writer = ds::apps::Relayout(**file, layout);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("published-" + std::to_string(getpid()) + ".gguf")).string();
  ASSERT_TRUE(writer->WriteFile(path).ok());
  CheckModel(stem, 1e-3, "", true, path);
  if (layout.unknown_tensor) {
    EXPECT_NE(LastStderr().find("blk.0.future_norm.weight"), std::string::npos) << LastStderr();
  }
  std::filesystem::remove(path);
}

TEST(ConformanceTest, PublishedLayoutsQwen35Moe) {
  CheckPublishedLayout("testdata/hybrid/qwen35moe-pub",
                       {.n_mtp = 1, .fuse_gate_up_exps = true, .recurrent_layers = true});
}
TEST(ConformanceTest, PublishedLayoutsQwen35) {
  CheckPublishedLayout("testdata/hybrid/qwen35-pub",
                       {.n_mtp = 1, .mtp_own_head = true, .unknown_tensor = true});
}
TEST(ConformanceTest, PublishedLayoutsQwen3Next) {
  CheckPublishedLayout("testdata/hybrid/qwen3next-pub", {.n_mtp = 1, .fuse_gate_up_exps = true});
}

// The converter's --mtp writes the draft block alone; loading it says what it is.
TEST(ConformanceTest, AnMtpOnlyFileIsAClearError) {
  const std::string source = SharedDir() + "/testdata/hybrid/qwen35-pub.gguf";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " not found; set DS_SHARED_DIR";
  auto file = ds::gguf::File::Open(source, ds::gguf::Residency::kMapped);
  ASSERT_TRUE(file.ok());
  auto writer = ds::apps::Relayout(**file, {.n_mtp = 1});
  ASSERT_TRUE(writer.ok());
  for (const ds::gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.name.rfind("blk.", 0) == 0) writer->EraseTensor(t.name);
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("mtp-only-" + std::to_string(getpid()) + ".gguf")).string();
  ASSERT_TRUE(writer->WriteFile(path).ok());
  const std::string out = Shell(std::string(DELTASERVE_BIN) + " run -m " + Quote(path) +
                                " -p hi -n 1 2>&1");
  EXPECT_NE(out.find("holds only an MTP block"), std::string::npos) << out;
  std::filesystem::remove(path);
}

}  // namespace
