// The XML tool-call form of OutputParser (Qwen3-Coder / Qwen3.5), split from output_parser.cc.
#include "text/output/output_parser.h"
#include "text/output/scan_util.h"

namespace ds::text {
namespace {

using scan::FindTag;
using scan::IsProperPrefix;
using scan::LeadingSpace;
using scan::Match;
using scan::TagMatch;

constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParameterOpen = "<parameter=";
constexpr std::string_view kParameterClose = "</parameter>";
constexpr std::string_view kToolCallClose = "</tool_call>";

}  // namespace

// pending_ starts with '<': announces the call at a whole `<function=NAME>`.
bool OutputParser::StepXmlFunctionTag(bool at_end) {
  std::string name;
  size_t length = 0;
  const Match m = scan::MatchNamedTag(pending_, kFunctionOpen, &name, &length);
  if (m == Match::kYes) {
    pending_.erase(0, length);
    BeginCall(std::move(name));
    Emit(OutputEvent::Kind::kToolCallArgumentsDelta, "{");
    first_param_ = true;
    mode_ = Mode::kXmlBody;
    return true;
  }
  if (m == Match::kNeedMore && !at_end) return false;
  if (mode_ == Mode::kBlockHead) {
    FallBackToContent();
  } else {
    mode_ = Mode::kBrokenBlock;
  }
  return true;
}

bool OutputParser::StepXmlBody(bool at_end) {
  pending_.erase(0, LeadingSpace(pending_));
  if (pending_.empty()) return false;
  if (pending_.starts_with(kFunctionClose)) {
    pending_.erase(0, kFunctionClose.size());
    Emit(OutputEvent::Kind::kToolCallArgumentsDelta, "}");
    EndCall();
    mode_ = Mode::kXmlAfterFunction;
    return true;
  }
  std::string key;
  size_t length = 0;
  const Match m = scan::MatchNamedTag(pending_, kParameterOpen, &key, &length);
  if (m == Match::kYes) {
    pending_.erase(0, length);
    param_types_ = schemas_.ParamTypes(call_name_, key);
    param_key_ = std::move(key);
    if (IsStringTyped(param_types_)) {
      EmitXmlArgument(param_key_, "\"");
      value_started_ = false;
      mode_ = Mode::kXmlStringValue;
    } else {
      mode_ = Mode::kXmlTypedValue;
    }
    return true;
  }
  if (!at_end && (m == Match::kNeedMore || IsProperPrefix(pending_, kFunctionClose))) return false;
  // Not a parameter: the call ends here and the rest of its block is content.
  Emit(OutputEvent::Kind::kToolCallArgumentsDelta, "}");
  EndCall();
  mode_ = Mode::kBrokenBlock;
  return true;
}

bool OutputParser::StepXmlStringValue(bool at_end) {
  if (!value_started_) {
    if (pending_.empty()) return false;
    if (pending_[0] == '\n') pending_.erase(0, 1);
    value_started_ = true;
  }
  const TagMatch tag = FindTag(pending_, kParameterClose);
  std::string escaped;
  if (!tag.found() && !at_end) {
    // Held back: a partial </parameter> and a newline that may precede it.
    size_t end = tag.partial ? tag.pos : pending_.size();
    if (end > 0 && pending_[end - 1] == '\n') --end;
    AppendJsonEscaped(std::string_view(pending_.data(), end), &escaped);
    Emit(OutputEvent::Kind::kToolCallArgumentsDelta, escaped);
    pending_.erase(0, end);
    return false;
  }
  // The value ends at </parameter>, or where the text ends (before a partial closing tag).
  std::string_view value(pending_.data(), tag.pos == std::string::npos ? pending_.size() : tag.pos);
  if (value.ends_with('\n')) value.remove_suffix(1);
  AppendJsonEscaped(value, &escaped);
  escaped.push_back('"');
  Emit(OutputEvent::Kind::kToolCallArgumentsDelta, escaped);
  pending_.erase(0, tag.found() ? tag.pos + kParameterClose.size() : pending_.size());
  mode_ = Mode::kXmlBody;
  return true;
}

bool OutputParser::StepXmlTypedValue(bool at_end) {
  const TagMatch tag = FindTag(pending_, kParameterClose);
  if (!tag.found() && !at_end) return false;
  // At the end of the text, the value is what arrived before a partial closing tag.
  std::string_view value(pending_.data(), tag.pos == std::string::npos ? pending_.size() : tag.pos);
  if (value.starts_with('\n')) value.remove_prefix(1);
  if (value.ends_with('\n')) value.remove_suffix(1);
  EmitXmlArgument(param_key_, XmlValueToJson(value, param_types_));
  pending_.erase(0, tag.found() ? tag.pos + kParameterClose.size() : pending_.size());
  mode_ = Mode::kXmlBody;
  return true;
}

bool OutputParser::StepXmlAfterFunction(bool at_end) {
  pending_.erase(0, LeadingSpace(pending_));
  if (pending_.empty()) return false;
  if (pending_.starts_with(kToolCallClose)) {
    pending_.erase(0, kToolCallClose.size());
    mode_ = Mode::kSkipSpace;
    return true;
  }
  if (pending_.starts_with(kFunctionOpen) || IsProperPrefix(pending_, kFunctionOpen)) {
    return StepXmlFunctionTag(at_end);
  }
  if (!at_end && IsProperPrefix(pending_, kToolCallClose)) return false;
  mode_ = Mode::kBrokenBlock;
  return true;
}

void OutputParser::EmitXmlArgument(std::string_view key, std::string_view json_value) {
  std::string text = first_param_ ? "" : ", ";
  first_param_ = false;
  text.push_back('"');
  AppendJsonEscaped(key, &text);
  text += "\": ";
  text += json_value;
  Emit(OutputEvent::Kind::kToolCallArgumentsDelta, text);
}

}  // namespace ds::text
