// Jinja's built-in filters (jinja2/filters.py semantics) plus HF's tojson override
// (json.dumps with ensure_ascii=False, indent, separators, sort_keys).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <unordered_map>

#include "text/jinja/pystr.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

using FilterFn = StatusOr<Value> (*)(Evaluator&, const Value&, const Args&);

std::string Str(const Value& v) { return ToPyStr(v); }

// Python int(str, base): whitespace, sign, underscores between digits, base prefixes.
std::optional<int64_t> ParsePyInt(std::string s, int base) {
  s = PyStrip(s, std::nullopt, true, true);
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i + 1 < s.size() && s[i] == '0') {
    const char p = static_cast<char>(s[i + 1] | 0x20);
    const int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == prefixed || base == 0)) {
      base = prefixed;
      i += 2;
      if (i < s.size() && s[i] == '_') ++i;
    }
  }
  if (base == 0) base = 10;
  if (i >= s.size()) return std::nullopt;
  int64_t value = 0;
  for (bool prev_digit = false; i < s.size(); ++i) {
    if (s[i] == '_' && prev_digit && i + 1 < s.size() && s[i + 1] != '_') {
      prev_digit = false;
      continue;
    }
    const char c = static_cast<char>(s[i] | 0x20);
    const int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'z') ? c - 'a' + 10 : 99;
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value)) {
      return std::nullopt;
    }
    prev_digit = true;
  }
  return negative ? -value : value;
}

// Python float(str).
std::optional<double> ParsePyFloat(const std::string& raw) {
  std::string s = PyStrip(raw, std::nullopt, true, true);
  std::string lowered = PyLower(s);
  const size_t sign = !lowered.empty() && (lowered[0] == '+' || lowered[0] == '-');
  const std::string word = lowered.substr(sign);
  if (word == "inf" || word == "infinity" || word == "nan") {
    const double v = word == "nan" ? NAN : INFINITY;
    return lowered[0] == '-' ? -v : v;
  }
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      const bool ok = i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                      std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!ok) return std::nullopt;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)) && std::string_view("+-.eE").find(c) ==
                                                             std::string_view::npos) {
      return std::nullopt;
    }
    clean += c;
  }
  if (clean.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  return v;
}

StatusOr<Value> Length(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return Value::Int(0);
    case Kind::kString: return Value::Int(static_cast<int64_t>(CodePointCount(v.str())));
    case Kind::kList: return Value::Int(static_cast<int64_t>(v.list().size()));
    case Kind::kDict: return Value::Int(static_cast<int64_t>(v.dict().size()));
    default: return InvalidArgumentError("object of type '" + TypeName(v) + "' has no len()");
  }
}

// Jinja's make_attrgetter: "a.b.0" looks up a, then b, then item 0; an undefined step is
// replaced by `fallback` (when given) before the next step.
StatusOr<Value> GetPath(Evaluator& ev, const Value& item, const Value& attribute,
                        const Value* fallback = nullptr) {
  if (!attribute.is_string()) return ev.GetItem(item, attribute);
  Value cur = item;
  for (const std::string& part : PySplit(attribute.str(), std::string("."), -1)) {
    const std::optional<int64_t> index =
        !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit) ? ParsePyInt(part, 10)
                                                                           : std::nullopt;
    DS_ASSIGN_OR_RETURN(cur, ev.GetItem(cur, index ? Value::Int(*index) : Value::Str(part)));
    if (cur.is_undefined() && fallback != nullptr) cur = *fallback;
  }
  return cur;
}

// The sort key of filters with case_sensitive=False: strings compare lowercased.
Value SortKey(const Value& v, bool case_sensitive) {
  return (!case_sensitive && v.is_string()) ? Value::Str(PyLower(v.str())) : v;
}

StatusOr<List> SortedBy(List items, const std::vector<Value>& keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status error;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    StatusOr<int> c = Compare(keys[a], keys[b]);
    if (!c.ok()) {
      if (error.ok()) error = c.status();
      return false;
    }
    return reverse ? *c > 0 : *c < 0;
  });
  DS_RETURN_IF_ERROR(error);
  List out;
  for (size_t i : order) out.push_back(std::move(items[i]));
  return out;
}

StatusOr<Value> FDefault(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"default_value", "boolean"}, "default"));
  const bool boolean = a[1] && Truthy(*a[1]);
  if (in.is_undefined() || (boolean && !Truthy(in))) return a[0].value_or(Value::Str(""));
  return in;
}

StatusOr<Value> FLength(Evaluator&, const Value& in, const Args&) { return Length(in); }

StatusOr<Value> FString(Evaluator&, const Value& in, const Args&) { return SoftStr(in); }

StatusOr<Value> FSafe(Evaluator&, const Value& in, const Args&) {
  return Value::Str(Str(in), true);
}

StatusOr<Value> FEscape(Evaluator&, const Value& in, const Args&) {
  if (in.is_markup()) return in;
  return Value::Str(HtmlEscape(Str(in)), true);
}

StatusOr<Value> FTrim(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"chars"}, "trim"));
  std::optional<std::string> chars;
  if (a[0] && !a[0]->is_none()) chars = Str(*a[0]);
  return Value::Str(PyStrip(Str(in), chars, true, true), in.is_markup());
}

template <std::string (*Fn)(std::string_view)>
StatusOr<Value> FCase(Evaluator&, const Value& in, const Args&) {
  return Value::Str(Fn(Str(in)), in.is_markup());
}

std::string JinjaTitle(std::string_view s) {
  std::u32string cps = DecodeUtf8(s);
  bool word_start = true;
  for (char32_t& c : cps) {
    const bool delimiter = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || IsPySpace(c);
    if (delimiter) {
      word_start = true;
      continue;
    }
    c = word_start ? ToUpperCp(c) : ToLowerCp(c);
    word_start = false;
  }
  return EncodeUtf8(cps);
}

StatusOr<Value> FReplace(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"old", "new", "count"}, "replace"));
  if (!a[0] || !a[1]) return InvalidArgumentError("replace() missing arguments");
  int64_t count = -1;
  if (a[2] && !a[2]->is_none()) {
    if (!a[2]->is_integral()) return InvalidArgumentError("replace count must be an integer");
    count = a[2]->int_value();
  }
  return Value::Str(PyReplace(Str(in), Str(*a[0]), Str(*a[1]), count));
}

StatusOr<Value> FJoin(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"d", "attribute"}, "join"));
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  const std::string sep = a[0] ? Str(*a[0]) : "";
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (a[1] && !a[1]->is_none()) {
      DS_ASSIGN_OR_RETURN(item, GetPath(ev, item, *a[1]));
    }
    if (i > 0) out += sep;
    out += Str(item);
  }
  return Value::Str(std::move(out));
}

StatusOr<Value> FFirstLast(const Value& in, bool first) {
  if (in.is_string()) {
    const std::u32string cps = DecodeUtf8(in.str());
    if (!cps.empty()) return Value::Str(EncodeUtf8(cps.substr(first ? 0 : cps.size() - 1, 1)));
  } else {
    DS_ASSIGN_OR_RETURN(List items, Iterate(in));
    if (!items.empty()) return first ? items.front() : items.back();
  }
  return Value::Undefined(first ? "No first item, sequence was empty."
                                : "No last item, sequence was empty.");
}
StatusOr<Value> FFirst(Evaluator&, const Value& in, const Args&) { return FFirstLast(in, true); }
StatusOr<Value> FLast(Evaluator&, const Value& in, const Args&) { return FFirstLast(in, false); }

StatusOr<Value> FList(Evaluator&, const Value& in, const Args&) {
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  return Value::MakeList(std::move(items));
}

StatusOr<Value> FItems(Evaluator&, const Value& in, const Args&) {
  if (in.is_undefined()) return Value::MakeList({});
  if (!in.is_dict()) return InvalidArgumentError("Can only get item pairs from a mapping.");
  List out;
  for (const auto& [k, v] : in.dict().items()) out.push_back(Value::MakeList({k, v}, true));
  return Value::MakeList(std::move(out));
}

StatusOr<Value> FReverse(Evaluator&, const Value& in, const Args&) {
  if (in.is_string()) {
    std::u32string cps = DecodeUtf8(in.str());
    std::reverse(cps.begin(), cps.end());
    return Value::Str(EncodeUtf8(cps));
  }
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  std::reverse(items.begin(), items.end());
  return Value::MakeList(std::move(items));
}

StatusOr<Value> FSort(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a,
                      BindArgs(args, {"reverse", "case_sensitive", "attribute"}, "sort"));
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  std::vector<Value> keys;
  for (const Value& item : items) {
    Value key = item;
    if (a[2] && !a[2]->is_none()) {
      DS_ASSIGN_OR_RETURN(key, GetPath(ev, item, *a[2]));
    }
    keys.push_back(SortKey(key, a[1] && Truthy(*a[1])));
  }
  DS_ASSIGN_OR_RETURN(List sorted, SortedBy(std::move(items), keys, a[0] && Truthy(*a[0])));
  return Value::MakeList(std::move(sorted));
}

StatusOr<Value> FDictsort(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"case_sensitive", "by", "reverse"}, "dictsort"));
  if (!in.is_dict()) return InvalidArgumentError("dictsort requires a mapping");
  const std::string by = a[1] ? Str(*a[1]) : "key";
  if (by != "key" && by != "value") {
    return InvalidArgumentError("You can only sort by either 'key' or 'value'");
  }
  List items;
  std::vector<Value> keys;
  for (const auto& [k, v] : in.dict().items()) {
    items.push_back(Value::MakeList({k, v}, true));
    keys.push_back(SortKey(by == "key" ? k : v, a[0] && Truthy(*a[0])));
  }
  DS_ASSIGN_OR_RETURN(List sorted, SortedBy(std::move(items), keys, a[2] && Truthy(*a[2])));
  return Value::MakeList(std::move(sorted));
}

StatusOr<Value> FUnique(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"case_sensitive", "attribute"}, "unique"));
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  List out;
  std::vector<Value> seen;
  for (const Value& item : items) {
    Value key = item;
    if (a[1] && !a[1]->is_none()) {
      DS_ASSIGN_OR_RETURN(key, GetPath(ev, item, *a[1]));
    }
    key = SortKey(key, a[0] && Truthy(*a[0]));
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return Equals(s, key); })) {
      continue;
    }
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

StatusOr<Value> FMinMax(Evaluator& ev, const Value& in, const Args& args, bool max) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"case_sensitive", "attribute"}, max ? "max" : "min"));
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  std::vector<Value> keys;
  for (const Value& item : items) {
    Value key = item;
    if (a[1] && !a[1]->is_none()) {
      DS_ASSIGN_OR_RETURN(key, GetPath(ev, item, *a[1]));
    }
    keys.push_back(SortKey(key, a[0] && Truthy(*a[0])));
  }
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    DS_ASSIGN_OR_RETURN(int c, Compare(keys[i], keys[best]));
    if (max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}
StatusOr<Value> FMax(Evaluator& ev, const Value& in, const Args& a) { return FMinMax(ev, in, a, true); }
StatusOr<Value> FMin(Evaluator& ev, const Value& in, const Args& a) { return FMinMax(ev, in, a, false); }

StatusOr<Value> FSum(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"attribute", "start"}, "sum"));
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  Value total = a[1].value_or(Value::Int(0));
  for (const Value& item : items) {
    Value x = item;
    if (a[0] && !a[0]->is_none()) {
      DS_ASSIGN_OR_RETURN(x, GetPath(ev, item, *a[0]));
    }
    DS_ASSIGN_OR_RETURN(total, BinaryOp("+", total, x));
  }
  return total;
}

// select/reject/selectattr/rejectattr share jinja's prepare_select_or_reject.
StatusOr<Value> SelectOrReject(Evaluator& ev, const Value& in, const Args& args, bool select,
                               bool by_attribute) {
  size_t off = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) return InvalidArgumentError("Missing parameter for attribute name");
    attribute = args.positional[0];
    off = 1;
  }
  Args test_args;
  std::string test;
  if (args.positional.size() > off) {
    test = Str(args.positional[off]);
    test_args.positional.assign(args.positional.begin() + off + 1, args.positional.end());
    test_args.keyword = args.keyword;
  }
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  List out;
  for (const Value& item : items) {
    Value x = item;
    if (by_attribute) {
      DS_ASSIGN_OR_RETURN(x, GetPath(ev, item, attribute));
    }
    bool pass = Truthy(x);
    if (!test.empty()) {
      DS_ASSIGN_OR_RETURN(pass, ApplyTest(ev, test, x, test_args));
    }
    if (pass == select) out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}
StatusOr<Value> FSelect(Evaluator& ev, const Value& in, const Args& a) {
  return SelectOrReject(ev, in, a, true, false);
}
StatusOr<Value> FReject(Evaluator& ev, const Value& in, const Args& a) {
  return SelectOrReject(ev, in, a, false, false);
}
StatusOr<Value> FSelectattr(Evaluator& ev, const Value& in, const Args& a) {
  return SelectOrReject(ev, in, a, true, true);
}
StatusOr<Value> FRejectattr(Evaluator& ev, const Value& in, const Args& a) {
  return SelectOrReject(ev, in, a, false, true);
}

StatusOr<Value> FMap(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(List items, Iterate(in));
  List out;
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [k, v] : args.keyword) {
    if (k == "attribute") attribute = &v;
    if (k == "default") fallback = &v;
  }
  if (args.positional.empty() && attribute != nullptr) {
    const bool has_fallback = fallback != nullptr && !fallback->is_none();
    for (const Value& item : items) {
      DS_ASSIGN_OR_RETURN(Value x, GetPath(ev, item, *attribute, has_fallback ? fallback : nullptr));
      out.push_back(std::move(x));
    }
    return Value::MakeList(std::move(out));
  }
  if (args.positional.empty()) return InvalidArgumentError("map requires a filter argument");
  const std::string filter = Str(args.positional[0]);
  Args rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    DS_ASSIGN_OR_RETURN(Value x, ApplyFilter(ev, filter, item, rest));
    out.push_back(std::move(x));
  }
  return Value::MakeList(std::move(out));
}

StatusOr<Value> FInt(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"default", "base"}, "int"));
  const Value fallback = a[0].value_or(Value::Int(0));
  const int base = a[1] && a[1]->is_integral() ? static_cast<int>(a[1]->int_value()) : 10;
  if (in.is_integral()) return Value::Int(in.int_value());
  if (in.kind() == Kind::kFloat) {
    const double f = in.AsDouble();
    if (!std::isfinite(f) || std::fabs(f) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(f));
  }
  if (!in.is_string()) return fallback;
  if (std::optional<int64_t> i = ParsePyInt(in.str(), base)) return Value::Int(*i);
  std::optional<double> f = ParsePyFloat(in.str());
  if (!f || !std::isfinite(*f) || std::fabs(*f) >= 9.2e18) return fallback;
  return Value::Int(static_cast<int64_t>(*f));
}

StatusOr<Value> FFloat(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"default"}, "float"));
  if (in.is_number()) return Value::Float(in.AsDouble());
  if (in.is_string()) {
    if (std::optional<double> f = ParsePyFloat(in.str())) return Value::Float(*f);
  }
  return a[0].value_or(Value::Float(0.0));
}

StatusOr<Value> FAbs(Evaluator&, const Value& in, const Args&) {
  if (in.is_integral()) {
    if (in.int_value() == INT64_MIN) return OutOfRangeError("integer overflow in abs");
    return Value::Int(std::llabs(in.int_value()));
  }
  if (in.is_number()) return Value::Float(std::fabs(in.AsDouble()));
  return InvalidArgumentError("bad operand type for abs(): '" + TypeName(in) + "'");
}

StatusOr<Value> FRound(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"precision", "method"}, "round"));
  const int64_t precision = a[0] && a[0]->is_integral() ? a[0]->int_value() : 0;
  const std::string method = a[1] ? Str(*a[1]) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    return InvalidArgumentError("method must be common, ceil or floor");
  }
  if (!in.is_number()) return InvalidArgumentError("type " + TypeName(in) + " doesn't define __round__");
  if (precision < -300 || precision > 300) return InvalidArgumentError("precision out of range");
  const double x = in.AsDouble();
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (method != "common") {
    return Value::Float((method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale);
  }
  if (in.is_integral() && precision >= 0) return Value::Int(in.int_value());
  double rounded = 0.0;
  if (precision >= 0) {
    // printf rounds the exact binary value half-to-even, as Python's round() does.
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
    rounded = std::strtod(buf, nullptr);
  } else {
    rounded = std::nearbyint(x / (1.0 / scale)) * (1.0 / scale);
  }
  if (in.is_integral()) return Value::Int(static_cast<int64_t>(rounded));
  return Value::Float(rounded);
}

StatusOr<Value> FToJson(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"ensure_ascii", "indent", "separators", "sort_keys"},
                                       "tojson"));
  JsonOptions options;
  options.ensure_ascii = a[0] && Truthy(*a[0]);
  options.sort_keys = a[3] && Truthy(*a[3]);
  if (a[1] && !a[1]->is_none()) {
    if (a[1]->is_string()) {
      options.indent = a[1]->str();
    } else if (a[1]->is_integral()) {
      options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, a[1]->int_value())), ' ');
    } else {
      return InvalidArgumentError("indent must be an int or a str");
    }
    options.item_separator = ",";
  }
  if (a[2] && !a[2]->is_none()) {
    if (!a[2]->is_list() || a[2]->list().size() != 2 || !a[2]->list()[0].is_string() ||
        !a[2]->list()[1].is_string()) {
      return InvalidArgumentError("separators must be a pair of strings");
    }
    options.item_separator = a[2]->list()[0].str();
    options.key_separator = a[2]->list()[1].str();
  }
  DS_ASSIGN_OR_RETURN(std::string json, ToJson(in, options));
  return Value::Str(std::move(json));
}

StatusOr<Value> FIndent(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"width", "first", "blank"}, "indent"));
  std::string indention(4, ' ');
  if (a[0]) {
    indention = a[0]->is_string() ? a[0]->str()
                                  : std::string(a[0]->is_integral() ? static_cast<size_t>(
                                                    std::max<int64_t>(0, a[0]->int_value()))
                                                                    : 4,
                                                ' ');
  }
  DS_ASSIGN_OR_RETURN(Value lines_v, CallMethod(Value::Str(Str(in) + "\n"), "splitlines", {}));
  const List& lines = lines_v.list();
  std::string out;
  if (a[2] && Truthy(*a[2])) {
    for (size_t i = 0; i < lines.size(); ++i) out += (i > 0 ? "\n" + indention : "") + lines[i].str();
  } else {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) out += "\n" + (lines[i].str().empty() ? "" : indention);
      out += lines[i].str();
    }
  }
  if (a[1] && Truthy(*a[1])) out = indention + out;
  return Value::Str(std::move(out), in.is_markup());
}

StatusOr<Value> FCenter(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"width"}, "center"));
  const std::string s = Str(in);
  const int64_t width = a[0] && a[0]->is_integral() ? a[0]->int_value() : 80;
  const auto len = static_cast<int64_t>(CodePointCount(s));
  if (width <= len) return Value::Str(s);
  const int64_t margin = std::min<int64_t>(width - len, 1 << 20);
  const int64_t left = margin / 2 + (margin & width & 1);
  return Value::Str(std::string(left, ' ') + s + std::string(margin - left, ' '));
}

StatusOr<Value> FWordcount(Evaluator&, const Value& in, const Args&) {
  int64_t words = 0;
  bool in_word = false;
  for (char32_t c : DecodeUtf8(Str(in))) {
    const bool word_char = c == '_' || (c >= '0' && c <= '9') || ToUpperCp(c) != c ||
                           ToLowerCp(c) != c || (c >= 0x80 && !IsPySpace(c) && c > 0x2E7F);
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value::Int(words);
}

StatusOr<Value> FTruncate(Evaluator&, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"length", "killwords", "end", "leeway"}, "truncate"));
  const std::u32string s = DecodeUtf8(Str(in));
  const int64_t length = a[0] && a[0]->is_integral() ? a[0]->int_value() : 255;
  const std::u32string end = DecodeUtf8(a[2] ? Str(*a[2]) : "...");
  const int64_t leeway = a[3] && a[3]->is_integral() ? a[3]->int_value() : 5;
  const auto end_len = static_cast<int64_t>(end.size());
  if (length < end_len || leeway < 0) return InvalidArgumentError("invalid truncate arguments");
  if (static_cast<int64_t>(s.size()) <= length + leeway) return Value::Str(EncodeUtf8(s));
  std::u32string head = s.substr(0, static_cast<size_t>(length - end_len));
  if (!(a[1] && Truthy(*a[1]))) {
    const size_t space = head.rfind(U' ');
    if (space != std::u32string::npos) head = head.substr(0, space);
  }
  return Value::Str(EncodeUtf8(head + end));
}

StatusOr<Value> FFormat(Evaluator&, const Value& in, const Args& args) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    return InvalidArgumentError("can't handle positional and keyword arguments at the same time");
  }
  Value params = Value::MakeList(args.positional, true);
  if (!args.keyword.empty()) {
    Dict d;
    for (const auto& [k, v] : args.keyword) d.Set(Value::Str(k), v);
    params = Value::MakeDict(std::move(d));
  }
  DS_ASSIGN_OR_RETURN(std::string s, PercentFormat(Str(in), params));
  return Value::Str(std::move(s));
}

StatusOr<Value> FAttr(Evaluator& ev, const Value& in, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"name"}, "attr"));
  if (!a[0] || !a[0]->is_string()) return InvalidArgumentError("attr() needs an attribute name");
  return ev.GetAttr(in, a[0]->str());
}

const std::unordered_map<std::string_view, FilterFn>& FilterTable() {
  static const auto* table = new std::unordered_map<std::string_view, FilterFn>{
      {"abs", FAbs},           {"attr", FAttr},
      {"capitalize", FCase<PyCapitalize>},
      {"center", FCenter},     {"count", FLength},
      {"d", FDefault},         {"default", FDefault},
      {"dictsort", FDictsort}, {"e", FEscape},
      {"escape", FEscape},     {"first", FFirst},
      {"float", FFloat},       {"format", FFormat},
      {"indent", FIndent},     {"int", FInt},
      {"items", FItems},       {"join", FJoin},
      {"last", FLast},         {"length", FLength},
      {"list", FList},         {"lower", FCase<PyLower>},
      {"map", FMap},           {"max", FMax},
      {"min", FMin},           {"reject", FReject},
      {"rejectattr", FRejectattr}, {"replace", FReplace},
      {"reverse", FReverse},   {"round", FRound},
      {"safe", FSafe},         {"select", FSelect},
      {"selectattr", FSelectattr}, {"sort", FSort},
      {"string", FString},     {"sum", FSum},
      {"title", FCase<JinjaTitle>}, {"tojson", FToJson},
      {"trim", FTrim},         {"truncate", FTruncate},
      {"unique", FUnique},     {"upper", FCase<PyUpper>},
      {"wordcount", FWordcount},
  };
  return *table;
}

}  // namespace

StatusOr<Value> ApplyFilter(Evaluator& ev, std::string_view name, const Value& input,
                            const Args& args) {
  const auto& table = FilterTable();
  auto it = table.find(name);
  if (it == table.end()) return InvalidArgumentError("No filter named '" + std::string(name) + "'.");
  return it->second(ev, input, args);
}

}  // namespace ds::text::jinja
