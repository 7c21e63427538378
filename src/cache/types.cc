#include "cache/types.h"

namespace ds::cache {

const char* SnapshotKindName(SnapshotKind kind) {
  switch (kind) {
    case SnapshotKind::kMessageBoundary:
      return "message_boundary";
    case SnapshotKind::kPromptEnd:
      return "prompt_end";
    case SnapshotKind::kGenerationEnd:
      return "generation_end";
    case SnapshotKind::kInterval:
      return "interval";
    case SnapshotKind::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

const char* EvictReasonName(EvictReason reason) {
  switch (reason) {
    case EvictReason::kUselessKv:
      return "useless_kv";
    case EvictReason::kLowValue:
      return "low_value";
    case EvictReason::kProtected:
      return "protected";
  }
  return "unknown";
}

const char* ResumeLimitName(ResumeLimit limit) {
  switch (limit) {
    case ResumeLimit::kNothingCached:
      return "nothing_cached";
    case ResumeLimit::kReachedMatch:
      return "reached_match";
    case ResumeLimit::kNoSnapshot:
      return "no_snapshot";
    case ResumeLimit::kSnapshotAtEnd:
      return "snapshot_at_end";
    case ResumeLimit::kEvicted:
      return "evicted";
    case ResumeLimit::kRestoreGuard:
      return "restore_guard";
  }
  return "unknown";
}

}  // namespace ds::cache
