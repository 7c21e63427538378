#include "text/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "text/jinja/pystr.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

// repr() of a namespace that contains itself would recurse forever; Python prints "..." there.
constexpr int kMaxReprDepth = 64;

template <typename Json>
Value FromJsonImpl(const Json& j) {
  switch (j.type()) {
    case Json::value_t::boolean: return Value::Bool(j.template get<bool>());
    case Json::value_t::number_integer: return Value::Int(j.template get<int64_t>());
    case Json::value_t::number_unsigned: {
      const uint64_t u = j.template get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float: return Value::Float(j.template get<double>());
    case Json::value_t::string: return Value::Str(j.template get<std::string>());
    case Json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(FromJsonImpl(e));
      return Value::MakeList(std::move(items));
    }
    case Json::value_t::object: {
      Dict dict;
      for (auto it = j.begin(); it != j.end(); ++it) {
        dict.Set(Value::Str(it.key()), FromJsonImpl(it.value()));
      }
      return Value::MakeDict(std::move(dict));
    }
    default: return Value::None();
  }
}

std::string ReprImpl(const Value& v, int depth);

std::string ReprList(const List& items, bool tuple, int depth) {
  std::string out(1, tuple ? '(' : '[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += ReprImpl(items[i], depth + 1);
  }
  if (tuple && items.size() == 1) out += ',';
  out += tuple ? ')' : ']';
  return out;
}

std::string ReprDict(const Dict& dict, int depth) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : dict.items()) {
    if (!first) out += ", ";
    first = false;
    out += ReprImpl(k, depth + 1) + ": " + ReprImpl(v, depth + 1);
  }
  return out + "}";
}

std::string ReprImpl(const Value& v, int depth) {
  if (depth > kMaxReprDepth) return "...";
  switch (v.kind()) {
    case Kind::kString: return PyReprString(v.str());
    case Kind::kUndefined: return "Undefined";
    case Kind::kList: return ReprList(v.list(), v.is_tuple(), depth);
    case Kind::kDict: return ReprDict(v.dict(), depth);
    case Kind::kNamespace: return "<Namespace " + ReprDict(v.ns().attrs, depth) + ">";
    case Kind::kCallable: return "<function " + v.callable().name + ">";
    case Kind::kLoop: return "<LoopContext>";
    default: return ToPyStr(v);
  }
}

struct JsonWriter {
  const JsonOptions& options;
  std::string out;

  void Newline(int level) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += *options.indent;
  }

  StatusOr<std::string> KeyString(const Value& key) {
    switch (key.kind()) {
      case Kind::kString: return key.str();
      case Kind::kBool: return std::string(key.bool_value() ? "true" : "false");
      case Kind::kNone: return std::string("null");
      case Kind::kInt:
      case Kind::kFloat: return ToPyStr(key);
      default:
        return InvalidArgumentError("keys must be str, int, float, bool or None, not " +
                                    TypeName(key));
    }
  }

  Status WriteDict(const Dict& dict, int level) {
    if (dict.size() == 0) {
      out += "{}";
      return OkStatus();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [k, v] : dict.items()) {
      DS_ASSIGN_OR_RETURN(std::string key, KeyString(k));
      entries.emplace_back(std::move(key), &v);
    }
    if (options.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out += options.item_separator;
      if (options.indent) Newline(level + 1);
      AppendJsonString(out, entries[i].first, options.ensure_ascii);
      out += options.key_separator;
      DS_RETURN_IF_ERROR(Write(*entries[i].second, level + 1));
    }
    if (options.indent) Newline(level);
    out += '}';
    return OkStatus();
  }

  Status Write(const Value& v, int level) {
    switch (v.kind()) {
      case Kind::kNone: out += "null"; return OkStatus();
      case Kind::kBool: out += v.bool_value() ? "true" : "false"; return OkStatus();
      case Kind::kInt: out += std::to_string(v.int_value()); return OkStatus();
      case Kind::kFloat: {
        const double f = v.AsDouble();
        if (f != f) {
          out += "NaN";
        } else if (f == INFINITY || f == -INFINITY) {
          out += f > 0 ? "Infinity" : "-Infinity";
        } else {
          out += FormatPyFloat(f);
        }
        return OkStatus();
      }
      case Kind::kString: AppendJsonString(out, v.str(), options.ensure_ascii); return OkStatus();
      case Kind::kList: {
        const List& items = v.list();
        if (items.empty()) {
          out += "[]";
          return OkStatus();
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out += options.item_separator;
          if (options.indent) Newline(level + 1);
          DS_RETURN_IF_ERROR(Write(items[i], level + 1));
        }
        if (options.indent) Newline(level);
        out += ']';
        return OkStatus();
      }
      case Kind::kDict: return WriteDict(v.dict(), level);
      default:
        return InvalidArgumentError("Object of type " + TypeName(v) + " is not JSON serializable");
    }
  }
};

}  // namespace

const Value* Dict::Find(const Value& key) const {
  if (key.is_string()) return Find(std::string_view(key.str()));
  for (const auto& [k, v] : items_) {
    if (Equals(k, key)) return &v;
  }
  return nullptr;
}

const Value* Dict::Find(std::string_view key) const {
  for (const auto& [k, v] : items_) {
    if (k.is_string() && k.str() == key) return &v;
  }
  return nullptr;
}

void Dict::Set(Value key, Value value) {
  for (auto& [k, v] : items_) {
    if (Equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(key), std::move(value));
}

Value Value::Undefined(std::string message) {
  Value v;
  v.ptr_ = std::make_shared<std::string>(std::move(message));
  return v;
}

Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.scalar_.b = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.scalar_.i = i;
  return v;
}

Value Value::Float(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.scalar_.f = f;
  return v;
}

Value Value::Str(std::string s, bool markup) {
  Value v;
  v.kind_ = Kind::kString;
  v.flag_ = markup;
  v.ptr_ = std::make_shared<std::string>(std::move(s));
  return v;
}

Value Value::MakeList(List items, bool tuple) {
  Value v;
  v.kind_ = Kind::kList;
  v.flag_ = tuple;
  v.ptr_ = std::make_shared<List>(std::move(items));
  return v;
}

Value Value::MakeDict(Dict dict) {
  Value v;
  v.kind_ = Kind::kDict;
  v.ptr_ = std::make_shared<Dict>(std::move(dict));
  return v;
}

Value Value::MakeNamespace(Dict attrs) {
  Value v;
  v.kind_ = Kind::kNamespace;
  v.ptr_ = std::make_shared<Namespace>(Namespace{std::move(attrs)});
  return v;
}

Value Value::MakeCallable(std::shared_ptr<Callable> fn) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.ptr_ = std::move(fn);
  return v;
}

Value Value::MakeLoop(std::shared_ptr<LoopState> loop) {
  Value v;
  v.kind_ = Kind::kLoop;
  v.ptr_ = std::move(loop);
  return v;
}

double Value::AsDouble() const {
  DS_DCHECK(is_number());
  return kind_ == Kind::kFloat ? scalar_.f : static_cast<double>(int_value());
}

const std::string& Value::str() const {
  DS_DCHECK(kind_ == Kind::kString);
  return *static_cast<const std::string*>(ptr_.get());
}

const List& Value::list() const {
  DS_DCHECK(kind_ == Kind::kList);
  return *static_cast<const List*>(ptr_.get());
}

const Dict& Value::dict() const {
  DS_DCHECK(kind_ == Kind::kDict);
  return *static_cast<const Dict*>(ptr_.get());
}

Namespace& Value::ns() const {
  DS_DCHECK(kind_ == Kind::kNamespace);
  return *static_cast<Namespace*>(ptr_.get());
}

const Callable& Value::callable() const {
  DS_DCHECK(kind_ == Kind::kCallable);
  return *static_cast<const Callable*>(ptr_.get());
}

LoopState& Value::loop() const {
  DS_DCHECK(kind_ == Kind::kLoop);
  return *static_cast<LoopState*>(ptr_.get());
}

std::shared_ptr<Namespace> Value::shared_namespace() const {
  DS_DCHECK(kind_ == Kind::kNamespace);
  return std::static_pointer_cast<Namespace>(ptr_);
}

std::shared_ptr<LoopState> Value::shared_loop() const {
  DS_DCHECK(kind_ == Kind::kLoop);
  return std::static_pointer_cast<LoopState>(ptr_);
}

const std::string& Value::undefined_message() const {
  static const std::string kEmpty = "value is undefined";
  DS_DCHECK(kind_ == Kind::kUndefined);
  return ptr_ ? *static_cast<const std::string*>(ptr_.get()) : kEmpty;
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return v.bool_value();
    case Kind::kInt: return v.int_value() != 0;
    case Kind::kFloat: return v.AsDouble() != 0.0;
    case Kind::kString: return !v.str().empty();
    case Kind::kList: return !v.list().empty();
    case Kind::kDict: return v.dict().size() != 0;
    default: return true;
  }
}

bool Equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.int_value() == b.int_value();
    return a.AsDouble() == b.AsDouble();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.str() == b.str();
    case Kind::kList: {
      if (a.is_tuple() != b.is_tuple() || a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!Equals(a.list()[i], b.list()[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [k, v] : a.dict().items()) {
        const Value* other = b.dict().Find(k);
        if (other == nullptr || !Equals(v, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

StatusOr<int> Compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) {
      return a.int_value() < b.int_value() ? -1 : a.int_value() > b.int_value() ? 1 : 0;
    }
    return a.AsDouble() < b.AsDouble() ? -1 : a.AsDouble() > b.AsDouble() ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.str().compare(b.str());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const List& x = a.list();
    const List& y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equals(x[i], y[i])) continue;
      return Compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  return InvalidArgumentError("'<' not supported between instances of '" + TypeName(a) +
                              "' and '" + TypeName(b) + "'");
}

std::string TypeName(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return v.is_tuple() ? "tuple" : "list";
    case Kind::kDict: return "dict";
    case Kind::kNamespace: return "Namespace";
    case Kind::kCallable: return "function";
    case Kind::kLoop: return "LoopContext";
  }
  return "object";
}

std::string ToPyStr(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return v.bool_value() ? "True" : "False";
    case Kind::kInt: return std::to_string(v.int_value());
    case Kind::kFloat: return FormatPyFloat(v.AsDouble());
    case Kind::kString: return v.str();
    default: return ReprImpl(v, 0);
  }
}

std::string ToPyRepr(const Value& v) { return ReprImpl(v, 0); }

Value FromJson(const nlohmann::json& j) { return FromJsonImpl(j); }
Value FromJson(const nlohmann::ordered_json& j) { return FromJsonImpl(j); }

StatusOr<std::string> ToJson(const Value& v, const JsonOptions& options) {
  JsonWriter writer{options, {}};
  DS_RETURN_IF_ERROR(writer.Write(v, 0));
  return std::move(writer.out);
}

}  // namespace ds::text::jinja
