// Charts are well-formed standalone SVG with one group per series and one marker per point.
#include "bench/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>

namespace ds::bench {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(SvgChartTest, SeriesAndPointsAreMarkedUp) {
  Chart chart{"c", "Prefill <vs> decode", "prompt tokens", true,
              {Panel{"tok/s", {Series{"a & b", {{1024, 10}, {4096, 30}, {2048, 20}}},
                               Series{"c", {{1024, 5}}}}},
               Panel{"s", {Series{"d", {}}}}}};
  std::string svg = RenderSvg(chart);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("Prefill &lt;vs&gt; decode"), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"a &amp; b\""), std::string::npos);
  EXPECT_EQ(Count(svg, "<g class=\"series\""), 3u);
  EXPECT_EQ(Count(svg, "<g class=\"panel\""), 2u);
  EXPECT_EQ(Count(svg, "<circle"), 4u);
  EXPECT_NE(svg.find("data-x=\"2048\" data-y=\"20\""), std::string::npos);
  EXPECT_NE(svg.find(">4k</text>"), std::string::npos);  // log2 ticks at powers of two
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChartTest, PointsAreDrawnLeftToRightInsideThePlot) {
  Chart chart{"c", "t", "x", false, {Panel{"y", {Series{"s", {{3, 1}, {1, 2}, {2, 3}}}}}}};
  std::string svg = RenderSvg(chart);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(svg, match, std::regex("points=\"([^\"]*)\"")));
  std::regex pair("([0-9.]+),([0-9.]+)");
  std::vector<double> xs;
  std::string points = match[1];
  for (std::sregex_iterator it(points.begin(), points.end(), pair), end; it != end; ++it) {
    xs.push_back(std::stod((*it)[1]));
    double y = std::stod((*it)[2]);
    EXPECT_GE(y, 0);
    EXPECT_LE(y, 340);
  }
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_LT(xs[0], xs[1]);
  EXPECT_LT(xs[1], xs[2]);
}

TEST(SvgChartTest, TheNoteIsVisibleOnOneLineOfValidText) {
  std::string error = "HTTP 500: <bad>\n\x01 ";
  for (int i = 0; i < 100; ++i) error += "\xc3\xa9";  // é: two bytes each
  Chart chart{"c", "t", "x", false, {Panel{"y", {Series{"s", {}}}}}, "no row succeeded: " + error};
  std::string svg = RenderSvg(chart);
  std::smatch match;
  std::regex note("<text [^>]*class=\"note\"[^>]*>([^<]*)</text>");
  ASSERT_TRUE(std::regex_search(svg, match, note)) << svg;
  std::string text = match[1];
  EXPECT_EQ(text.rfind("no row succeeded: HTTP 500: &lt;bad&gt;  ", 0), 0u) << text;
  EXPECT_LE(text.size(), 150u);
  EXPECT_EQ(text.substr(text.size() - 3), "\xe2\x80\xa6");  // an ellipsis, after whole characters
  EXPECT_EQ(text.substr(text.size() - 5, 2), "\xc3\xa9");
  EXPECT_EQ(RenderSvg(Chart{"c", "t", "x", false, {}}).find("class=\"note\""), std::string::npos);
}

}  // namespace
}  // namespace ds::bench
