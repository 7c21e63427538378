#include "text/output/output_parser.h"

#include <utility>

#include "base/check.h"
#include "base/json_depth.h"
#include "text/output/scan_util.h"

namespace ds::text {
namespace {

using scan::FindTag;
using scan::IsProperPrefix;
using scan::LeadingSpace;
using scan::Match;
using scan::TagMatch;
using scan::TrailingSpace;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolCallOpen = "<tool_call>";
constexpr std::string_view kToolCallClose = "</tool_call>";

// Matches `{"name": "<name>", "arguments": ` at the start of `s`, up to the arguments' opening
// '{' (which must be there, not included in *length): the layout Qwen templates teach.
Match MatchJsonHead(std::string_view s, std::string* name, size_t* length) {
  size_t i = 0;
  const auto skip_space = [&] { i += LeadingSpace(s.substr(i)); };
  const auto literal = [&](std::string_view lit) {
    const std::string_view rest = s.substr(i);
    if (rest.size() < lit.size()) return IsProperPrefix(rest, lit) ? Match::kNeedMore : Match::kNo;
    if (rest.substr(0, lit.size()) != lit) return Match::kNo;
    i += lit.size();
    skip_space();
    return Match::kYes;
  };
  for (std::string_view lit : {"{", "\"name\"", ":"}) {
    if (Match m = literal(lit); m != Match::kYes) return m;
  }
  if (i == s.size()) return Match::kNeedMore;
  if (s[i] != '"') return Match::kNo;
  size_t j = i + 1;
  while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
  if (j >= s.size()) return j - i > scan::kMaxNameBytes ? Match::kNo : Match::kNeedMore;
  const OrderedJson decoded = OrderedJson::parse(s.substr(i, j + 1 - i), nullptr, false);
  if (!decoded.is_string() || decoded.get_ref<const std::string&>().empty()) return Match::kNo;
  i = j + 1;
  skip_space();
  for (std::string_view lit : {",", "\"arguments\"", ":"}) {
    if (Match m = literal(lit); m != Match::kYes) return m;
  }
  if (i == s.size()) return Match::kNeedMore;
  if (s[i] != '{') return Match::kNo;
  *name = decoded.get<std::string>();
  *length = i;
  return Match::kYes;
}

}  // namespace

void FoldEvent(const OutputEvent& event, ParsedOutput* output) {
  switch (event.kind) {
    case OutputEvent::Kind::kReasoningDelta:
      output->reasoning += event.text;
      break;
    case OutputEvent::Kind::kContentDelta:
      output->content += event.text;
      break;
    case OutputEvent::Kind::kToolCallBegin:
      DS_CHECK(event.tool_index == static_cast<int>(output->tool_calls.size()));
      output->tool_calls.push_back({event.tool_call_id, event.tool_name, ""});
      break;
    case OutputEvent::Kind::kToolCallArgumentsDelta:
      DS_CHECK(event.tool_index >= 0 &&
               event.tool_index < static_cast<int>(output->tool_calls.size()));
      output->tool_calls[static_cast<size_t>(event.tool_index)].arguments_json += event.text;
      break;
    case OutputEvent::Kind::kToolCallEnd:
      break;
  }
}

OutputParser::OutputParser(OutputParserOptions options)
    : options_(std::move(options)),
      schemas_(options_.tools),
      rng_(options_.tool_call_id_seed ? *options_.tool_call_id_seed : std::random_device()()) {
  if (!options_.parse_reasoning) {
    mode_ = Mode::kContent;
  } else {
    mode_ = options_.starts_in_reasoning ? Mode::kReasoning : Mode::kStart;
  }
}

std::vector<OutputEvent> OutputParser::Push(std::string_view piece) {
  DS_CHECK(!finished_);
  utf8_tail_.append(piece);
  const size_t complete = scan::CompleteUtf8Prefix(utf8_tail_);
  pending_.append(utf8_tail_, 0, complete);
  utf8_tail_.erase(0, complete);
  Drain(/*at_end=*/false);
  return std::exchange(events_, {});
}

std::vector<OutputEvent> OutputParser::Finish() {
  DS_CHECK(!finished_);
  finished_ = true;
  pending_ += utf8_tail_;
  utf8_tail_.clear();
  Drain(/*at_end=*/true);
  CloseOpenCall();
  return std::exchange(events_, {});
}

void OutputParser::Drain(bool at_end) {
  while (Step(at_end)) {
  }
}

bool OutputParser::Step(bool at_end) {
  switch (mode_) {
    case Mode::kStart:
      return StepStart(at_end);
    case Mode::kReasoning:
      return StepReasoning(at_end);
    case Mode::kSkipSpace:
      pending_.erase(0, LeadingSpace(pending_));
      if (pending_.empty()) return false;
      mode_ = Mode::kContent;
      return true;
    case Mode::kContent:
      return StepContent(at_end);
    case Mode::kBlockHead:
      return StepBlockHead(at_end);
    case Mode::kJsonHead:
      return StepJsonHead(at_end);
    case Mode::kJsonWholeBlock:
      return StepJsonWholeBlock(at_end);
    case Mode::kJsonArgs:
      return StepJsonArgs();
    case Mode::kJsonTail:
      return StepJsonTail(at_end);
    case Mode::kXmlBody:
      return StepXmlBody(at_end);
    case Mode::kXmlStringValue:
      return StepXmlStringValue(at_end);
    case Mode::kXmlTypedValue:
      return StepXmlTypedValue(at_end);
    case Mode::kXmlAfterFunction:
      return StepXmlAfterFunction(at_end);
    case Mode::kBrokenBlock:
      return StepBrokenBlock(at_end);
  }
  return false;
}

bool OutputParser::StepStart(bool at_end) {
  const std::string_view rest = std::string_view(pending_).substr(LeadingSpace(pending_));
  if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
    pending_.erase(0, pending_.size() - rest.size() + kThinkOpen.size());
    mode_ = Mode::kReasoning;
    return true;
  }
  if (!at_end && IsProperPrefix(rest, kThinkOpen)) return false;
  mode_ = Mode::kContent;
  return true;
}

bool OutputParser::StepReasoning(bool at_end) {
  if (!reasoning_started_) {
    pending_.erase(0, LeadingSpace(pending_));
    if (pending_.empty()) return false;
    reasoning_started_ = true;
  }
  const TagMatch tag = FindTag(pending_, kThinkClose);
  if (tag.found()) {
    const std::string_view text(pending_.data(), tag.pos);
    Emit(OutputEvent::Kind::kReasoningDelta, text.substr(0, text.size() - TrailingSpace(text)));
    pending_.erase(0, tag.pos + kThinkClose.size());
    mode_ = Mode::kSkipSpace;
    return true;
  }
  // Trailing whitespace may turn out to precede </think>; the end of the text drops it too.
  size_t end = at_end || !tag.partial ? pending_.size() : tag.pos;
  end -= TrailingSpace(std::string_view(pending_.data(), end));
  Emit(OutputEvent::Kind::kReasoningDelta, std::string_view(pending_.data(), end));
  pending_.erase(0, at_end ? pending_.size() : end);
  return false;
}

bool OutputParser::StepContent(bool at_end) {
  if (!options_.json_tool_calls && !options_.xml_tool_calls) {
    Emit(OutputEvent::Kind::kContentDelta, pending_);
    pending_.clear();
    return false;
  }
  const TagMatch tag = FindTag(pending_, kToolCallOpen);
  if (at_end && !tag.found()) {
    Emit(OutputEvent::Kind::kContentDelta, pending_);
    pending_.clear();
    return false;
  }
  // Whitespace before <tool_call> is the template's; it is content only if no call follows.
  const size_t end = tag.pos == std::string::npos ? pending_.size() : tag.pos;
  const size_t space_begin = end - TrailingSpace(std::string_view(pending_.data(), end));
  Emit(OutputEvent::Kind::kContentDelta, std::string_view(pending_.data(), space_begin));
  if (!tag.found()) {
    pending_.erase(0, space_begin);
    return false;
  }
  raw_ = pending_.substr(space_begin, end + kToolCallOpen.size() - space_begin);
  pending_.erase(0, end + kToolCallOpen.size());
  mode_ = Mode::kBlockHead;
  return true;
}

bool OutputParser::StepBlockHead(bool at_end) {
  const size_t space = LeadingSpace(pending_);
  raw_.append(pending_, 0, space);
  pending_.erase(0, space);
  if (pending_.empty()) {
    if (!at_end) return false;
    FallBackToContent();
    return true;
  }
  if (pending_[0] == '{' && options_.json_tool_calls) {
    mode_ = Mode::kJsonHead;
    return true;
  }
  if (pending_[0] == '<' && options_.xml_tool_calls) return StepXmlFunctionTag(at_end);
  FallBackToContent();
  return true;
}

bool OutputParser::StepJsonHead(bool at_end) {
  std::string name;
  size_t length = 0;
  const Match m = MatchJsonHead(pending_, &name, &length);
  if (m == Match::kNeedMore && !at_end) return false;
  if (m != Match::kYes) {
    mode_ = Mode::kJsonWholeBlock;
    return true;
  }
  pending_.erase(0, length);
  BeginCall(std::move(name));
  json_ = JsonStreamer();
  mode_ = Mode::kJsonArgs;
  return true;
}

bool OutputParser::StepJsonWholeBlock(bool at_end) {
  const TagMatch tag = FindTag(pending_, kToolCallClose);
  if (!tag.found()) {
    if (!at_end) return false;
    if (TryWholeJsonCall(pending_)) {
      pending_.clear();
    } else {
      FallBackToContent();
    }
    return true;
  }
  const size_t block_end = tag.pos + kToolCallClose.size();
  if (TryWholeJsonCall(std::string_view(pending_.data(), tag.pos))) {
    pending_.erase(0, block_end);
    mode_ = Mode::kSkipSpace;
    return true;
  }
  raw_.append(pending_, 0, block_end);
  pending_.erase(0, block_end);
  FallBackToContent();
  return true;
}

bool OutputParser::TryWholeJsonCall(std::string_view body) {
  if (!JsonDepthWithin(body)) return false;
  const OrderedJson call = OrderedJson::parse(body, nullptr, false);
  if (!call.is_object() || !call.contains("name") || !call["name"].is_string() ||
      call["name"].get_ref<const std::string&>().empty()) {
    return false;
  }
  OrderedJson arguments = OrderedJson::object();
  for (const char* key : {"arguments", "parameters"}) {
    if (call.contains(key)) {
      arguments = call[key];
      break;
    }
  }
  if (arguments.is_string()) {
    const std::string& text = arguments.get_ref<const std::string&>();
    if (!JsonDepthWithin(text)) return false;
    arguments = OrderedJson::parse(text, nullptr, false);
  }
  if (!arguments.is_object()) return false;
  BeginCall(call["name"].get<std::string>());
  Emit(OutputEvent::Kind::kToolCallArgumentsDelta,
       arguments.dump(-1, ' ', false, OrderedJson::error_handler_t::replace));
  EndCall();
  return true;
}

bool OutputParser::StepJsonArgs() {
  std::string released;
  const size_t consumed = json_.Feed(pending_, &released);
  Emit(OutputEvent::Kind::kToolCallArgumentsDelta, released);
  pending_.erase(0, consumed);
  switch (json_.status()) {
    case JsonStreamer::Status::kInProgress:
      return false;
    case JsonStreamer::Status::kComplete:
      EndCall();
      tail_brace_seen_ = false;
      mode_ = Mode::kJsonTail;
      return true;
    case JsonStreamer::Status::kInvalid:
      Emit(OutputEvent::Kind::kToolCallArgumentsDelta, json_.ClosingText());
      EndCall();
      Emit(OutputEvent::Kind::kContentDelta, json_.unreleased_input());
      mode_ = Mode::kBrokenBlock;
      return true;
  }
  return false;
}

bool OutputParser::StepJsonTail(bool at_end) {
  pending_.erase(0, LeadingSpace(pending_));
  if (pending_.empty()) return false;
  if (pending_[0] == '}' && !tail_brace_seen_) {
    pending_.erase(0, 1);
    tail_brace_seen_ = true;
    return true;
  }
  if (pending_.starts_with(kToolCallClose)) {
    pending_.erase(0, kToolCallClose.size());
    mode_ = Mode::kSkipSpace;
    return true;
  }
  if (!at_end && IsProperPrefix(pending_, kToolCallClose)) return false;
  mode_ = Mode::kBrokenBlock;
  return true;
}

bool OutputParser::StepBrokenBlock(bool at_end) {
  const TagMatch tag = FindTag(pending_, kToolCallClose);
  if (tag.found()) {
    const size_t block_end = tag.pos + kToolCallClose.size();
    Emit(OutputEvent::Kind::kContentDelta, std::string_view(pending_.data(), block_end));
    pending_.erase(0, block_end);
    mode_ = Mode::kContent;
    return true;
  }
  const size_t end = at_end || !tag.partial ? pending_.size() : tag.pos;
  Emit(OutputEvent::Kind::kContentDelta, std::string_view(pending_.data(), end));
  pending_.erase(0, end);
  return false;
}

void OutputParser::CloseOpenCall() {
  std::string closing;
  switch (mode_) {
    case Mode::kJsonArgs:
      json_.EndOfInput(&closing);
      closing += json_.ClosingText();
      Emit(OutputEvent::Kind::kToolCallArgumentsDelta, closing);
      EndCall();
      Emit(OutputEvent::Kind::kContentDelta, json_.unreleased_input());
      break;
    case Mode::kXmlBody:
      Emit(OutputEvent::Kind::kToolCallArgumentsDelta, "}");
      EndCall();
      break;
    case Mode::kXmlStringValue:
      Emit(OutputEvent::Kind::kToolCallArgumentsDelta, "\"}");
      EndCall();
      break;
    default:
      break;
  }
  mode_ = Mode::kContent;
}

void OutputParser::FallBackToContent() {
  Emit(OutputEvent::Kind::kContentDelta, raw_);
  raw_.clear();
  mode_ = Mode::kContent;
}

void OutputParser::BeginCall(std::string name) {
  raw_.clear();
  tool_index_ = static_cast<int>(result_.tool_calls.size());
  call_name_ = std::move(name);
  OutputEvent event{OutputEvent::Kind::kToolCallBegin, "", tool_index_, call_name_,
                    NextToolCallId()};
  FoldEvent(event, &result_);
  events_.push_back(std::move(event));
}

void OutputParser::EndCall() {
  OutputEvent event{OutputEvent::Kind::kToolCallEnd, "", tool_index_, "", ""};
  events_.push_back(std::move(event));
}

void OutputParser::Emit(OutputEvent::Kind kind, std::string_view text) {
  if (text.empty()) return;
  const int index = kind == OutputEvent::Kind::kToolCallArgumentsDelta ? tool_index_ : -1;
  OutputEvent event{kind, std::string(text), index, "", ""};
  FoldEvent(event, &result_);
  if (!events_.empty() && events_.back().kind == kind && events_.back().tool_index == index) {
    events_.back().text += text;
    return;
  }
  events_.push_back(std::move(event));
}

std::string OutputParser::NextToolCallId() {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = options_.tool_call_id_prefix;
  for (int i = 0; i < 24; ++i) id.push_back(kAlphabet[rng_() % kAlphabet.size()]);
  return id;
}

}  // namespace ds::text
