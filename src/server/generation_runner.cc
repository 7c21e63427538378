#include "server/generation_runner.h"

#include "text/detokenizer.h"
#include "text/output/stop_string_matcher.h"

namespace ds::server {
namespace {

bool EndsACall(const std::vector<text::OutputEvent>& events) {
  for (const text::OutputEvent& event : events) {
    if (event.kind == text::OutputEvent::Kind::kToolCallEnd) return true;
  }
  return false;
}

}  // namespace

GenerationRunner::GenerationRunner(const text::Tokenizer* tokenizer,
                                   const api::ChatRequest& request, const BuiltPrompt& prompt,
                                   std::shared_ptr<engine::RequestHandle> handle)
    : tokenizer_(tokenizer), request_(request), prompt_(prompt), handle_(std::move(handle)),
      seen_reasoning_(request.api != api::ApiKind::kCompletions &&
                      prompt.parser_options.starts_in_reasoning),
      left_reasoning_(!prompt.forced_output.empty()) {
  if (request_.api != api::ApiKind::kCompletions) {
    parser_ = std::make_unique<text::OutputParser>(prompt_.parser_options);
    forced_events_ = parser_->Push(prompt_.forced_output);
  }
}

api::TokenInfo GenerationRunner::MakeTokenInfo(const engine::TokenEvent& token) const {
  api::TokenInfo info;
  info.id = token.id;
  info.piece = tokenizer_->TokenToPiece(token.id);
  info.logprob = token.logprob;
  for (const engine::TokenLogprob& alt : token.top) {
    info.top.emplace_back(tokenizer_->TokenToPiece(alt.id), alt.logprob);
  }
  return info;
}

std::vector<text::OutputEvent> GenerationRunner::Parse(const std::string& text, bool at_end) {
  output_.text += text;
  if (parser_ == nullptr) return {};
  std::vector<text::OutputEvent> events = parser_->Push(text);
  if (at_end) {
    std::vector<text::OutputEvent> last = parser_->Finish();
    events.insert(events.end(), last.begin(), last.end());
  }
  return events;
}

api::FinishInfo GenerationRunner::MakeFinishInfo(const engine::DoneEvent& done) const {
  api::FinishInfo finish;
  const engine::Timings& t = done.timings.generation;
  finish.prompt_tokens = t.prompt_tokens;
  finish.cached_tokens = t.cached_prompt_tokens;
  finish.completion_tokens = t.generated_tokens;
  finish.timings = done.timings;
  if (stopped_early_) {
    finish.reason = api::FinishInfo::Reason::kStop;
  } else if (done.stop_reason == engine::StopReason::kStopToken) {
    finish.reason = api::FinishInfo::Reason::kStop;
  } else if (done.stop_reason == engine::StopReason::kLength) {
    finish.reason = api::FinishInfo::Reason::kLength;
  } else {
    finish.reason = api::FinishInfo::Reason::kCancelled;
  }
  return finish;
}

void GenerationRunner::CountReasoning(const std::vector<text::OutputEvent>& events) {
  for (const text::OutputEvent& event : events) {
    const bool reasoning = event.kind == text::OutputEvent::Kind::kReasoningDelta;
    seen_reasoning_ = seen_reasoning_ || reasoning;
    left_reasoning_ = left_reasoning_ || !reasoning;
  }
  // Every token from the block's start to its closing tag, held-back ones included.
  if (seen_reasoning_ && !left_reasoning_) ++reasoning_tokens_;
}

GenerationOutput GenerationRunner::Run(const ProgressFn& on_progress) {
  text::IncrementalDetokenizer detokenizer(tokenizer_);
  text::StopStringMatcher stops(request_.stop);
  engine::TokenEvent token;
  engine::DoneEvent done;
  bool client_gone = false;
  int64_t delivered = 0;  // tokens whose text the client took
  int64_t held = 0;       // later tokens whose text is still held back (UTF-8, stop strings)
  while (handle_->Next(&token, &done)) {
    output_.generated_ids.push_back(token.id);
    if (stopped_early_ || client_gone) continue;  // draining what was already produced
    api::TokenInfo info = MakeTokenInfo(token);
    if (request_.logprobs) output_.tokens.push_back(info);
    text::StopStringMatcher::Result released = stops.Push(detokenizer.Push(token.id));
    if (stops.stopped()) {
      stopped_early_ = true;
      output_.finish.stop_sequence = stops.matched_stop_string();
      handle_->StopGenerating();
    }
    std::vector<text::OutputEvent> events = Parse(released.text, stopped_early_);
    CountReasoning(events);
    if (!request_.parallel_tool_calls && !stopped_early_ && EndsACall(events)) {
      // One call was asked for: it is complete, so the reply ends here.
      stopped_early_ = true;
      handle_->StopGenerating();
    }
    if (!forced_events_.empty()) {
      events.insert(events.begin(), forced_events_.begin(), forced_events_.end());
      forced_events_.clear();
    }
    if (!on_progress(released.text, events, &info)) {
      client_gone = true;
      handle_->Cancel(delivered);
    } else if (released.text.empty()) {
      ++held;
    } else {
      delivered += held + 1;
      held = 0;
    }
  }
  std::string stop_sequence = output_.finish.stop_sequence;
  output_.finish = MakeFinishInfo(done);
  output_.finish.stop_sequence = stop_sequence;
  output_.finish.reasoning_tokens = reasoning_tokens_;
  output_.status = done.status;
  if (!stopped_early_ && !client_gone) {
    std::string rest = stops.Push(detokenizer.Flush()).text + stops.Flush();
    std::vector<text::OutputEvent> events = Parse(rest, /*at_end=*/true);
    events.insert(events.begin(), forced_events_.begin(), forced_events_.end());
    forced_events_.clear();
    if (!rest.empty() || !events.empty()) on_progress(rest, events, nullptr);
  }
  if (parser_ != nullptr) output_.parsed = parser_->Result();
  return std::move(output_);
}

}  // namespace ds::server
