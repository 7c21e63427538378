#include "bench/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bench/quote.h"

namespace ds::bench {
namespace {

constexpr double kWidth = 860;
constexpr double kPanelHeight = 300;
constexpr double kTitleHeight = 40;
constexpr double kLeft = 80, kRight = 200, kTop = 20, kBottom = 50;
constexpr size_t kNoteBytes = 130;  // what fits the width at the note's size
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// 1024 -> "1k", 65536 -> "64k", 1.5 -> "1.5".
std::string TickLabel(double v) {
  if (v >= 1024 && std::fmod(v, 1024) == 0) return Number(v / 1024) + "k";
  return Number(v);
}

// About `count` round tick values from at or below lo to at or above hi.
std::vector<double> NiceTicks(double lo, double hi, int count) {
  double span = hi - lo;
  if (!(span > 0)) return {lo};
  double raw = span / count;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  double last = std::ceil(hi / step - 1e-9) * step;
  for (double t = std::floor(lo / step + 1e-9) * step; t <= last + step * 1e-9; t += step) {
    ticks.push_back(t);
  }
  return ticks;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

class Canvas {
 public:
  void Line(double x1, double y1, double x2, double y2, const char* style) {
    out_ += "<line x1=\"" + Coord(x1) + "\" y1=\"" + Coord(y1) + "\" x2=\"" + Coord(x2) +
            "\" y2=\"" + Coord(y2) + "\" style=\"" + style + "\"/>\n";
  }
  void Text(double x, double y, const std::string& text, const char* anchor, int size,
            const std::string& extra = "") {
    out_ += "<text x=\"" + Coord(x) + "\" y=\"" + Coord(y) + "\" text-anchor=\"" + anchor +
            "\" font-size=\"" + std::to_string(size) + "\"" + extra + ">" + XmlEscape(text) +
            "</text>\n";
  }
  void Raw(const std::string& svg) { out_ += svg; }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

double MapX(double x, bool log2_x) { return log2_x ? std::log2(std::max(x, 1e-9)) : x; }

// The note on one line of the width: control characters (which XML forbids) become spaces, and a
// long one is cut at a character boundary.
std::string NoteLine(const std::string& note) {
  std::string line = Quote(note, kNoteBytes);
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return line.size() < note.size() ? line + "\u2026" : line;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderSvg(const Chart& chart) {
  const double height = kTitleHeight + kPanelHeight * std::max<size_t>(chart.panels.size(), 1);
  Canvas c;
  c.Raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\"" + Coord(kWidth) + "\" height=\"" + Coord(height) + "\" viewBox=\"0 0 " +
        Coord(kWidth) + " " + Coord(height) + "\" font-family=\"sans-serif\">\n");
  c.Raw("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  c.Text(kWidth / 2, 26, chart.title, "middle", 16, " class=\"title\"");
  if (!chart.note.empty()) {
    c.Text(kWidth / 2, 48, NoteLine(chart.note), "middle", 12, " class=\"note\" fill=\"#b00020\"");
  }

  Range xr;
  bool integer_x = true;  // turns, client counts: no ticks between them
  for (const Panel& panel : chart.panels) {
    for (const Series& s : panel.series) {
      for (auto [x, y] : s.points) {
        xr.Add(MapX(x, chart.log2_x));
        integer_x &= x == std::round(x);
      }
    }
  }
  if (xr.empty()) xr = Range{0, 1};
  if (xr.hi == xr.lo) xr = Range{xr.lo - 1, xr.hi + 1};
  const double x_pad = (xr.hi - xr.lo) * 0.04;  // keeps end markers off the axes
  xr = Range{xr.lo - x_pad, xr.hi + x_pad};
  const double plot_w = kWidth - kLeft - kRight;
  auto px = [&](double x) { return kLeft + (MapX(x, chart.log2_x) - xr.lo) / (xr.hi - xr.lo) * plot_w; };

  for (size_t p = 0; p < chart.panels.size(); ++p) {
    const Panel& panel = chart.panels[p];
    const double top = kTitleHeight + p * kPanelHeight + kTop;
    const double plot_h = kPanelHeight - kTop - kBottom;
    Range yr{0, 0};
    for (const Series& s : panel.series) {
      for (auto [x, y] : s.points) yr.Add(y);
    }
    if (yr.hi <= yr.lo) yr.hi = yr.lo + 1;
    std::vector<double> yticks = NiceTicks(yr.lo, yr.hi * 1.05, 5);
    yr.hi = yticks.back();
    auto py = [&](double y) { return top + plot_h - (y - yr.lo) / (yr.hi - yr.lo) * plot_h; };

    c.Raw("<g class=\"panel\" data-y-label=\"" + XmlEscape(panel.y_label) + "\">\n");
    for (double t : yticks) {
      c.Line(kLeft, py(t), kLeft + plot_w, py(t), "stroke:#ddd");
      c.Text(kLeft - 6, py(t) + 4, TickLabel(t), "end", 11);
    }
    if (chart.log2_x) {
      for (double e = std::ceil(xr.lo); e <= xr.hi + 1e-9; e += 1) {
        double x = std::exp2(e);
        c.Line(px(x), top, px(x), top + plot_h, "stroke:#eee");
        c.Text(px(x), top + plot_h + 16, TickLabel(x), "middle", 11);
      }
    } else {
      for (double t : NiceTicks(xr.lo, xr.hi, 8)) {
        if (t < xr.lo || t > xr.hi || (integer_x && t != std::round(t))) continue;
        c.Text(px(t), top + plot_h + 16, TickLabel(t), "middle", 11);
      }
    }
    c.Line(kLeft, top + plot_h, kLeft + plot_w, top + plot_h, "stroke:#333");
    c.Line(kLeft, top, kLeft, top + plot_h, "stroke:#333");
    c.Text(kLeft + plot_w / 2, top + plot_h + 38, chart.x_label, "middle", 12);
    double mid = top + plot_h / 2;
    c.Text(18, mid, panel.y_label, "middle", 12,
           " transform=\"rotate(-90 18 " + Coord(mid) + ")\"");

    for (size_t i = 0; i < panel.series.size(); ++i) {
      const Series& s = panel.series[i];
      const char* color = kColors[i % std::size(kColors)];
      std::vector<std::pair<double, double>> points = s.points;
      std::sort(points.begin(), points.end());
      c.Raw("<g class=\"series\" data-series=\"" + XmlEscape(s.name) + "\">\n");
      std::string coords;
      for (auto [x, y] : points) coords += Coord(px(x)) + "," + Coord(py(y)) + " ";
      if (!coords.empty()) coords.pop_back();
      c.Raw("<polyline fill=\"none\" stroke=\"" + std::string(color) +
            "\" stroke-width=\"2\" points=\"" + coords + "\"/>\n");
      for (auto [x, y] : points) {
        c.Raw("<circle cx=\"" + Coord(px(x)) + "\" cy=\"" + Coord(py(y)) + "\" r=\"3\" fill=\"" +
              color + "\" data-x=\"" + Number(x) + "\" data-y=\"" + Number(y) + "\"/>\n");
      }
      double ly = top + 14 + 18 * i;
      c.Line(kLeft + plot_w + 12, ly - 4, kLeft + plot_w + 32, ly - 4,
             (std::string("stroke-width:2;stroke:") + color).c_str());
      c.Text(kLeft + plot_w + 38, ly, s.name, "start", 11);
      c.Raw("</g>\n");
    }
    c.Raw("</g>\n");
  }
  c.Raw("</svg>\n");
  return std::move(c.out());
}

}  // namespace ds::bench
