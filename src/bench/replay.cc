// replay: recorded agent sessions sent body by body, reporting per turn what the server's cache
// served (prompt, cached, computed, new tokens) and the time to first token.
#include <filesystem>
#include <fstream>
#include <map>

#include "bench/modes.h"
#include "bench/progress.h"
#include "bench/rows.h"

namespace ds::bench {
namespace {

// The goal the server's cache is held to: a later turn computes at most its new tokens and this
// many more.
constexpr int64_t kGoalSlackTokens = 64;

struct Record {
  int64_t turn = 0;
  std::string path;
  HeaderMap headers;
  Json body;
};

struct Session {
  std::string name;
  std::vector<Record> records;
};

StatusOr<Session> ReadTrace(const std::string& file) {
  std::ifstream in(file);
  if (!in) return NotFoundError("cannot read trace " + file);
  Session session{std::filesystem::path(file).stem().string(), {}};
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::string where = file + ":" + std::to_string(number);
    Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("path") || !record["path"].is_string() ||
        !record.contains("body") || !record["body"].is_object()) {
      return InvalidArgumentError(where + ": not a trace record (an object with path and body)");
    }
    if (record.value("method", "POST") != "POST") {
      return InvalidArgumentError(where + ": only POST records can be replayed");
    }
    Record r;
    r.turn = record.value("turn", static_cast<int64_t>(session.records.size() + 1));
    r.path = record["path"];
    r.body = record["body"];
    if (record.contains("headers") && record["headers"].is_object()) {
      for (const auto& [name, value] : record["headers"].items()) {
        if (value.is_string() && name != "content-type") r.headers[name] = value;
      }
    }
    session.records.push_back(std::move(r));
  }
  if (session.records.empty()) return InvalidArgumentError("trace " + file + " has no records");
  return session;
}

// The recorded body with the target's model, streaming with usage, and max_tokens capped: the
// replies do not matter, since every later body carries the recorded assistant turns.
Json ReplayBody(const Record& record, const Target& target, int64_t max_tokens) {
  Json body = record.body;
  body["model"] = target.model;
  body["stream"] = true;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (body.contains(key) && body[key].is_number_integer()) {
      body[key] = std::min(body[key].get<int64_t>(), max_tokens);
    }
  }
  if (!body.contains("max_tokens") && !body.contains("max_completion_tokens")) {
    body["max_tokens"] = max_tokens;
  }
  if (body.contains("messages") && !record.path.starts_with("/v1/messages")) {
    body["stream_options"] = {{"include_usage", true}};
  }
  return body;
}

Json SessionSummary(const std::vector<Json>& rows) {
  int64_t prompt = 0, cached = 0, reusable = 0, later = 0, later_cached = 0, met = 0;
  for (const Json& row : rows) {
    if (!row["error"].get<std::string>().empty() || !row["cached_tokens"].is_number()) continue;
    prompt += row["prompt_tokens"].get<int64_t>();
    cached += row["cached_tokens"].get<int64_t>();
    if (row["turn_index"].get<int64_t>() == 0) continue;
    ++later;
    later_cached += row["cached_tokens"].get<int64_t>();
    reusable += row["prompt_tokens"].get<int64_t>() - row["new_tokens"].get<int64_t>();
    if (row["computed_tokens"].get<int64_t>() <= row["new_tokens"].get<int64_t>() +
                                                     kGoalSlackTokens) {
      ++met;
    }
  }
  return {{"requests", rows.size()},
          {"prompt_tokens", prompt},
          {"cached_tokens", cached},
          {"prompt_share_from_cache", prompt > 0 ? Json(double(cached) / prompt) : Json()},
          {"reusable_tokens", reusable},
          {"reusable_share_from_cache",
           reusable > 0 ? Json(std::min(1.0, double(later_cached) / reusable)) : Json()},
          {"later_turns", later},
          {"later_turns_computed_at_most_new_plus_64", met}};
}

}  // namespace

StatusOr<Report> RunReplay(const std::vector<Target>& targets, const ReplayOptions& options) {
  std::vector<Session> sessions;
  for (const std::string& file : options.trace_files) {
    DS_ASSIGN_OR_RETURN(Session s, ReadTrace(file));
    sessions.push_back(std::move(s));
  }
  std::vector<std::pair<const Session*, size_t>> order;
  if (options.interleave) {
    size_t longest = 0;
    for (const Session& s : sessions) longest = std::max(longest, s.records.size());
    for (size_t i = 0; i < longest; ++i) {
      for (const Session& s : sessions) {
        if (i < s.records.size()) order.push_back({&s, i});
      }
    }
  } else {
    for (const Session& s : sessions) {
      for (size_t i = 0; i < s.records.size(); ++i) order.push_back({&s, i});
    }
  }

  Report report;
  report.mode = "replay";
  report.columns = RowColumns({"server", "session", "turn", "turn_index", "new_tokens"});
  report.key_columns = {"session", "turn_index"};
  report.ratio_columns = {"ttft_s", "computed_tokens", "prefill_tok_s"};
  Progress progress("replay", static_cast<int64_t>(order.size() * targets.size()));
  std::map<std::pair<std::string, std::string>, int64_t> previous_prompt;  // (server, session)
  for (const auto& [session, index] : order) {
    const Record& record = session->records[index];
    for (const Target& t : targets) {
      std::string what = session->name + " turn " + std::to_string(record.turn) + " on " + t.label;
      progress.Begin(what);
      Json row = {{"server", t.label}, {"session", session->name}, {"turn", record.turn},
                  {"turn_index", index}, {"new_tokens", Json()}};
      RequestResult m =
          Measure(t, record.path, ReplayBody(record, t, options.max_tokens), record.headers);
      AddResult(m, &row);
      std::string outcome = Outcome(m);
      if (m.ok()) {
        int64_t& previous = previous_prompt[{t.label, session->name}];
        row["new_tokens"] = m.measurement.prompt_tokens - previous;
        previous = m.measurement.prompt_tokens;
        outcome += ", " + std::to_string(row["new_tokens"].get<int64_t>()) + " new";
      }
      progress.End(what, outcome);
      report.rows.push_back(std::move(row));
    }
  }

  Chart ttft{"replay-ttft", "Time to first token per turn", "turn", false,
             {Panel{"time to first token, s", {}}, Panel{"prompt tokens computed", {}}}};
  for (const Target& t : targets) {
    Json per_session = Json::object();
    for (const Session& s : sessions) {
      std::vector<Json> rows;
      for (const Json& row : report.rows) {
        if (row["session"] == s.name) rows.push_back(row);
      }
      std::string name = s.name + ", " + t.label;
      ttft.panels[0].series.push_back(ColumnSeries(rows, t.label, "turn", "ttft_s", name));
      ttft.panels[1].series.push_back(ColumnSeries(rows, t.label, "turn", "computed_tokens", name));
      std::erase_if(rows, [&](const Json& row) { return row["server"] != t.label; });
      per_session[s.name] = SessionSummary(rows);
    }
    report.summary[t.label] = per_session;
  }
  report.summary["max_tokens_cap"] = options.max_tokens;
  report.charts = {ttft};
  return report;
}

}  // namespace ds::bench
