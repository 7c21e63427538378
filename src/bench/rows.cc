#include "bench/rows.h"

#include "bench/report.h"

namespace ds::bench {

const std::vector<std::string>& MeasurementColumns() {
  static const std::vector<std::string> columns = {
      "prompt_tokens", "cached_tokens", "computed_tokens", "ttft_s",  "prefill_tok_s",
      "decode_tokens", "decode_s",      "decode_tok_s",    "wall_s",  "total_tokens_per_wall_s"};
  return columns;
}

namespace {

// A count when the server reported it (>= 0), else null.
Json Count(int64_t value) { return value >= 0 ? Json(value) : Json(); }

}  // namespace

void AddMeasurement(const Measurement& m, Json* row) {
  Json& r = *row;
  r["prompt_tokens"] = Count(m.prompt_tokens);
  r["cached_tokens"] = Count(m.cached_tokens);
  r["computed_tokens"] = Count(m.computed_tokens());
  r["ttft_s"] = Known(m.ttft_s());
  r["prefill_tok_s"] = Known(m.prefill_tokens_per_s());
  r["decode_tokens"] = m.decode_tokens();
  r["decode_s"] = Known(m.decode_seconds());
  r["decode_tok_s"] = Known(m.decode_tokens_per_s());
  r["wall_s"] = m.wall_s;
  r["total_tokens_per_wall_s"] = Known(m.total_tokens_per_wall_s());
  r["failed_in"] = "";
  r["error"] = "";
}

void AddResult(const RequestResult& result, Json* row) {
  AddMeasurement(result.measurement, row);
  if (result.ok()) return;
  (*row)["failed_in"] = "request";
  (*row)["error"] = result.status.message();
}

void MarkNotSent(const std::string& phase, const std::string& error, Json* row) {
  for (const std::string& c : MeasurementColumns()) (*row)[c] = Json();
  (*row)["failed_in"] = phase;
  (*row)["error"] = error;
}

void NoteUnratedPrefill(Report* report) {
  int64_t unrated = 0;
  for (const Json& row : report->rows) {
    Json computed = row.value("computed_tokens", Json());
    unrated += row.value("error", "").empty() && row.contains("prefill_tok_s") &&
               computed.is_number() && computed.get<int64_t>() < kMinPrefillTokens;
  }
  if (unrated == 0) return;
  report->notes.push_back("prefill_tok_s is blank in " + std::to_string(unrated) +
                          (unrated == 1 ? " row that" : " rows that") + " computed fewer than " +
                          std::to_string(kMinPrefillTokens) +
                          " prompt tokens: their TTFT is the request's overhead, not prefill");
}

std::vector<std::string> RowColumns(std::vector<std::string> leading) {
  for (const std::string& c : MeasurementColumns()) leading.push_back(c);
  leading.push_back("failed_in");
  leading.push_back("error");
  return leading;
}

}  // namespace ds::bench
