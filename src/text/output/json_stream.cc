#include "text/output/json_stream.h"

#include "base/check.h"

namespace ds::text {
namespace {

bool IsSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendControlEscape(unsigned char c, std::string* out) {
  switch (c) {
    case '\n':
      out->append("\\n");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\t':
      out->append("\\t");
      return;
    case '\b':
      out->append("\\b");
      return;
    case '\f':
      out->append("\\f");
      return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

}  // namespace

void AppendJsonEscaped(std::string_view text, std::string* out) {
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      AppendControlEscape(c, out);
    } else {
      out->push_back(ch);
    }
  }
}

size_t JsonStreamer::Feed(std::string_view text, std::string* out) {
  DS_CHECK(status_ == Status::kInProgress);
  size_t consumed = 0;
  for (; consumed < text.size() && status_ == Status::kInProgress; ++consumed) {
    const auto c = static_cast<unsigned char>(text[consumed]);
    if (!Step(c)) {
      status_ = Status::kInvalid;
      break;
    }
    unreleased_input_.push_back(static_cast<char>(c));
    if (IsReleasePoint()) {
      releasable_ = held_.size();
      string_open_at_release_ = state_ == State::kString;
      unreleased_input_.clear();
    }
    if (state_ == State::kDone) status_ = Status::kComplete;
  }
  out->append(held_, 0, releasable_);
  held_.erase(0, releasable_);
  releasable_ = 0;
  return consumed;
}

void JsonStreamer::EndOfInput(std::string* out) {
  if (status_ != Status::kInProgress || state_ != State::kNumber || !NumberIsComplete()) return;
  state_ = State::kAfterValue;
  out->append(held_);
  held_.clear();
  unreleased_input_.clear();
  string_open_at_release_ = false;
}

std::string JsonStreamer::ClosingText() const {
  if (status_ == Status::kComplete) return "";
  std::string text = string_open_at_release_ ? "\"" : "";
  text.append(closers_.rbegin(), closers_.rend());
  return text;
}

bool JsonStreamer::IsReleasePoint() const {
  switch (state_) {
    case State::kKeyOrClose:
    case State::kValueOrClose:
    case State::kAfterValue:
    case State::kDone:
      return true;
    case State::kString:
      return !in_key_ && utf8_continuations_ == 0;
    default:
      return false;
  }
}

bool JsonStreamer::NumberIsComplete() const {
  return number_part_ == NumberPart::kZero || number_part_ == NumberPart::kInt ||
         number_part_ == NumberPart::kFrac || number_part_ == NumberPart::kExpDigits;
}

void JsonStreamer::Close() {
  held_.push_back(closers_.back());
  closers_.pop_back();
  state_ = closers_.empty() ? State::kDone : State::kAfterValue;
}

bool JsonStreamer::Step(unsigned char c) {
  switch (state_) {
    case State::kBegin:
      if (IsSpace(c)) return true;
      if (c != '{' && c != '[') return false;
      return StartValue(c);
    case State::kValueOrClose:
      if (c == ']') return Close(), true;
      [[fallthrough]];
    case State::kValue:
      if (IsSpace(c)) return held_.push_back(static_cast<char>(c)), true;
      return StartValue(c);
    case State::kKeyOrClose:
      if (c == '}') return Close(), true;
      [[fallthrough]];
    case State::kKey:
      if (IsSpace(c)) return held_.push_back(static_cast<char>(c)), true;
      if (c != '"') return false;
      held_.push_back('"');
      in_key_ = true;
      state_ = State::kString;
      return true;
    case State::kColon:
      if (IsSpace(c)) return held_.push_back(static_cast<char>(c)), true;
      if (c != ':') return false;
      held_.push_back(':');
      state_ = State::kValue;
      return true;
    case State::kAfterValue:
      if (IsSpace(c)) return held_.push_back(static_cast<char>(c)), true;
      if (c == static_cast<unsigned char>(closers_.back())) return Close(), true;
      if (c != ',') return false;
      held_.push_back(',');
      state_ = closers_.back() == '}' ? State::kKey : State::kValue;
      return true;
    case State::kString:
    case State::kEscape:
    case State::kUnicode:
    case State::kSurrogateSlash:
    case State::kSurrogateU:
      return StepString(c);
    case State::kNumber: {
      const int r = StepNumber(c);
      if (r != 0) return r > 0;
      // The number ended before c: that is a release point, then c continues the container.
      state_ = State::kAfterValue;
      releasable_ = held_.size();
      string_open_at_release_ = false;
      unreleased_input_.clear();
      return Step(c);
    }
    case State::kLiteral:
      if (c != static_cast<unsigned char>(literal_[literal_pos_])) return false;
      held_.push_back(static_cast<char>(c));
      if (++literal_pos_ == literal_.size()) state_ = State::kAfterValue;
      return true;
    case State::kDone:
    case State::kInvalid:
      return false;
  }
  return false;
}

bool JsonStreamer::StartValue(unsigned char c) {
  held_.push_back(static_cast<char>(c));
  if (c == '{' || c == '[') {
    closers_.push_back(c == '{' ? '}' : ']');
    state_ = c == '{' ? State::kKeyOrClose : State::kValueOrClose;
    return true;
  }
  if (c == '"') {
    in_key_ = false;
    state_ = State::kString;
    return true;
  }
  if (c == '-' || IsDigit(c)) {
    state_ = State::kNumber;
    number_part_ = c == '-' ? NumberPart::kMinus : c == '0' ? NumberPart::kZero : NumberPart::kInt;
    return true;
  }
  literal_ = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : "";
  if (literal_.empty()) return false;
  literal_pos_ = 1;
  state_ = State::kLiteral;
  return true;
}

bool JsonStreamer::StepString(unsigned char c) {
  switch (state_) {
    case State::kString:
      if (c == '"') {
        held_.push_back('"');
        state_ = in_key_ ? State::kColon : State::kAfterValue;
      } else if (c == '\\') {
        held_.push_back('\\');
        state_ = State::kEscape;
      } else if (c < 0x20) {
        AppendControlEscape(c, &held_);
      } else {
        // Release whole characters only.
        if ((c & 0xC0) == 0x80) {
          if (utf8_continuations_ > 0) --utf8_continuations_;
        } else {
          utf8_continuations_ = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        }
        held_.push_back(static_cast<char>(c));
      }
      return true;
    case State::kEscape:
      held_.push_back(static_cast<char>(c));
      if (c == 'u') {
        state_ = State::kUnicode;
        hex_digits_ = 0;
        code_unit_ = 0;
        return true;
      }
      state_ = State::kString;
      return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
             c == 't';
    case State::kUnicode:
      return StepUnicode(c);
    case State::kSurrogateSlash:
      held_.push_back(static_cast<char>(c));
      state_ = State::kSurrogateU;
      return c == '\\';
    case State::kSurrogateU:
      held_.push_back(static_cast<char>(c));
      state_ = State::kUnicode;
      hex_digits_ = 0;
      code_unit_ = 0;
      return c == 'u';
    default:
      return false;
  }
}

bool JsonStreamer::StepUnicode(unsigned char c) {
  const int v = HexValue(c);
  if (v < 0) return false;
  held_.push_back(static_cast<char>(c));
  code_unit_ = code_unit_ * 16 + static_cast<uint32_t>(v);
  if (++hex_digits_ < 4) return true;
  const bool high = code_unit_ >= 0xD800 && code_unit_ <= 0xDBFF;
  const bool low = code_unit_ >= 0xDC00 && code_unit_ <= 0xDFFF;
  if (want_low_surrogate_) {
    want_low_surrogate_ = false;
    state_ = State::kString;
    return low;
  }
  if (low) return false;
  if (high) {
    want_low_surrogate_ = true;
    state_ = State::kSurrogateSlash;
    return true;
  }
  state_ = State::kString;
  return true;
}

int JsonStreamer::StepNumber(unsigned char c) {
  NumberPart next = number_part_;
  switch (number_part_) {
    case NumberPart::kMinus:
      if (!IsDigit(c)) return -1;
      next = c == '0' ? NumberPart::kZero : NumberPart::kInt;
      break;
    case NumberPart::kZero:
    case NumberPart::kInt:
      if (IsDigit(c) && number_part_ == NumberPart::kInt) {
        next = NumberPart::kInt;
      } else if (c == '.') {
        next = NumberPart::kDot;
      } else if (c == 'e' || c == 'E') {
        next = NumberPart::kExp;
      } else {
        return IsDigit(c) ? -1 : 0;
      }
      break;
    case NumberPart::kDot:
      if (!IsDigit(c)) return -1;
      next = NumberPart::kFrac;
      break;
    case NumberPart::kFrac:
      if (IsDigit(c)) {
        next = NumberPart::kFrac;
      } else if (c == 'e' || c == 'E') {
        next = NumberPart::kExp;
      } else {
        return 0;
      }
      break;
    case NumberPart::kExp:
      if (c == '+' || c == '-') {
        next = NumberPart::kExpSign;
        break;
      }
      [[fallthrough]];
    case NumberPart::kExpSign:
      if (!IsDigit(c)) return -1;
      next = NumberPart::kExpDigits;
      break;
    case NumberPart::kExpDigits:
      if (!IsDigit(c)) return 0;
      next = NumberPart::kExpDigits;
      break;
  }
  number_part_ = next;
  held_.push_back(static_cast<char>(c));
  return 1;
}

}  // namespace ds::text
