// Black-box tests of the deltaserve binary's error paths: every bad input gets one clear line on
// stderr and a non-zero exit status, never a crash.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "apps/default_vocab.h"
#include "base/large_buffer.h"
#include "cache/disk_files_test_util.h"
#include "base/system_memory.h"
#include "gguf/gguf.h"
#include "apps/test_models.h"

namespace ds::apps {
namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// With timeout_s > 0, a run that a bug hangs is killed then (exit code 124), so the test fails.
Result RunDeltaserve(const std::string& args, int timeout_s = 0) {
  std::string cmd = (timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "") +
                    std::string(DELTASERVE_BIN) + " " + args + " 2>&1";
  Result r{-1, ""};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("deltaserve_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteBytes(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 bytes.size());
    return path;
  }

  std::string TinyModelPath(const std::string& arch) {
    return WriteBytes(arch + ".gguf", BuildTestModel(TinyConfig(arch))->bytes);
  }

  void ExpectOneLineError(const Result& r, const std::string& needle) {
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_LT(r.exit_code, 128) << "crashed: " << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }

  std::filesystem::path dir_;
};

TEST_F(CliTest, MissingModelFile) {
  ExpectOneLineError(RunDeltaserve("run -m /nonexistent/model.gguf -p hi -n 1"), "/nonexistent/model.gguf");
}

TEST_F(CliTest, NotAGgufFile) {
  std::string path = WriteBytes("text.gguf", {'h', 'e', 'l', 'l', 'o', '\n'});
  ExpectOneLineError(RunDeltaserve("run -m " + path + " -p hi -n 1"), "text.gguf");
}

TEST_F(CliTest, UnsupportedArchitecture) {
  auto writer = MakeModel(TinyConfig("qwen3"), MakeDefaultVocab(50));
  ASSERT_TRUE(writer.ok());
  writer->Set("general.architecture", gguf::Value::Str("mamba9"));
  std::string path = WriteBytes("mamba9.gguf", writer->Serialize());
  ExpectOneLineError(RunDeltaserve("run -m " + path + " -p hi -n 1"), "unsupported architecture 'mamba9'");
}

TEST_F(CliTest, UnsupportedWeightType) {
  // Rewrites the type of one f32 weight to i8: still inside the file, but not a weight type.
  std::vector<uint8_t> bytes = BuildTestModel(TinyConfig("qwen3"))->bytes;
  const std::string name = "blk.0.attn_q.weight";
  auto it = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  ASSERT_NE(it, bytes.end());
  size_t type_offset = (it - bytes.begin()) + name.size() + 4 + 2 * 8;  // n_dims, ne[0], ne[1]
  uint32_t i8_type = 24;
  std::memcpy(bytes.data() + type_offset, &i8_type, 4);
  std::string path = WriteBytes("i8.gguf", bytes);
  ExpectOneLineError(RunDeltaserve("run -m " + path + " -p hi -n 1"), "not supported for weights");
}

TEST_F(CliTest, PromptLongerThanContext) {
  std::string path = TinyModelPath("qwen35moe");
  ExpectOneLineError(RunDeltaserve("run -m " + path + " --prompt-ids 1,2,3,4,5,6,7,8,9,10 -c 8 -n 1"),
                     "exceeds the context size");
}

TEST_F(CliTest, TokenIdOutsideVocabulary) {
  std::string path = TinyModelPath("qwen3");
  ExpectOneLineError(RunDeltaserve("run -m " + path + " --prompt-ids 1,999999 -n 1"),
                     "outside the vocabulary");
  ExpectOneLineError(RunDeltaserve("run -m " + path + " --prompt-ids 1,x -n 1"), "not a token id");
}

TEST_F(CliTest, PromptAndIdsAreExclusive) {
  ExpectOneLineError(RunDeltaserve("run --prompt-ids 1 -p hi -n 1"), "exactly one of");
}

TEST_F(CliTest, EmbeddedDefaultModelGenerates) {
  Result r = RunDeltaserve("run -p 'Once upon a time' -n 8 --temp 0 --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"generated_ids\""), std::string::npos) << r.output;
}

TEST_F(CliTest, TimingsArePrinted) {
  Result r = RunDeltaserve("run -p 'Once upon a time' -n 8 --temp 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("prefill"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tok/s over the decode window"), std::string::npos) << r.output;
}

TEST_F(CliTest, MakeModelRejectsBadConfig) {
  std::string config = (dir_ / "bad.json").string();
  std::ofstream(config) << R"({"n_layers": 3})";
  ExpectOneLineError(RunDeltaserve("make-model --config " + config + " -o " + (dir_ / "x.gguf").string()),
                     "n_layers");
}

TEST_F(CliTest, BenchModelReportsEveryTestAndTheBandwidth) {
  Result r = RunDeltaserve("bench-model -m " + TinyModelPath("qwen35moe") +
                           " -p 16 -n 4 -d 0 -d 32 -r 2 -t 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("cpu: ", 0), 0u) << "the report starts with the CPU: " << r.output;
  EXPECT_NE(r.output.find(" online CPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("memory read bandwidth: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| model | size | params | threads | test | t/s |"), std::string::npos)
      << r.output;
  for (const char* test : {"| pp16 |", "| tg4 |", "| pp16 @ d32 |", "| tg4 @ d32 |", "FMA peak: ",
                           "decode floor ", "% of floor (", " GB/s, round trip ", " ns) |",
                           "thread round trip: ", "% of FMA peak",
                           "int8 dot peak: ", "% of int8 dot peak |",
                           "K cache f32, V cache f32", "runs per test: 1 untimed, then 2 timed",
                           "CPU time taken by the host (steal) during the timed runs: "}) {
    EXPECT_NE(r.output.find(test), std::string::npos) << test << "\n" << r.output;
  }
  Result no_warmup = RunDeltaserve("bench-model -m " + TinyModelPath("qwen35moe") +
                                   " -p 4 -n 2 -d 0 -r 1 --warmup 0");
  EXPECT_EQ(no_warmup.exit_code, 0) << no_warmup.output;
  EXPECT_NE(no_warmup.output.find("runs per test: 0 untimed, then 1 timed"), std::string::npos)
      << no_warmup.output;
  ExpectOneLineError(RunDeltaserve("bench-model -m " + TinyModelPath("qwen35moe") + " --warmup -1"),
                     "--warmup");
  // One thread has no round trip to report.
  Result one_thread = RunDeltaserve("bench-model -m " + TinyModelPath("qwen35moe") +
                                    " -p 0 -n 2 -d 0 -r 1 -t 1");
  EXPECT_EQ(one_thread.exit_code, 0) << one_thread.output;
  EXPECT_EQ(one_thread.output.find("round trip"), std::string::npos) << one_thread.output;
  EXPECT_NE(one_thread.output.find(" GB/s) |"), std::string::npos) << one_thread.output;
}

TEST_F(CliTest, WeightsReadOntoHugePagesOrMappedDecodeAlike) {
  // The default preset's 10 MB file is past the 2 MiB below which a model is always mapped.
  const std::string model = (dir_ / "default.gguf").string();
  ASSERT_EQ(RunDeltaserve("make-model --preset default -o " + model).exit_code, 0);
  const std::string run = "run -m " + model + " -p 'Once upon a time' -n 8 --temp 0 --json";
  Result read = RunDeltaserve(run);
  Result mapped = RunDeltaserve(run + " --mmap");
  ASSERT_EQ(read.exit_code, 0) << read.output;
  ASSERT_EQ(mapped.exit_code, 0) << mapped.output;
  const auto generated = [](const std::string& json) {
    const size_t at = json.find("\"generated_ids\"");
    return at == std::string::npos ? std::string() : json.substr(at, json.find(']', at) - at);
  };
  EXPECT_FALSE(generated(read.output).empty()) << read.output;
  EXPECT_EQ(generated(read.output), generated(mapped.output));

  const std::string bench = "bench-model -m " + model + " -p 4 -n 2 -d 0 -r 1";
  const bool huge_pages = HugePagesAvailable() &&
                          gguf::CopyFitsInMemory(std::filesystem::file_size(model),
                                                 AvailableMemoryBytes());
  Result bench_read = RunDeltaserve(bench);
  EXPECT_NE(bench_read.output.find(huge_pages ? "weights: in memory on 2 MiB pages\n"
                                              : "weights: mapped from the file\n"),
            std::string::npos)
      << bench_read.output;
  Result bench_mapped = RunDeltaserve(bench + " --mmap");
  EXPECT_NE(bench_mapped.output.find("weights: mapped from the file\n"), std::string::npos)
      << bench_mapped.output;
}

TEST_F(CliTest, KvAndValueQuantNeedWholeBlocksPerHead) {
  // The tiny models have heads of 16 values; Q8_0 blocks hold 32.
  const std::string model = TinyModelPath("qwen3");
  ExpectOneLineError(RunDeltaserve("run -m " + model + " -p hi -n 1 --kv-quant 8"),
                     "divisible by 32");
  ExpectOneLineError(RunDeltaserve("bench-model -m " + model + " -p 4 -n 1 --kv-quant 3"),
                     "--kv-quant takes 0 (f32) or 8 (Q8_0)");
  ExpectOneLineError(RunDeltaserve("serve -m " + model + " --port 0 --kv-quant 8"),
                     "divisible by 32");
  ExpectOneLineError(RunDeltaserve("run -m " + model + " -p hi -n 1 --v-quant 4"),
                     "--v-quant 4 needs a head size divisible by 32");
  ExpectOneLineError(RunDeltaserve("bench-model -m " + model + " -p 4 -n 1 --v-quant 5"),
                     "--v-quant takes 0 (f32), 8 (Q8_0) or 4 (Q4_0)");
}

// make-model imports a Hugging Face tokenizer, and the model it writes tokenises as that
// tokenizer does (ids from the shared golden vectors).
TEST_F(CliTest, MakeModelImportsATokenizer) {
  const char* env = std::getenv("DS_SHARED_DIR");
  const std::string dir =
      std::string(env != nullptr ? env : "../shared") + "/testdata/tokenizers/qwen3/";
  if (!std::filesystem::exists(dir + "tokenizer.json")) {
    GTEST_SKIP() << "no " << dir << "tokenizer.json; set DS_SHARED_DIR";
  }
  const std::string model = (dir_ / "imported.gguf").string();
  Result made = RunDeltaserve("make-model --arch qwen3 --tokenizer " + dir + "tokenizer.json" +
                              " --tokenizer-config " + dir + "tokenizer_config.json -o " + model);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  Result run = RunDeltaserve("run -m " + model + " -p 'Hello world' -n 1 --temp 0 --json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("\"prompt_ids\":[9707,1879]"), std::string::npos) << run.output;
  ExpectOneLineError(RunDeltaserve("make-model --arch qwen3 --tokenizer " +
                                   (dir_ / "missing.json").string() + " -o " + model),
                     "missing.json");
}

// `cache verify` names each kind of finding and or-s a bit per kind into its exit status; it and
// `ls` and `stat` return at once whatever the directory holds.
TEST_F(CliTest, CacheVerifyTellsDamageOtherFormatsAndForeignFilesApart) {
  namespace fs = std::filesystem;
  const fs::path model = dir_ / "cache" / "0123456789abcdef";
  fs::create_directories(model);
  const auto name = [](const cache::DiskRecordMeta& meta) {
    return cache::RecordFileName(false, meta.key);
  };
  const std::string good = name(cache::testing::WriteBlockRecord(model, 1));
  const std::string other = name(cache::testing::WriteBlockRecord(model, 2));
  const auto flip = [&](const std::string& file, std::streamoff at, char byte) {
    std::fstream f(model / file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at, at < 0 ? std::ios::end : std::ios::beg);
    f.put(byte);
  };
  flip(other, 4, '\x09');  // the format version field
  const std::string cache_dir = " --cache-dir " + (dir_ / "cache").string();
  Result r = RunDeltaserve("cache verify" + cache_dir, 60);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("OTHER FORMAT 0123456789abcdef/" + other +
                          ": record format version 9"),
            std::string::npos)
      << r.output;

  ASSERT_EQ(::mkfifo((model / "b-fifo.rec").c_str(), 0600), 0);
  fs::create_symlink(model / good, model / "s-link.rec");
  r = RunDeltaserve("cache verify" + cache_dir, 60);
  EXPECT_EQ(r.exit_code, 2 | 4) << r.output;
  EXPECT_NE(r.output.find("FOREIGN 0123456789abcdef/b-fifo.rec: a FIFO"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("FOREIGN 0123456789abcdef/s-link.rec: a symbolic link"),
            std::string::npos)
      << r.output;
  for (const char* look : {"ls", "stat"}) {
    r = RunDeltaserve(std::string("cache ") + look + cache_dir, 60);
    EXPECT_EQ(r.exit_code, 0) << look << ": " << r.output;
  }
  EXPECT_NE(r.output.find("foreign        2"), std::string::npos) << r.output;

  const std::string damaged = name(cache::testing::WriteBlockRecord(model, 3));
  flip(damaged, -1, '\x7f');  // a payload byte
  r = RunDeltaserve("cache verify --dry-run" + cache_dir, 60);
  EXPECT_EQ(r.exit_code, 1 | 2 | 4) << r.output;
  EXPECT_NE(r.output.find("DAMAGED 0123456789abcdef/" + damaged), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(model / damaged));
  r = RunDeltaserve("cache verify" + cache_dir, 60);
  EXPECT_EQ(r.exit_code, 1 | 2 | 4) << r.output;
  EXPECT_TRUE(fs::exists(model / "quarantine" / damaged));
  for (const std::string& kept : {good, other}) {
    EXPECT_TRUE(fs::exists(model / kept)) << kept << " was moved";
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(model / "b-fifo.rec")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(model / "s-link.rec")));
  EXPECT_EQ(RunDeltaserve("cache verify" + cache_dir, 60).exit_code, 2 | 4);
}

}  // namespace
}  // namespace ds::apps
