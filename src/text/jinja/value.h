// The Jinja engine's runtime value: a Python object as Jinja templates see it (None, bool, int,
// float, str, list, tuple, dict, Jinja's Undefined, namespace(), callables and the loop object).
// Containers are shared and immutable once built (the HF sandbox forbids mutating them); only a
// namespace is mutable, by reference, exactly as in Jinja. Strings are UTF-8 bytes with Python
// code-point semantics supplied by pystr.h. A string may carry the Markup flag set by |safe.
// Thread safety: a Value and everything reachable from it belong to one render.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace ds::text::jinja {

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,  // list, or tuple when is_tuple()
  kDict,
  kNamespace,
  kCallable,
  kLoop,
};

class Value;
struct Callable;   // runtime.h
struct LoopState;  // runtime.h
using List = std::vector<Value>;

// An insertion-ordered mapping with Python equality on keys. Lookup is linear: chat template
// dicts (messages, tool schemas) are small.
class Dict {
 public:
  const Value* Find(const Value& key) const;
  const Value* Find(std::string_view key) const;
  void Set(Value key, Value value);
  const std::vector<std::pair<Value, Value>>& items() const { return items_; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<std::pair<Value, Value>> items_;
};

struct Namespace {
  Dict attrs;
};

class Value {
 public:
  Value() = default;  // Undefined with no hint.
  // `message` is what Jinja's UndefinedError would say when this value is misused.
  static Value Undefined(std::string message);
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double f);
  static Value Str(std::string s, bool markup = false);
  static Value MakeList(List items, bool tuple = false);
  static Value MakeDict(Dict dict);
  static Value MakeNamespace(Dict attrs);
  static Value MakeCallable(std::shared_ptr<Callable> fn);
  static Value MakeLoop(std::shared_ptr<LoopState> loop);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  // Python numbers: bool is an int subclass.
  bool is_number() const {
    return kind_ == Kind::kBool || kind_ == Kind::kInt || kind_ == Kind::kFloat;
  }
  bool is_integral() const { return kind_ == Kind::kBool || kind_ == Kind::kInt; }
  bool is_tuple() const { return kind_ == Kind::kList && flag_; }
  bool is_markup() const { return kind_ == Kind::kString && flag_; }

  // REQUIRES: the matching kind.
  bool bool_value() const { return scalar_.b; }
  // REQUIRES: is_integral().
  int64_t int_value() const { return kind_ == Kind::kBool ? scalar_.b : scalar_.i; }
  // REQUIRES: is_number().
  double AsDouble() const;
  const std::string& str() const;
  const List& list() const;
  const Dict& dict() const;
  Namespace& ns() const;
  const Callable& callable() const;
  LoopState& loop() const;
  std::shared_ptr<LoopState> shared_loop() const;
  std::shared_ptr<Namespace> shared_namespace() const;
  const std::string& undefined_message() const;
  // Identity, for Python `is` on mutable objects.
  const void* identity() const { return ptr_.get(); }

 private:
  Kind kind_ = Kind::kUndefined;
  bool flag_ = false;
  union {
    bool b;
    int64_t i;
    double f;
  } scalar_{};
  std::shared_ptr<void> ptr_;
};

// Python bool(value).
bool Truthy(const Value& v);
// Python ==.
bool Equals(const Value& a, const Value& b);
// Python ordering (<): -1, 0 or 1; an error for unorderable types, as Python's TypeError.
StatusOr<int> Compare(const Value& a, const Value& b);
// Python type(value).__name__ ("str", "int", "dict", "NoneType", ...).
std::string TypeName(const Value& v);
// Python str(value); Undefined prints as the empty string.
std::string ToPyStr(const Value& v);
// Python repr(value).
std::string ToPyRepr(const Value& v);

Value FromJson(const nlohmann::json& j);
Value FromJson(const nlohmann::ordered_json& j);

// json.dumps options as HF's tojson exposes them.
struct JsonOptions {
  std::optional<std::string> indent;  // none: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(value): an error for values JSON cannot hold (Undefined, callables, namespaces).
StatusOr<std::string> ToJson(const Value& v, const JsonOptions& options);

}  // namespace ds::text::jinja
