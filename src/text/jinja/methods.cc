// Python methods of str, dict, list and tuple that templates call (message.content.split(...),
// tool.items(), ...). Every name Python defines is an attribute (so it shadows a dict key of the
// same name, as in Jinja); names we do not implement fail when called.
#include <algorithm>

#include "text/jinja/pystr.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

template <size_t N>
bool OneOf(std::string_view name, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

constexpr std::string_view kStrMethods[] = {
    "capitalize", "casefold",  "center",     "count",      "encode",       "endswith",
    "expandtabs", "find",      "format",     "format_map", "index",        "isalnum",
    "isalpha",    "isascii",   "isdecimal",  "isdigit",    "isidentifier", "islower",
    "isnumeric",  "isprintable", "isspace",  "istitle",    "isupper",      "join",
    "ljust",      "lower",     "lstrip",     "maketrans",  "partition",    "removeprefix",
    "removesuffix", "replace", "rfind",      "rindex",     "rjust",        "rpartition",
    "rsplit",     "rstrip",    "split",      "splitlines", "startswith",   "strip",
    "swapcase",   "title",     "translate",  "upper",      "zfill"};
constexpr std::string_view kDictMethods[] = {"copy", "fromkeys", "get",
                                                                   "items", "keys", "values"};
constexpr std::string_view kDictUnsafe[] = {"clear", "pop", "popitem",
                                                                  "setdefault", "update"};
constexpr std::string_view kListMethods[] = {"copy", "count", "index"};
constexpr std::string_view kListUnsafe[] = {
    "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};

StatusOr<std::optional<std::string>> OptionalString(const std::optional<Value>& v,
                                                    std::string_view what) {
  if (!v || v->is_none()) return std::optional<std::string>();
  if (!v->is_string()) {
    return InvalidArgumentError(std::string(what) + " arg must be None or str");
  }
  return std::optional<std::string>(v->str());
}

StatusOr<int64_t> OptionalInt(const std::optional<Value>& v, int64_t fallback) {
  if (!v) return fallback;
  if (!v->is_integral()) {
    return InvalidArgumentError("'" + TypeName(*v) + "' object cannot be interpreted as an integer");
  }
  return v->int_value();
}

StatusOr<Value> AffixTest(const std::string& s, std::string_view name, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"prefix", "start", "end"}, name));
  if (!a[0]) return InvalidArgumentError(std::string(name) + "() takes at least 1 argument");
  List candidates;
  if (a[0]->is_tuple()) {
    candidates = a[0]->list();
  } else {
    candidates.push_back(*a[0]);
  }
  Value sliced = Value::Str(s);
  if (a[1] || a[2]) {
    DS_ASSIGN_OR_RETURN(sliced, SliceValue(sliced, a[1].value_or(Value::None()),
                                           a[2].value_or(Value::None()), Value::None()));
  }
  const std::string& text = sliced.str();
  for (const Value& c : candidates) {
    if (!c.is_string()) {
      return InvalidArgumentError(std::string(name) + " first arg must be str or a tuple of str");
    }
    const std::string& x = c.str();
    const bool hit = name == "startswith" ? text.compare(0, x.size(), x) == 0
                                          : text.size() >= x.size() &&
                                                text.compare(text.size() - x.size(), x.size(), x) == 0;
    if (hit) return Value::Bool(true);
  }
  return Value::Bool(false);
}

List StringList(const std::vector<std::string>& parts) {
  List out;
  for (const std::string& p : parts) out.push_back(Value::Str(p));
  return out;
}

std::vector<std::string> SplitLines(const std::string& s, bool keep_ends) {
  std::vector<std::string> lines;
  const std::u32string cps = DecodeUtf8(s);
  std::u32string line;
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
                     c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) {
      line += c;
      continue;
    }
    std::u32string end(1, c);
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') end += cps[++i];
    if (keep_ends) line += end;
    lines.push_back(EncodeUtf8(line));
    line.clear();
  }
  if (!line.empty()) lines.push_back(EncodeUtf8(line));
  return lines;
}

bool AllCodePoints(const std::string& s, bool (*pred)(char32_t)) {
  const std::u32string cps = DecodeUtf8(s);
  return !cps.empty() && std::all_of(cps.begin(), cps.end(), pred);
}

bool IsDigitCp(char32_t c) { return c >= '0' && c <= '9'; }
bool IsAlphaCp(char32_t c) { return ToUpperCp(c) != c || ToLowerCp(c) != c || c > 0x2E7F; }
bool IsAlnumCp(char32_t c) { return IsDigitCp(c) || IsAlphaCp(c); }

StatusOr<Value> StrSplit(const std::string& s, std::string_view name, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"sep", "maxsplit"}, name));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> sep, OptionalString(a[0], name));
  DS_ASSIGN_OR_RETURN(int64_t max_split, OptionalInt(a[1], -1));
  if (sep && sep->empty()) return InvalidArgumentError("empty separator");
  return Value::MakeList(StringList(name == "split" ? PySplit(s, sep, max_split)
                                                    : PyRSplit(s, sep, max_split)));
}

StatusOr<Value> StrFind(const std::string& s, std::string_view name, const Args& args) {
  DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"sub"}, name));
  if (!a[0] || !a[0]->is_string()) return InvalidArgumentError(std::string(name) + " needs a str");
  const std::string& sub = a[0]->str();
  if (name == "count") return Value::Int(PyCount(s, sub));
  const size_t pos = name == "find" || name == "index" ? s.find(sub) : s.rfind(sub);
  if (pos == std::string::npos) {
    if (name == "index" || name == "rindex") return InvalidArgumentError("substring not found");
    return Value::Int(-1);
  }
  return Value::Int(static_cast<int64_t>(CodePointCount(std::string_view(s).substr(0, pos))));
}

// str.format with automatic or explicit field numbering and keyword fields; no format specs.
StatusOr<Value> StrFormat(const std::string& s, const Args& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') return InvalidArgumentError("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = s.find('}', i);
    if (close == std::string::npos) return InvalidArgumentError("Single '{' encountered");
    const std::string field = s.substr(i + 1, close - i - 1);
    const Value* v = nullptr;
    if (field.empty() || std::all_of(field.begin(), field.end(), [](char d) { return IsDigitCp(d); })) {
      const size_t index = field.empty() ? auto_index++ : std::stoul(field);
      if (index < args.positional.size()) v = &args.positional[index];
    } else {
      for (const auto& [k, kv] : args.keyword) {
        if (k == field) v = &kv;
      }
    }
    if (v == nullptr) return InvalidArgumentError("format field '" + field + "' not found");
    out += ToPyStr(*v);
    i = close;
  }
  return Value::Str(std::move(out));
}

StatusOr<Value> StrMethod(const Value& self, std::string_view name, const Args& args) {
  const std::string& s = self.str();
  const bool no_args = args.positional.empty() && args.keyword.empty();
  if (name == "startswith" || name == "endswith") return AffixTest(s, name, args);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"chars"}, name));
    DS_ASSIGN_OR_RETURN(std::optional<std::string> chars, OptionalString(a[0], name));
    return Value::Str(PyStrip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") return StrSplit(s, name, args);
  if (name == "replace") {
    DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"old", "new", "count"}, name));
    if (!a[0] || !a[1] || !a[0]->is_string() || !a[1]->is_string()) {
      return InvalidArgumentError("replace() arguments must be str");
    }
    DS_ASSIGN_OR_RETURN(int64_t count, OptionalInt(a[2], -1));
    return Value::Str(PyReplace(s, a[0]->str(), a[1]->str(), count));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" ||
      name == "count") {
    return StrFind(s, name, args);
  }
  if (name == "splitlines") {
    DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"keepends"}, name));
    return Value::MakeList(StringList(SplitLines(s, a[0] && Truthy(*a[0]))));
  }
  if (name == "join") {
    DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"iterable"}, name));
    if (!a[0]) return InvalidArgumentError("join() takes exactly one argument");
    DS_ASSIGN_OR_RETURN(List items, Iterate(*a[0]));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return InvalidArgumentError("sequence item " + std::to_string(i) +
                                    ": expected str instance, " + TypeName(items[i]) + " found");
      }
      if (i > 0) out += s;
      out += items[i].str();
    }
    return Value::Str(std::move(out));
  }
  if (name == "format") return StrFormat(s, args);
  if ((name == "removeprefix" || name == "removesuffix") && args.positional.size() == 1 &&
      args.positional[0].is_string()) {
    const std::string& x = args.positional[0].str();
    if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) return Value::Str(s.substr(x.size()));
    if (name == "removesuffix" && s.size() >= x.size() &&
        s.compare(s.size() - x.size(), x.size(), x) == 0) {
      return Value::Str(s.substr(0, s.size() - x.size()));
    }
    return Value::Str(s);
  }
  if (no_args) {
    if (name == "upper") return Value::Str(PyUpper(s));
    if (name == "lower" || name == "casefold") return Value::Str(PyLower(s));
    if (name == "title") return Value::Str(PyTitle(s));
    if (name == "capitalize") return Value::Str(PyCapitalize(s));
    if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") {
      return Value::Bool(AllCodePoints(s, IsDigitCp));
    }
    if (name == "isalpha") return Value::Bool(AllCodePoints(s, IsAlphaCp));
    if (name == "isalnum") return Value::Bool(AllCodePoints(s, IsAlnumCp));
    if (name == "isspace") return Value::Bool(AllCodePoints(s, IsPySpace));
    if (name == "islower" || name == "isupper") {
      return Value::Bool(PyIsCaseUniform(s, name == "isupper"));
    }
  }
  return UnimplementedError("str." + std::string(name) + "() is not supported");
}

StatusOr<Value> DictMethod(const Value& self, std::string_view name, const Args& args) {
  const Dict& d = self.dict();
  if (name == "get") {
    DS_ASSIGN_OR_RETURN(auto a, BindArgs(args, {"key", "default"}, "get"));
    if (!a[0]) return InvalidArgumentError("get expected at least 1 argument, got 0");
    if (const Value* v = d.Find(*a[0])) return *v;
    return a[1].value_or(Value::None());
  }
  if (!args.positional.empty() || !args.keyword.empty()) {
    return InvalidArgumentError("dict." + std::string(name) + "() takes no arguments");
  }
  if (name == "copy") return self;
  List out;
  for (const auto& [k, v] : d.items()) {
    if (name == "items") {
      out.push_back(Value::MakeList({k, v}, true));
    } else {
      out.push_back(name == "keys" ? k : v);
    }
  }
  if (name == "fromkeys") return UnimplementedError("dict.fromkeys() is not supported");
  return Value::MakeList(std::move(out));
}

StatusOr<Value> ListMethod(const Value& self, std::string_view name, const Args& args) {
  if (name == "copy") return Value::MakeList(self.list(), self.is_tuple());
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    return InvalidArgumentError(std::string(name) + "() takes exactly one argument");
  }
  const List& items = self.list();
  int64_t count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!Equals(items[i], args.positional[0])) continue;
    if (name == "index") return Value::Int(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") return InvalidArgumentError("value is not in list");
  return Value::Int(count);
}

}  // namespace

bool HasMethod(const Value& receiver, std::string_view name) {
  switch (receiver.kind()) {
    case Kind::kString: return OneOf(name, kStrMethods);
    case Kind::kDict: return OneOf(name, kDictMethods);
    case Kind::kList: return OneOf(name, kListMethods) && !(receiver.is_tuple() && name == "copy");
    default: return false;
  }
}

bool IsUnsafeMethod(const Value& receiver, std::string_view name) {
  if (receiver.is_dict()) return OneOf(name, kDictUnsafe);
  if (receiver.is_list() && !receiver.is_tuple()) return OneOf(name, kListUnsafe);
  return false;
}

StatusOr<Value> CallMethod(const Value& receiver, std::string_view name, const Args& args) {
  switch (receiver.kind()) {
    case Kind::kString: return StrMethod(receiver, name, args);
    case Kind::kDict: return DictMethod(receiver, name, args);
    case Kind::kList: return ListMethod(receiver, name, args);
    default: return InvalidArgumentError("no method " + std::string(name));
  }
}

}  // namespace ds::text::jinja
