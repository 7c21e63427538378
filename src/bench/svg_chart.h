// Line charts as standalone SVG files, drawn without any library or network: one or more
// stacked panels sharing an x axis, each series a polyline with a marker per point. Each series
// is a <g class="series" data-series="NAME"> and each point a <circle> carrying data-x and
// data-y, so the files can be checked and re-read by tools.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ds::bench {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in x order
};

struct Panel {
  std::string y_label;
  std::vector<Series> series;
};

struct Chart {
  std::string file_stem;  // the file is <file_stem>.svg
  std::string title;
  std::string x_label;
  bool log2_x = false;  // context sizes: 1k, 2k, 4k ... evenly spaced
  std::vector<Panel> panels;
  // A visible line under the title, e.g. why the chart is empty; shortened to fit, "" for none.
  std::string note = "";
};

std::string RenderSvg(const Chart& chart);

// "&", "<", ">", '"' escaped for XML text and attributes.
std::string XmlEscape(const std::string& text);

}  // namespace ds::bench
