// JsonStreamer: checks a JSON object or array that arrives in pieces and releases only text that
// can still be completed into valid JSON by closing the open string and brackets. Text whose
// completion would need invented content (a key without its value, a dangling ',', half a number,
// literal or escape) is held back until the value it starts is whole. So at any moment
// released + ClosingText() parses as JSON, and when the value completes, released alone does.
//
// Deviations from strict JSON: raw control characters inside strings (a model writing a literal
// newline in a code string) are released escaped ("\n", "\u0001") instead of being rejected.
// A lone UTF-16 surrogate escape is rejected, as nlohmann::json would reject it on parsing.
// Input must be valid UTF-8; bytes >= 0x80 are passed through inside strings, and only whole
// characters are released.
// Thread safety: one instance per value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ds::text {

class JsonStreamer {
 public:
  enum class Status { kInProgress, kComplete, kInvalid };

  // Consumes bytes of `text` until the value completes or a byte cannot continue it; appends the
  // newly releasable text to *out. Returns the number of bytes consumed: text.size() while in
  // progress, less when the value completed (the rest follows it) or a byte was invalid (that
  // byte is not consumed).
  // REQUIRES: status() == kInProgress.
  size_t Feed(std::string_view text, std::string* out);

  // The input ended: a number that is complete so far is accepted and released into *out.
  void EndOfInput(std::string* out);

  Status status() const { return status_; }

  // What closes the released text into one valid JSON value: '"' if a string is open, then the
  // closing bracket of every open container. Empty once complete.
  std::string ClosingText() const;

  // Input consumed since the last release point, not released (held back, then abandoned when
  // the value turned out invalid or unfinished).
  const std::string& unreleased_input() const { return unreleased_input_; }

 private:
  enum class State : uint8_t {
    kBegin,           // before the top-level '{' or '['
    kValue,           // a value must follow (after ':' or an array's ',')
    kValueOrClose,    // right after '['
    kKeyOrClose,      // right after '{'
    kKey,             // after an object's ','
    kColon,           // after a key
    kAfterValue,      // ',' or the container's closer
    kString,          // inside a key or value string
    kEscape,          // after '\' in a string
    kUnicode,         // inside \uXXXX
    kSurrogateSlash,  // after a high surrogate escape: '\' of the low one must follow
    kSurrogateU,      // ... then 'u'
    kNumber,
    kLiteral,  // true, false, null
    kDone,
    kInvalid,
  };
  enum class NumberPart : uint8_t { kMinus, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };

  // Returns false when `c` cannot continue the value.
  bool Step(unsigned char c);
  bool StartValue(unsigned char c);
  bool StepString(unsigned char c);
  bool StepUnicode(unsigned char c);
  // Returns 1 if c continues the number, 0 if the number ended before c, -1 if c is invalid.
  int StepNumber(unsigned char c);
  void Close();
  bool IsReleasePoint() const;
  bool NumberIsComplete() const;

  Status status_ = Status::kInProgress;
  State state_ = State::kBegin;
  NumberPart number_part_ = NumberPart::kMinus;
  bool in_key_ = false;
  int utf8_continuations_ = 0;  // bytes still to come of the current UTF-8 character
  bool want_low_surrogate_ = false;
  int hex_digits_ = 0;
  uint32_t code_unit_ = 0;
  std::string_view literal_;  // the literal being matched; literal_pos_ bytes of it seen
  size_t literal_pos_ = 0;
  std::string closers_;    // expected closing brackets, innermost last
  std::string held_;       // output not yet released
  size_t releasable_ = 0;  // held_[0, releasable_) is safe to release
  bool string_open_at_release_ = false;
  std::string unreleased_input_;
};

// Appends `text` to *out as the inside of a JSON string (quotes, backslashes and control
// characters escaped, everything else as is).
void AppendJsonEscaped(std::string_view text, std::string* out);

}  // namespace ds::text
