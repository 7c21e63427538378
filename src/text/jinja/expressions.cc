// Expression evaluation and Python operator semantics.
#include <cmath>

#include "text/jinja/pystr.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

constexpr size_t kMaxRepeatBytes = size_t{64} << 20;

// Jinja's object_type_repr: "None", "dict object", "str object", ...
std::string ObjectTypeRepr(const Value& v) {
  if (v.is_none()) return "None";
  return TypeName(v) + " object";
}

Value MissingAttribute(const Value& obj, const std::string& attr) {
  return Value::Undefined("'" + ObjectTypeRepr(obj) + "' has no attribute '" + attr + "'");
}

Status TypeError(std::string_view op, const Value& a, const Value& b) {
  return InvalidArgumentError("unsupported operand type(s) for " + std::string(op) + ": '" +
                              TypeName(a) + "' and '" + TypeName(b) + "'");
}

StatusOr<Value> Repeat(const Value& seq, int64_t times) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(times, 0));
  if (seq.is_string()) {
    if (n != 0 && seq.str().size() > kMaxRepeatBytes / n) {
      return ResourceExhaustedError("repeated string too large");
    }
    std::string out;
    for (size_t i = 0; i < n; ++i) out += seq.str();
    return Value::Str(std::move(out));
  }
  if (n != 0 && seq.list().size() > kMaxRepeatBytes / 16 / n) {
    return ResourceExhaustedError("repeated list too large");
  }
  List out;
  for (size_t i = 0; i < n; ++i) out.insert(out.end(), seq.list().begin(), seq.list().end());
  return Value::MakeList(std::move(out), seq.is_tuple());
}

StatusOr<Value> IntPow(int64_t base, int64_t exp) {
  if (exp < 0) return Value::Float(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) {
      return OutOfRangeError("integer overflow in **");
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
      return OutOfRangeError("integer overflow in **");
    }
  }
  return Value::Int(result);
}

StatusOr<Value> IntArith(std::string_view op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "+" || op == "-" || op == "*") {
    const bool overflow = op == "+"   ? __builtin_add_overflow(a, b, &r)
                          : op == "-" ? __builtin_sub_overflow(a, b, &r)
                                      : __builtin_mul_overflow(a, b, &r);
    if (overflow) return OutOfRangeError("integer overflow in " + std::string(op));
    return Value::Int(r);
  }
  if (op == "/") {
    if (b == 0) return InvalidArgumentError("division by zero");
    return Value::Float(static_cast<double>(a) / static_cast<double>(b));
  }
  if (op == "**") return IntPow(a, b);
  if (b == 0) return InvalidArgumentError("integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) return OutOfRangeError("integer overflow in " + std::string(op));
  if (op == "//") {
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return Value::Int(q);
  }
  r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return Value::Int(r);
}

StatusOr<Value> FloatArith(std::string_view op, double a, double b) {
  if (op == "+") return Value::Float(a + b);
  if (op == "-") return Value::Float(a - b);
  if (op == "*") return Value::Float(a * b);
  if (op == "**") {
    if (a == 0.0 && b < 0) return InvalidArgumentError("0.0 cannot be raised to a negative power");
    if (a < 0 && b != std::floor(b)) return InvalidArgumentError("complex result of **");
    return Value::Float(std::pow(a, b));
  }
  if (b == 0.0) {
    return InvalidArgumentError(op == "/" ? "float division by zero" : "float modulo");
  }
  if (op == "/") return Value::Float(a / b);
  // CPython's float_divmod, so that // and % agree with Python bit for bit.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  if (op == "%") return Value::Float(mod);
  double floor_div = std::copysign(0.0, a / b);
  if (div != 0.0) {
    floor_div = std::floor(div);
    if (div - floor_div > 0.5) floor_div += 1.0;
  }
  return Value::Float(floor_div);
}

StatusOr<Value> Add(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) {
    const bool markup = a.is_markup() || b.is_markup();
    std::string left = a.is_markup() || !markup ? a.str() : HtmlEscape(a.str());
    std::string right = b.is_markup() || !markup ? b.str() : HtmlEscape(b.str());
    return Value::Str(left + right, markup);
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    List out = a.list();
    out.insert(out.end(), b.list().begin(), b.list().end());
    return Value::MakeList(std::move(out), a.is_tuple());
  }
  if (a.is_string() || a.is_list()) {
    return InvalidArgumentError("can only concatenate " + TypeName(a) + " (not \"" + TypeName(b) +
                                "\") to " + TypeName(a));
  }
  return TypeError("+", a, b);
}

}  // namespace

StatusOr<Value> BinaryOp(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value::Str(ToPyStr(a) + ToPyStr(b));
  if (a.is_undefined()) return InvalidArgumentError(a.undefined_message());
  if (b.is_undefined()) return InvalidArgumentError(b.undefined_message());
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return IntArith(op, a.int_value(), b.int_value());
    return FloatArith(op, a.AsDouble(), b.AsDouble());
  }
  if (op == "+") return Add(a, b);
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && b.is_integral()) return Repeat(a, b.int_value());
    if ((b.is_string() || b.is_list()) && a.is_integral()) return Repeat(b, a.int_value());
  }
  if (op == "%" && a.is_string()) {
    DS_ASSIGN_OR_RETURN(std::string s, PercentFormat(a.str(), b));
    return Value::Str(std::move(s));
  }
  return TypeError(op, a, b);
}

StatusOr<bool> Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::kUndefined: return false;
    case Kind::kString:
      if (!item.is_string()) {
        return InvalidArgumentError("'in <string>' requires string as left operand, not " +
                                    TypeName(item));
      }
      return container.str().find(item.str()) != std::string::npos;
    case Kind::kList:
      for (const Value& v : container.list()) {
        if (Equals(v, item)) return true;
      }
      return false;
    case Kind::kDict: return container.dict().Find(item) != nullptr;
    default:
      return InvalidArgumentError("argument of type '" + TypeName(container) +
                                  "' is not iterable");
  }
}

StatusOr<List> Iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return List();
    case Kind::kList: return v.list();
    case Kind::kDict: {
      List keys;
      for (const auto& [k, unused] : v.dict().items()) keys.push_back(k);
      return keys;
    }
    case Kind::kString: {
      List chars;
      for (char32_t c : DecodeUtf8(v.str())) {
        std::string s;
        AppendUtf8(s, c);
        chars.push_back(Value::Str(std::move(s)));
      }
      return chars;
    }
    default: return InvalidArgumentError("'" + TypeName(v) + "' object is not iterable");
  }
}

StatusOr<Value> SliceValue(const Value& v, const Value& start_v, const Value& stop_v,
                           const Value& step_v) {
  for (const Value* part : {&start_v, &stop_v, &step_v}) {
    if (!part->is_none() && !part->is_integral()) {
      return Value::Undefined("slice indices must be integers or None");
    }
  }
  const int64_t step = step_v.is_none() ? 1 : step_v.int_value();
  if (step == 0) return InvalidArgumentError("slice step cannot be zero");
  std::u32string cps;
  if (v.is_string()) cps = DecodeUtf8(v.str());
  const int64_t len = static_cast<int64_t>(v.is_string() ? cps.size() : v.list().size());
  const int64_t lower = step > 0 ? 0 : -1;
  const int64_t upper = step > 0 ? len : len - 1;
  auto clamp = [&](const Value& x, int64_t fallback) {
    if (x.is_none()) return fallback;
    int64_t i = x.int_value();
    if (i < 0) i += len;
    return std::clamp(i, lower, upper);
  };
  const int64_t start = clamp(start_v, step > 0 ? lower : upper);
  const int64_t stop = clamp(stop_v, step > 0 ? upper : lower);
  std::vector<int64_t> indices;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) indices.push_back(i);
  if (v.is_string()) {
    std::u32string out;
    for (int64_t i : indices) out += cps[static_cast<size_t>(i)];
    return Value::Str(EncodeUtf8(out));
  }
  List out;
  for (int64_t i : indices) out.push_back(v.list()[static_cast<size_t>(i)]);
  return Value::MakeList(std::move(out), v.is_tuple());
}

StatusOr<Value> Evaluator::GetAttr(const Value& obj, const std::string& attr) {
  switch (obj.kind()) {
    case Kind::kUndefined: return InvalidArgumentError(obj.undefined_message());
    case Kind::kNamespace:
      if (const Value* v = obj.ns().attrs.Find(std::string_view(attr))) return *v;
      return MissingAttribute(obj, attr);
    case Kind::kLoop: {
      LoopState& loop = obj.loop();
      const auto n = static_cast<int64_t>(loop.items.size());
      const auto i = static_cast<int64_t>(loop.index0);
      if (attr == "index0") return Value::Int(i);
      if (attr == "index") return Value::Int(i + 1);
      if (attr == "revindex0") return Value::Int(n - i - 1);
      if (attr == "revindex") return Value::Int(n - i);
      if (attr == "first") return Value::Bool(i == 0);
      if (attr == "last") return Value::Bool(i == n - 1);
      if (attr == "length") return Value::Int(n);
      if (attr == "depth0") return Value::Int(loop.depth0);
      if (attr == "depth") return Value::Int(loop.depth0 + 1);
      if (attr == "previtem") {
        return i > 0 ? loop.items[i - 1] : Value::Undefined("there is no previous item");
      }
      if (attr == "nextitem") {
        return i + 1 < n ? loop.items[i + 1] : Value::Undefined("there is no next item");
      }
      if (attr == "cycle" || attr == "changed") {
        auto fn = std::make_shared<Callable>();
        fn->type = attr == "cycle" ? Callable::Type::kLoopCycle : Callable::Type::kLoopChanged;
        fn->name = "loop." + attr;
        fn->loop = obj.shared_loop();
        return Value::MakeCallable(std::move(fn));
      }
      return MissingAttribute(obj, attr);
    }
    case Kind::kString:
    case Kind::kList:
    case Kind::kDict:
      if (HasMethod(obj, attr)) {
        auto fn = std::make_shared<Callable>();
        fn->type = Callable::Type::kMethod;
        fn->name = attr;
        fn->receiver = obj;
        return Value::MakeCallable(std::move(fn));
      }
      if (IsUnsafeMethod(obj, attr)) {
        return Value::Undefined("access to attribute '" + attr + "' of '" + TypeName(obj) +
                                "' object is unsafe.");
      }
      if (obj.is_dict()) {
        if (const Value* v = obj.dict().Find(std::string_view(attr))) return *v;
      }
      return MissingAttribute(obj, attr);
    default: return MissingAttribute(obj, attr);
  }
}

StatusOr<Value> Evaluator::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return InvalidArgumentError(obj.undefined_message());
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().Find(key)) return *v;
  } else if ((obj.is_list() || obj.is_string()) && key.is_integral()) {
    int64_t i = key.int_value();
    if (obj.is_list()) {
      const auto n = static_cast<int64_t>(obj.list().size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return obj.list()[static_cast<size_t>(i)];
    } else {
      const std::u32string cps = DecodeUtf8(obj.str());
      const auto n = static_cast<int64_t>(cps.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return Value::Str(EncodeUtf8(cps.substr(static_cast<size_t>(i), 1)));
    }
  }
  if (key.is_string()) return GetAttr(obj, key.str());
  return Value::Undefined("'" + ObjectTypeRepr(obj) + "' has no element " + ToPyRepr(key));
}

StatusOr<Args> Evaluator::EvalArgs(const CallArgs& call, const ScopePtr& scope) {
  Args args;
  for (const ExprPtr& e : call.positional) {
    DS_ASSIGN_OR_RETURN(Value v, Eval(*e, scope));
    args.positional.push_back(std::move(v));
  }
  if (call.star) {
    DS_ASSIGN_OR_RETURN(Value v, Eval(*call.star, scope));
    DS_ASSIGN_OR_RETURN(List extra, Iterate(v));
    args.positional.insert(args.positional.end(), extra.begin(), extra.end());
  }
  for (const auto& [key, e] : call.keyword) {
    DS_ASSIGN_OR_RETURN(Value v, Eval(*e, scope));
    args.keyword.emplace_back(key, std::move(v));
  }
  if (call.star_star) {
    DS_ASSIGN_OR_RETURN(Value v, Eval(*call.star_star, scope));
    if (!v.is_dict()) return InvalidArgumentError("argument after ** must be a mapping");
    for (const auto& [k, item] : v.dict().items()) {
      if (!k.is_string()) return InvalidArgumentError("keywords must be strings");
      args.keyword.emplace_back(k.str(), item);
    }
  }
  return args;
}

StatusOr<Value> Evaluator::EvalCompare(const Expr& e, const ScopePtr& scope) {
  DS_ASSIGN_OR_RETURN(Value left, Eval(*e.args[0], scope));
  for (size_t i = 0; i < e.ops.size(); ++i) {
    DS_ASSIGN_OR_RETURN(Value right, Eval(*e.args[i + 1], scope));
    const std::string& op = e.ops[i];
    bool result = false;
    if (op == "==" || op == "!=") {
      result = Equals(left, right) == (op == "==");
    } else if (op == "in" || op == "notin") {
      DS_ASSIGN_OR_RETURN(bool found, Contains(right, left));
      result = found == (op == "in");
    } else {
      DS_ASSIGN_OR_RETURN(int c, Compare(left, right));
      result = op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
    }
    if (!result) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

StatusOr<Value> Evaluator::EvalSubscript(const Expr& e, const ScopePtr& scope) {
  DS_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0], scope));
  const Expr& index = *e.args[1];
  if (index.kind != Expr::Kind::kSlice) {
    DS_ASSIGN_OR_RETURN(Value key, Eval(index, scope));
    return GetItem(obj, key);
  }
  Value parts[3] = {Value::None(), Value::None(), Value::None()};
  for (int i = 0; i < 3; ++i) {
    if (index.args[i]) {
      DS_ASSIGN_OR_RETURN(parts[i], Eval(*index.args[i], scope));
    }
  }
  if (obj.is_undefined()) return InvalidArgumentError(obj.undefined_message());
  if (!obj.is_list() && !obj.is_string()) {
    return Value::Undefined("'" + ObjectTypeRepr(obj) + "' is not subscriptable");
  }
  return SliceValue(obj, parts[0], parts[1], parts[2]);
}

StatusOr<Value> Evaluator::Eval(const Expr& e, const ScopePtr& scope) {
  DS_RETURN_IF_ERROR(Step());
  switch (e.kind) {
    case Expr::Kind::kConst: return e.value;
    case Expr::Kind::kName: return Lookup(e.name, scope);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      List items;
      for (const ExprPtr& a : e.args) {
        DS_ASSIGN_OR_RETURN(Value v, Eval(*a, scope));
        items.push_back(std::move(v));
      }
      return Value::MakeList(std::move(items), e.kind == Expr::Kind::kTuple);
    }
    case Expr::Kind::kDict: {
      Dict dict;
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        DS_ASSIGN_OR_RETURN(Value k, Eval(*e.args[i], scope));
        DS_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i + 1], scope));
        if (k.is_list() && !k.is_tuple()) return InvalidArgumentError("unhashable type: 'list'");
        dict.Set(std::move(k), std::move(v));
      }
      return Value::MakeDict(std::move(dict));
    }
    case Expr::Kind::kGetAttr: {
      DS_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0], scope));
      return GetAttr(obj, e.name);
    }
    case Expr::Kind::kGetItem: return EvalSubscript(e, scope);
    case Expr::Kind::kSlice: return InvalidArgumentError("slice outside of a subscript");
    case Expr::Kind::kCall: {
      DS_ASSIGN_OR_RETURN(Value fn, Eval(*e.args[0], scope));
      DS_ASSIGN_OR_RETURN(Args args, EvalArgs(e.call, scope));
      return Charge(Call(fn, args));
    }
    case Expr::Kind::kFilter: {
      Value input = block_value_ != nullptr ? *block_value_ : Value();
      if (e.args[0]) {
        DS_ASSIGN_OR_RETURN(input, Eval(*e.args[0], scope));
      }
      DS_ASSIGN_OR_RETURN(Args args, EvalArgs(e.call, scope));
      return Charge(ApplyFilter(*this, e.name, input, args));
    }
    case Expr::Kind::kTest: {
      DS_ASSIGN_OR_RETURN(Value input, Eval(*e.args[0], scope));
      DS_ASSIGN_OR_RETURN(Args args, EvalArgs(e.call, scope));
      DS_ASSIGN_OR_RETURN(bool result, ApplyTest(*this, e.name, input, args));
      return Value::Bool(result != e.negated);
    }
    case Expr::Kind::kNot: {
      DS_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0], scope));
      return Value::Bool(!Truthy(v));
    }
    case Expr::Kind::kNeg:
    case Expr::Kind::kPos: {
      DS_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0], scope));
      if (v.is_undefined()) return InvalidArgumentError(v.undefined_message());
      if (!v.is_number()) {
        return InvalidArgumentError("bad operand type for unary " +
                                    std::string(e.kind == Expr::Kind::kNeg ? "-" : "+") + ": '" +
                                    TypeName(v) + "'");
      }
      if (e.kind == Expr::Kind::kPos) return v.is_integral() ? Value::Int(v.int_value()) : v;
      if (v.is_integral()) return IntArith("-", 0, v.int_value());
      return Value::Float(-v.AsDouble());
    }
    case Expr::Kind::kBinary: {
      DS_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0], scope));
      DS_ASSIGN_OR_RETURN(Value b, Eval(*e.args[1], scope));
      return Charge(BinaryOp(e.name, a, b));
    }
    case Expr::Kind::kAnd:
    case Expr::Kind::kOr: {
      DS_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0], scope));
      if (Truthy(a) == (e.kind == Expr::Kind::kOr)) return a;
      return Eval(*e.args[1], scope);
    }
    case Expr::Kind::kCompare: return EvalCompare(e, scope);
    case Expr::Kind::kCondition: {
      DS_ASSIGN_OR_RETURN(Value c, Eval(*e.args[0], scope));
      if (Truthy(c)) return Eval(*e.args[1], scope);
      if (e.args[2]) return Eval(*e.args[2], scope);
      return Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return InternalError("unknown expression kind");
}

}  // namespace ds::text::jinja
