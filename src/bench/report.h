// A mode's results: one row per request (or turn, or level), a summary, and its charts, written
// as <mode>.json, <mode>.csv and <chart>.svg, and printed as a Markdown table. With two servers,
// rows that agree on the key columns are paired and the ratio columns compared.
// Thread safety: plain values and free functions.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/svg_chart.h"
#include "bench/target.h"

namespace ds::bench {

struct Report {
  std::string mode;
  std::vector<std::string> columns;  // every row has these keys, in this order
  std::vector<Json> rows;
  Json summary = Json::object();
  std::vector<Chart> charts;
  std::vector<std::string> key_columns;    // identify one workload item, without "server"
  std::vector<std::string> ratio_columns;  // compared between servers
  // Footnotes: printed under the table and kept in the JSON summary's "notes".
  std::vector<std::string> notes;
};

// `value` when it is a measurement (>= 0), else null: unknown is never printed as zero.
Json Known(double value);

// A value as a table cell: "" for null, strings bare, floats to 4 significant digits.
std::string CellText(const Json& value);

// The (x, y) points of the rows of `server` where both columns hold numbers, failed rows left
// out: what a failed request measured is reported in its row, never drawn beside full ones.
Series ColumnSeries(const std::vector<Json>& rows, const std::string& server,
                    const std::string& x_column, const std::string& y_column, std::string name);

// Writes the JSON, CSV and SVG files into `dir` (created if missing); returns their paths.
StatusOr<std::vector<std::string>> WriteReport(const Report& report, const std::string& dir);

std::string CsvText(const Report& report);
// The rows as a Markdown table, then the notes.
std::string MarkdownTable(const Report& report);
// For each workload item run on both servers: the ratio `a / b` of every ratio column.
std::string RatioTable(const Report& report, const std::string& label_a,
                       const std::string& label_b);

}  // namespace ds::bench
