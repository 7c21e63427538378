// Unit tests of the Jinja engine: expressions, filters, loops, macros, whitespace control, error
// reporting, the chat helpers and resource bounds (jinja_fuzz_test mutates real templates).
// Expected strings were checked against python3-jinja2 with HF's settings (jinja_oracle_test
// checks many more).

#include <gtest/gtest.h>

#include "text/jinja/jinja.h"

namespace ds::text::jinja {
namespace {

using nlohmann::ordered_json;

std::string Render(const std::string& source, const ordered_json& context = ordered_json::object(),
                   const ParseOptions& options = {}) {
  auto tmpl = Template::Parse(source, options);
  if (!tmpl.ok()) return "PARSE ERROR: " + tmpl.status().message();
  auto out = tmpl->Render(context);
  if (!out.ok()) return "RENDER ERROR: " + out.status().message();
  return *out;
}

TEST(JinjaTest, Expressions) {
  EXPECT_EQ(Render("{{ 1 + 2 * 3 }}|{{ 2 ** 3 ** 2 }}|{{ 7 // -2 }}|{{ -7 % 3 }}|{{ 1 / 4 }}"),
            "7|64|-4|2|0.25");
  EXPECT_EQ(Render("{{ 'a' ~ 1 ~ none ~ true }}|{{ [1, 'b'] }}|{{ {'k': (1,)} }}"),
            "a1NoneTrue|[1, 'b']|{'k': (1,)}");
  EXPECT_EQ(Render("{{ 1e16 }} {{ 1e15 }} {{ 0.1 + 0.2 }} {{ 1e-5 }}"),
            "1e+16 1000000000000000.0 0.30000000000000004 1e-05");
  EXPECT_EQ(Render("{{ 'yes' if x else 'no' }}{{ 1 < 2 < 3 }}{{ 'b' in 'abc' }}{{ 2 not in [1] }}",
                   {{"x", 0}}),
            "noTrueTrueTrue");
  EXPECT_EQ(Render("{{ s[::-1] }}|{{ s[1:] }}|{{ s[-1] }}|{{ l[-2:] }}", {{"s", "héllo"},
                                                                            {"l", {1, 2, 3}}}),
            "olléh|éllo|o|[2, 3]");
  EXPECT_EQ(Render("{{ d.a }}{{ d['a'] }}{{ d.items()|list }}{{ d.get('z', 0) }}",
                   {{"d", {{"a", 1}}}}),
            "11[('a', 1)]0");
}

TEST(JinjaTest, UndefinedSemantics) {
  EXPECT_EQ(Render("[{{ nope }}][{{ d.nope }}][{{ nope is defined }}][{{ nope|default('x') }}]",
                   {{"d", ordered_json::object()}}),
            "[][][False][x]");
  EXPECT_EQ(Render("{% for x in nope %}{{ x }}{% else %}empty{% endfor %}{{ nope|length }}"),
            "empty0");
  EXPECT_NE(Render("{{ nope.attr }}").find("RENDER ERROR"), std::string::npos);
  EXPECT_NE(Render("{{ nope + 1 }}").find("'nope' is undefined"), std::string::npos);
}

TEST(JinjaTest, Filters) {
  const ordered_json ctx = {{"people", {{{"name", "b"}, {"age", 2}}, {{"name", "A"}, {"age", 1}}}},
                            {"d", {{"z", 1}, {"a", "é"}}}};
  EXPECT_EQ(Render("{{ people|map(attribute='name')|join(',') }}|{{ people|sort(attribute='name')"
                   "|map(attribute='age')|list }}|{{ people|selectattr('age', 'gt', 1)|list|length }}",
                   ctx),
            "b,A|[1, 2]|1");
  EXPECT_EQ(Render("{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ d|dictsort }}", ctx),
            "{\"z\": 1, \"a\": \"é\"}|{\n  \"z\": 1,\n  \"a\": \"é\"\n}|[('a', 'é'), ('z', 1)]");
  EXPECT_EQ(Render("{{ '  a b '|trim }}|{{ 'ab'|upper }}|{{ 'hello world'|title }}|{{ 'x'|center(5) }}"
                   "|{{ '3.7'|float|int }}|{{ 2.5|round }}|{{ [3, 1, 1]|unique|list }}|{{ 'a\nb'|indent }}"),
            "a b|AB|Hello World|  x  |3|2.0|[3, 1]|a\n    b");
  EXPECT_EQ(Render("{{ ['x', 'code', 'y']|reject('equalto', 'code')|join(', ') }}"), "x, y");
  EXPECT_NE(Render("{{ 1|nosuchfilter }}").find("No filter named 'nosuchfilter'"),
            std::string::npos);
}

TEST(JinjaTest, LoopsAndScoping) {
  EXPECT_EQ(Render("{% for x in l %}{{ loop.index }}{{ loop.first }}{{ loop.last }}"
                   "{{ loop.revindex }}{{ loop.length }};{% endfor %}",
                   {{"l", {"a", "b"}}}),
            "1TrueFalse22;2FalseTrue12;");
  EXPECT_EQ(Render("{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.previtem }}|{% endfor %}"),
            "2|42|");
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}"
                   "{% if x == 3 %}{% break %}{% endif %}{% endfor %}"),
            "13");
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [5] %}{% set x = i %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(Render("{% set ns = namespace(n=0) %}{% for i in [5, 6] %}{% set ns.n = ns.n + i %}"
                   "{% endfor %}{{ ns.n }}"),
            "11");
  EXPECT_EQ(Render("{% for k, v in {'a': 1}|items %}{{ k }}={{ v }}{% endfor %}"), "a=1");
}

TEST(JinjaTest, Macros) {
  EXPECT_EQ(Render("{% macro m(a, b='d') %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(b=2, a=3) }}"),
            "1-d 3-2");
  EXPECT_EQ(Render("{% macro c() %}<{{ caller() }}>{% endmacro %}{% call c() %}in{% endcall %}"),
            "<in>");
  EXPECT_EQ(Render("{% macro m(x) %} {{ x }} {% endmacro %}[{{ m('v')|trim }}]"), "[v]");
  EXPECT_NE(Render("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}").find("takes not more than 1"),
            std::string::npos);
}

TEST(JinjaTest, WhitespaceControl) {
  const std::string source = "<\n  {% if true %}\n  x\n  {% endif %}\n>";
  EXPECT_EQ(Render(source), "<\n  x\n>");
  ParseOptions jinja_defaults;
  jinja_defaults.trim_blocks = false;
  jinja_defaults.lstrip_blocks = false;
  EXPECT_EQ(Render(source, ordered_json::object(), jinja_defaults), "<\n  \n  x\n  \n>");
  EXPECT_EQ(Render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(Render("a {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(Render("  {%+ if true %}x{% endif %}"), "  x");
  EXPECT_EQ(Render("a\n{# comment #}\nb\n"), "a\nb");
  EXPECT_EQ(Render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
  EXPECT_EQ(Render("a\r\nb\r\n"), "a\nb");
}

TEST(JinjaTest, SyntaxErrorsNameLineAndColumn) {
  auto bad = Template::Parse("line one\n{% if x %}\n{{ 1 + }}\n{% endif %}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("line 3, column 8"), std::string::npos)
      << bad.status().message();
  for (const char* source : {"{% if x %}", "{% for %}", "{{ 'open }}", "{# open", "{% endfor %}",
                             "{% frobnicate %}", "{{ (1 }}", "{% break %}", "{{ 1 }"}) {
    auto t = Template::Parse(source);
    EXPECT_FALSE(t.ok()) << source;
    if (!t.ok()) {
      EXPECT_NE(t.status().message().find("line 1"), std::string::npos) << source;
    }
  }
}

TEST(JinjaTest, RuntimeErrorsAreStatuses) {
  auto t = Template::Parse("ok\n{% if fail %}{{ raise_exception('Bad role: ' ~ role) }}{% endif %}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render(ordered_json{{"fail", false}}), "ok\n");
  auto err = t->Render(ordered_json{{"fail", true}, {"role", "x"}});
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().message(), "template error at line 2: Bad role: x");
  EXPECT_FALSE(Template::Parse("{{ 1 / 0 }}")->Render(ordered_json::object()).ok());
  EXPECT_FALSE(Template::Parse("{{ x }}")->Render(ordered_json::array()).ok());
  auto budget = Template::Parse(
      "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}");
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(budget->Render(ordered_json::object()).status().code(),
            StatusCode::kResourceExhausted);
  auto deep = Template::Parse("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}");
  ASSERT_TRUE(deep.ok());
  EXPECT_NE(deep->Render(ordered_json::object()).status().message().find("recursion"),
            std::string::npos);
}

// Concatenation in a loop doubled a string from a 90-byte template to 4.6 GB in 40 s; each
// result stayed under the per-string bound, but together they did not.
TEST(JinjaTest, WhatATemplateBuildsIsBoundedAsAWhole) {
  for (const char* source :
       {"{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s | length }}",
        "{% set ns = namespace(s=['a']) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}{{ ns.s | length }}",
        "{% set ns = namespace(s=[]) %}{% for i in range(100000) %}"
        "{% set ns.s = ns.s + ['x' * 60000000] %}{% endfor %}"}) {
    auto t = Template::Parse(source);
    ASSERT_TRUE(t.ok()) << source;
    auto out = t->Render(ordered_json::object());
    ASSERT_FALSE(out.ok()) << source;
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << out.status().message();
  }
}

TEST(JinjaTest, KeyOrderFollowsTheJsonType) {
  const std::string source = "{{ d|tojson }}";
  EXPECT_EQ(*Template::Parse(source)->Render(ordered_json{{"d", {{"b", 1}, {"a", 2}}}}),
            "{\"b\": 1, \"a\": 2}");
  EXPECT_EQ(*Template::Parse(source)->Render(nlohmann::json{{"d", {{"b", 1}, {"a", 2}}}}),
            "{\"a\": 2, \"b\": 1}");
}

TEST(JinjaTest, RenderChatTemplateSetsTheUsualVariables) {
  const ordered_json messages = {{{"role", "user"}, {"content", "Hi"}}};
  auto out = RenderChatTemplate(
      "{{ bos_token }}{{ tools is defined }}{{ messages|length }}{{ add_generation_prompt }}"
      "{{ enable_thinking }}",
      messages, ordered_json::array(), true, {{"bos_token", "<s>"}, {"enable_thinking", false}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "<s>False1TrueFalse");
  out = RenderChatTemplate("{{ tools|length }}", messages, {{{"type", "function"}}}, false,
                           nullptr);
  EXPECT_EQ(*out, "1");
  auto chatml = RenderChatTemplate(std::string(kChatMlTemplate),
                                   nlohmann::json::parse(R"([{"role": "system", "content": "S"},
                                     {"role": "user", "content": [{"type": "text", "text": "a"},
                                                                  {"type": "text", "text": "b"}]}])"),
                                   nullptr, true, nullptr);
  ASSERT_TRUE(chatml.ok()) << chatml.status().ToString();
  EXPECT_EQ(*chatml,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nab<|im_end|>\n"
            "<|im_start|>assistant\n");
}

}  // namespace
}  // namespace ds::text::jinja
