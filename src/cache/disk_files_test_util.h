// Test helpers for the disk tier's files: writing a record by hand, and running a call that a FIFO
// could hang without hanging the test binary.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk_record.h"

namespace ds::cache::testing {

inline constexpr const char* kTestLayout = "test layout: f32 [rows][2]";

// Writes a first block of 4 tokens (tag, tag + 1, ...) with a 64-byte payload to dir, named by
// its key as the disk tier names it, and returns its meta.
inline DiskRecordMeta WriteBlockRecord(const std::string& dir, int32_t tag, uint64_t seed = 7) {
  DiskRecordMeta meta;
  meta.begin_tokens = 0;
  meta.end_tokens = 4;
  meta.ids = {tag, tag + 1, tag + 2, tag + 3};
  meta.key = BlockKey(Hash128{}, meta.ids, seed);
  meta.layout = kTestLayout;
  std::vector<uint8_t> payload(64, static_cast<uint8_t>(tag));
  meta.payload_bytes = static_cast<int64_t>(payload.size());
  meta.payload_checksum = PayloadChecksum(payload);
  std::vector<uint8_t> header = EncodeRecordHeader(meta);
  std::ofstream out(dir + "/" + RecordFileName(false, meta.key), std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), header.size());
  out.write(reinterpret_cast<const char*>(payload.data()), payload.size());
  return meta;
}

// Runs `fn` and says whether it returned within a few seconds. When it did not (it is blocked
// opening the FIFO at `fifo`), a writer opens the FIFO so that it ends, and the test can fail
// instead of hanging.
inline bool ReturnsInTime(const std::function<void()>& fn, const std::string& fifo) {
  std::future<void> done = std::async(std::launch::async, fn);
  if (done.wait_for(std::chrono::seconds(5)) == std::future_status::ready) return true;
  while (done.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  }
  return false;
}

}  // namespace ds::cache::testing
