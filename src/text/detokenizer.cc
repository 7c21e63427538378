#include "text/detokenizer.h"

#include "text/unicode.h"

namespace ds::text {

std::string IncrementalDetokenizer::Push(int32_t id) {
  pending_ += tokenizer_->TokenToPiece(id, render_special_);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const Utf8Step step = DecodeUtf8Strict(std::string_view(pending_).substr(i));
    if (step.status == Utf8Status::kIncomplete) break;  // may still complete: hold it back
    if (step.status == Utf8Status::kComplete) {
      out.append(pending_, i, step.length);
    } else {
      AppendUtf8(kReplacementChar, &out);
    }
    i += step.length;
  }
  pending_.erase(0, i);
  return out;
}

std::string IncrementalDetokenizer::Flush() {
  std::string out = SanitizeUtf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace ds::text
