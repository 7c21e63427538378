// Jinja tests (`is ...`), the globals HF exposes (range, dict, namespace, raise_exception,
// strftime_now) and Python's printf-style `%` formatting.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "text/jinja/pystr.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

// The sandbox's limit on range() (jinja2.sandbox.MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

StatusOr<Value> OneArg(const Args& args, std::string_view test) {
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    return InvalidArgumentError("test '" + std::string(test) + "' takes exactly one argument");
  }
  return args.positional[0];
}

StatusOr<bool> NumericTest(std::string_view name, const Value& input, const Args& args) {
  if (!input.is_number()) {
    if (input.is_undefined()) return InvalidArgumentError(input.undefined_message());
    return InvalidArgumentError("unsupported operand type(s) for %: '" + TypeName(input) +
                                "' and 'int'");
  }
  Value divisor = Value::Int(2);
  if (name == "divisibleby") {
    DS_ASSIGN_OR_RETURN(divisor, OneArg(args, name));
  }
  DS_ASSIGN_OR_RETURN(Value rem, BinaryOp("%", input, divisor));
  const bool zero = rem.AsDouble() == 0.0;
  return name == "odd" ? !zero : zero;
}

StatusOr<bool> CompareTest(std::string_view name, const Value& input, const Args& args) {
  DS_ASSIGN_OR_RETURN(Value other, OneArg(args, name));
  if (name == "eq" || name == "equalto" || name == "==") return Equals(input, other);
  if (name == "ne" || name == "!=") return !Equals(input, other);
  if (name == "in") return Contains(other, input);
  if (name == "sameas") {
    if (input.kind() != other.kind()) return false;
    if (input.is_none() || input.is_undefined()) return true;
    if (input.kind() == Kind::kBool) return input.bool_value() == other.bool_value();
    if (input.is_number() || input.is_string()) return Equals(input, other);
    return input.identity() == other.identity();
  }
  DS_ASSIGN_OR_RETURN(int c, Compare(input, other));
  if (name == "lt" || name == "lessthan" || name == "<") return c < 0;
  if (name == "le" || name == "<=") return c <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return c > 0;
  return c >= 0;
}

bool IsCompareTest(std::string_view n) {
  for (std::string_view t : {"eq", "equalto", "==", "ne", "!=", "in", "sameas", "lt", "lessthan",
                             "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">="}) {
    if (n == t) return true;
  }
  return false;
}

StatusOr<Value> MakeMapping(const Args& args, std::string_view function) {
  if (args.positional.size() > 1) {
    return InvalidArgumentError(std::string(function) + " expected at most 1 argument");
  }
  Dict dict;
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      dict = src.dict();
    } else {
      DS_ASSIGN_OR_RETURN(List pairs, Iterate(src));
      for (const Value& p : pairs) {
        DS_ASSIGN_OR_RETURN(List kv, Iterate(p));
        if (kv.size() != 2) {
          return InvalidArgumentError("dictionary update sequence element has wrong length");
        }
        dict.Set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : args.keyword) dict.Set(Value::Str(k), v);
  return Value::MakeDict(std::move(dict));
}

StatusOr<Value> Range(const Args& args) {
  if (!args.keyword.empty() || args.positional.empty() || args.positional.size() > 3) {
    return InvalidArgumentError("range expected 1 to 3 integer arguments");
  }
  for (const Value& v : args.positional) {
    if (!v.is_integral()) {
      return InvalidArgumentError("'" + TypeName(v) + "' object cannot be interpreted as an "
                                  "integer");
    }
  }
  const auto& p = args.positional;
  const int64_t start = p.size() == 1 ? 0 : p[0].int_value();
  const int64_t stop = p.size() == 1 ? p[0].int_value() : p[1].int_value();
  const int64_t step = p.size() == 3 ? p[2].int_value() : 1;
  if (step == 0) return InvalidArgumentError("range() arg 3 must not be zero");
  const double count = std::max(0.0, std::ceil((static_cast<double>(stop) - start) / step));
  if (count > kMaxRange) {
    return OutOfRangeError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                           std::to_string(kMaxRange) + ").");
  }
  List items;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.push_back(Value::Int(start + i * step));
  return Value::MakeList(std::move(items));
}

StatusOr<Value> StrftimeNow(const Args& args) {
  if (args.positional.size() != 1 || !args.positional[0].is_string()) {
    return InvalidArgumentError("strftime_now expects one format string");
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[512];
  const size_t n = std::strftime(buf, sizeof(buf), args.positional[0].str().c_str(), &local);
  return Value::Str(std::string(buf, n));
}

}  // namespace

Value SoftStr(const Value& v) { return v.is_string() ? v : Value::Str(ToPyStr(v)); }

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

StatusOr<bool> ApplyTest(Evaluator& ev, std::string_view name, const Value& input,
                         const Args& args) {
  (void)ev;
  const Kind k = input.kind();
  if (name == "defined") return k != Kind::kUndefined;
  if (name == "undefined") return k == Kind::kUndefined;
  if (name == "none") return k == Kind::kNone;
  if (name == "boolean") return k == Kind::kBool;
  if (name == "true") return k == Kind::kBool && input.bool_value();
  if (name == "false") return k == Kind::kBool && !input.bool_value();
  if (name == "integer") return k == Kind::kInt;
  if (name == "float") return k == Kind::kFloat;
  if (name == "number") return input.is_number();
  if (name == "string") return k == Kind::kString;
  if (name == "mapping") return k == Kind::kDict;
  if (name == "sequence" || name == "iterable") {
    return k == Kind::kString || k == Kind::kList || k == Kind::kDict || k == Kind::kUndefined;
  }
  if (name == "callable") return k == Kind::kCallable || k == Kind::kLoop;
  if (name == "escaped") return input.is_markup();
  if (name == "lower" || name == "upper") {
    return k == Kind::kString ? PyIsCaseUniform(input.str(), name == "upper") : false;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    return NumericTest(name, input, args);
  }
  if (IsCompareTest(name)) return CompareTest(name, input, args);
  return InvalidArgumentError("No test named '" + std::string(name) + "'.");
}

bool IsGlobal(std::string_view name) {
  return name == "range" || name == "dict" || name == "namespace" || name == "raise_exception" ||
         name == "strftime_now";
}

StatusOr<Value> CallGlobal(std::string_view name, const Args& args) {
  if (name == "range") return Range(args);
  if (name == "dict") return MakeMapping(args, "dict");
  if (name == "namespace") {
    DS_ASSIGN_OR_RETURN(Value d, MakeMapping(args, "namespace"));
    return Value::MakeNamespace(d.dict());
  }
  if (name == "raise_exception") {
    return InvalidArgumentError(args.positional.empty() ? "" : ToPyStr(args.positional[0]));
  }
  return StrftimeNow(args);
}

namespace {

struct Spec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 's';
};

StatusOr<std::string> FormatOne(const Spec& spec, const Value& v) {
  std::string body;
  const char t = spec.type;
  if (t == 's' || t == 'r' || t == 'a') {
    body = t == 's' ? ToPyStr(v) : ToPyRepr(v);
    if (spec.precision >= 0) {
      body = EncodeUtf8(DecodeUtf8(body).substr(0, static_cast<size_t>(spec.precision)));
    }
  } else {
    if (!v.is_number()) {
      return InvalidArgumentError(std::string("%") + t + " format: a real number is required, not " +
                                  TypeName(v));
    }
    std::string fmt = "%" + spec.flags;
    if (spec.width >= 0) fmt += std::to_string(spec.width);
    if (spec.precision >= 0) fmt += "." + std::to_string(spec.precision);
    char buf[512];
    if (t == 'd' || t == 'i' || t == 'x' || t == 'X' || t == 'o') {
      const auto i = v.is_integral() ? v.int_value() : static_cast<int64_t>(v.AsDouble());
      std::snprintf(buf, sizeof(buf), (fmt + "ll" + (t == 'i' ? 'd' : t)).c_str(),
                    static_cast<long long>(i));
    } else {
      std::snprintf(buf, sizeof(buf), (fmt + t).c_str(), v.AsDouble());
    }
    body = buf;
  }
  const int len = static_cast<int>(CodePointCount(body));
  if (spec.width > len) {
    const std::string pad(static_cast<size_t>(spec.width - len), ' ');
    body = spec.flags.find('-') != std::string::npos ? body + pad : pad + body;
  }
  return body;
}

}  // namespace

StatusOr<std::string> PercentFormat(const std::string& format, const Value& args) {
  List positional;
  if (args.is_tuple()) {
    positional = args.list();
  } else if (!args.is_dict()) {
    positional.push_back(args);
  }
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) return InvalidArgumentError("incomplete format");
    if (format[i] == '%') {
      out += '%';
      continue;
    }
    const Value* arg = nullptr;
    if (format[i] == '(') {
      const size_t close = format.find(')', i);
      if (close == std::string::npos || !args.is_dict()) {
        return InvalidArgumentError("format requires a mapping");
      }
      arg = args.dict().Find(std::string_view(format).substr(i + 1, close - i - 1));
      if (arg == nullptr) return InvalidArgumentError("format key not found");
      i = close + 1;
    }
    Spec spec;
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string::npos) {
      spec.flags += format[i++];
    }
    auto number = [&](int* target) {
      if (i < format.size() && format[i] >= '0' && format[i] <= '9') *target = 0;
      while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
        *target = std::min(*target * 10 + (format[i++] - '0'), 400);
      }
    };
    number(&spec.width);
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = 0;
      number(&spec.precision);
    }
    if (i >= format.size() || std::string_view("srdiaxXoeEfFgG").find(format[i]) ==
                                  std::string_view::npos) {
      return InvalidArgumentError("unsupported format character");
    }
    spec.type = format[i];
    if (arg == nullptr) {
      if (next >= positional.size()) return InvalidArgumentError("not enough arguments for format string");
      arg = &positional[next++];
    }
    DS_ASSIGN_OR_RETURN(std::string piece, FormatOne(spec, *arg));
    out += piece;
  }
  if (!args.is_dict() && next < positional.size()) {
    return InvalidArgumentError("not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace ds::text::jinja
