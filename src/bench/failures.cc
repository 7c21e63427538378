#include "bench/failures.h"

namespace ds::bench {
namespace {

bool Failed(const Json& row) { return !row.value("error", "").empty(); }

// The index of the first failed row, or rows.size().
size_t FirstFailed(const Report& report) {
  size_t i = 0;
  while (i < report.rows.size() && !Failed(report.rows[i])) ++i;
  return i;
}

std::string Phase(const Json& row) {
  std::string phase = row.value("failed_in", "");
  return phase == "request" ? "in its request" : "in " + phase;
}

}  // namespace

int64_t CountFailedRows(const Report& report) {
  int64_t failed = 0;
  for (const Json& row : report.rows) failed += Failed(row);
  return failed;
}

void SummarizeFailures(Report* report) {
  report->summary["failed_rows"] = CountFailedRows(*report);
  size_t first = FirstFailed(*report);
  if (first == report->rows.size()) {
    report->summary["first_failure"] = Json();
    return;
  }
  const Json& row = report->rows[first];
  const std::string error = row["error"];
  report->summary["first_failure"] = {{"row", first + 1},
                                      {"server", row.value("server", "")},
                                      {"failed_in", row.value("failed_in", "")},
                                      {"error", error}};
  const int64_t failed = CountFailedRows(*report);
  std::string chart_note;
  if (failed == static_cast<int64_t>(report->rows.size())) {
    chart_note = "no row succeeded: " + error;
    report->notes.push_back(chart_note);
  } else {
    chart_note = std::to_string(failed) + " of " + std::to_string(report->rows.size()) +
                 " rows failed and are not drawn; the first: " + error;
  }
  for (Chart& chart : report->charts) chart.note = chart_note;
}

std::string FailureLine(const Report& report) {
  size_t first = FirstFailed(report);
  if (first == report.rows.size()) return "";
  const Json& row = report.rows[first];
  std::string where = "server " + row.value("server", "");
  for (const std::string& key : report.key_columns) {
    where += ", " + key + " " + CellText(row.value(key, Json()));
  }
  return std::to_string(CountFailedRows(report)) + " of " + std::to_string(report.rows.size()) +
         " rows failed; the first, row " + std::to_string(first + 1) + " of " + report.mode +
         " (" + where + "), failed " + Phase(row) + ": " + row["error"].get<std::string>();
}

}  // namespace ds::bench
