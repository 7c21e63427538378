#include "bench/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace ds::bench {
namespace {

std::string CsvCell(const Json& value) {
  std::string text = value.is_number_float() ? value.dump() : CellText(value);
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string ItemKey(const Json& row, const std::vector<std::string>& keys) {
  std::string key;
  for (const std::string& k : keys) key += CellText(row.value(k, Json())) + "|";
  return key;
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return UnavailableError("cannot write " + path.string());
  return OkStatus();
}

}  // namespace

Json Known(double value) { return value >= 0 ? Json(value) : Json(); }

std::string CellText(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.4g", value.get<double>());
    return buf;
  }
  return value.dump();
}

Series ColumnSeries(const std::vector<Json>& rows, const std::string& server,
                    const std::string& x_column, const std::string& y_column, std::string name) {
  Series series{std::move(name), {}};
  for (const Json& row : rows) {
    if (row.value("server", "") != server || !row.value("error", "").empty()) continue;
    Json x = row.value(x_column, Json());
    Json y = row.value(y_column, Json());
    if (x.is_number() && y.is_number()) series.points.push_back({x.get<double>(), y.get<double>()});
  }
  return series;
}

std::string CsvText(const Report& report) {
  std::string text;
  for (size_t i = 0; i < report.columns.size(); ++i) {
    text += (i ? "," : "") + CsvCell(Json(report.columns[i]));
  }
  text += "\n";
  for (const Json& row : report.rows) {
    for (size_t i = 0; i < report.columns.size(); ++i) {
      text += (i ? "," : "") + CsvCell(row.value(report.columns[i], Json()));
    }
    text += "\n";
  }
  return text;
}

std::string MarkdownTable(const Report& report) {
  std::string text = "|";
  for (const std::string& c : report.columns) text += " " + c + " |";
  text += "\n|";
  for (size_t i = 0; i < report.columns.size(); ++i) text += "---|";
  text += "\n";
  for (const Json& row : report.rows) {
    text += "|";
    for (const std::string& c : report.columns) text += " " + CellText(row.value(c, Json())) + " |";
    text += "\n";
  }
  for (const std::string& note : report.notes) text += "\nNote: " + note + "\n";
  return text;
}

std::string RatioTable(const Report& report, const std::string& label_a,
                       const std::string& label_b) {
  std::map<std::string, const Json*> b_rows;
  for (const Json& row : report.rows) {
    if (row.value("server", "") == label_b) b_rows[ItemKey(row, report.key_columns)] = &row;
  }
  std::string text = "|";
  for (const std::string& k : report.key_columns) text += " " + k + " |";
  for (const std::string& c : report.ratio_columns) {
    text += " " + c + " " + label_a + "/" + label_b + " |";
  }
  text += "\n|";
  for (size_t i = 0; i < report.key_columns.size() + report.ratio_columns.size(); ++i) {
    text += "---|";
  }
  text += "\n";
  for (const Json& a : report.rows) {
    if (a.value("server", "") != label_a) continue;
    auto it = b_rows.find(ItemKey(a, report.key_columns));
    if (it == b_rows.end()) continue;
    const Json& b = *it->second;
    text += "|";
    for (const std::string& k : report.key_columns) {
      text += " " + CellText(a.value(k, Json())) + " |";
    }
    for (const std::string& c : report.ratio_columns) {
      Json va = a.value(c, Json());
      Json vb = b.value(c, Json());
      bool both = va.is_number() && vb.is_number() && vb.get<double>() != 0;
      std::string ratio = both ? CellText(Json(va.get<double>() / vb.get<double>())) : "-";
      text += " " + ratio + " |";
    }
    text += "\n";
  }
  return text;
}

StatusOr<std::vector<std::string>> WriteReport(const Report& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError("cannot create " + dir + ": " + ec.message());
  std::vector<std::string> written;
  Json summary = report.summary;
  summary["notes"] = report.notes;
  Json doc = {{"mode", report.mode}, {"summary", summary}, {"rows", report.rows}};
  std::filesystem::path base(dir);
  std::vector<std::pair<std::filesystem::path, std::string>> files = {
      // A server's own invalid UTF-8, quoted in an error, must not stop the report.
      {base / (report.mode + ".json"),
       doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"},
      {base / (report.mode + ".csv"), CsvText(report)}};
  for (const Chart& chart : report.charts) {
    files.push_back({base / (chart.file_stem + ".svg"), RenderSvg(chart)});
  }
  for (const auto& [path, text] : files) {
    DS_RETURN_IF_ERROR(WriteFile(path, text));
    written.push_back(path.string());
  }
  return written;
}

}  // namespace ds::bench
