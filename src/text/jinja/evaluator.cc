// Statement execution, scoping, macros and loops.
#include <algorithm>

#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

// Bounds that make every render terminate with bounded memory; real chat templates stay far
// below them (a 1M-token conversation renders to a few MiB in a few thousand steps per message).
constexpr int64_t kMaxSteps = 20'000'000;
constexpr size_t kMaxOutputBytes = size_t{256} << 20;
constexpr int kMaxCallDepth = 200;
// Everything the render's operators, calls, filters and output build, added up: bounds the memory
// a template can take, whatever it keeps.
constexpr size_t kMaxBuiltBytes = size_t{256} << 20;

Status Annotate(const Status& s, int line) {
  if (s.ok() || s.message().rfind("template ", 0) == 0) return s;
  return Status(s.code(), "template error at line " + std::to_string(line) + ": " + s.message());
}

}  // namespace

const Value* Scope::Find(std::string_view name) const {
  for (const auto& [k, v] : vars) {
    if (k == name) return &v;
  }
  return nullptr;
}

void Scope::Set(const std::string& name, Value value) {
  for (auto& [k, v] : vars) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  vars.emplace_back(name, std::move(value));
}

StatusOr<std::vector<std::optional<Value>>> BindArgs(const Args& args,
                                                     std::initializer_list<std::string_view> names,
                                                     std::string_view function) {
  std::vector<std::optional<Value>> bound(names.size());
  if (args.positional.size() > names.size()) {
    return InvalidArgumentError(std::string(function) + "() takes at most " +
                                std::to_string(names.size()) + " arguments (" +
                                std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
  for (const auto& [key, value] : args.keyword) {
    auto it = std::find(names.begin(), names.end(), key);
    if (it == names.end()) {
      return InvalidArgumentError(std::string(function) + "() got an unexpected keyword argument '" +
                                  key + "'");
    }
    const size_t index = static_cast<size_t>(it - names.begin());
    if (bound[index]) {
      return InvalidArgumentError(std::string(function) + "() got multiple values for argument '" +
                                  key + "'");
    }
    bound[index] = value;
  }
  return bound;
}

Value MakeCallable(Callable::Type type, std::string name) {
  auto fn = std::make_shared<Callable>();
  fn->type = type;
  fn->name = std::move(name);
  return Value::MakeCallable(std::move(fn));
}

Evaluator::Evaluator(const Program& program, Value context)
    : program_(program), context_(std::move(context)) {}

Evaluator::~Evaluator() {
  // A macro lives in the scope it closes over, a loop's scope holds the loop, and a namespace
  // may hold itself: emptying what is still alive frees every such cycle.
  for (const std::weak_ptr<Scope>& weak : scopes_.items) {
    if (ScopePtr scope = weak.lock()) {
      scope->vars.clear();
      scope->parent.reset();
    }
  }
  for (const std::weak_ptr<Namespace>& weak : namespaces_.items) {
    if (std::shared_ptr<Namespace> ns = weak.lock()) ns->attrs = Dict();
  }
}

ScopePtr Evaluator::ChildScope(const ScopePtr& parent) {
  auto scope = std::make_shared<Scope>();
  scope->parent = parent;
  scopes_.Add(scope);
  return scope;
}

StatusOr<std::string> Evaluator::Render() {
  root_ = std::make_shared<Scope>();
  root_->is_root = true;
  scopes_.Add(root_);
  std::string out;
  out_ = &out;
  DS_RETURN_IF_ERROR(ExecBody(program_.body, root_));
  out_ = nullptr;
  return out;
}

Status Evaluator::Step() {
  if (++steps_ > kMaxSteps) {
    return ResourceExhaustedError("template error: evaluation step budget exhausted");
  }
  return OkStatus();
}

Status Evaluator::CountBuilt(size_t bytes) {
  built_bytes_ += bytes;
  if (built_bytes_ <= kMaxBuiltBytes) return OkStatus();
  return ResourceExhaustedError("template error: the template built more than " +
                                std::to_string(kMaxBuiltBytes) + " bytes of values");
}

StatusOr<Value> Evaluator::Charge(StatusOr<Value> built) {
  if (!built.ok()) return built;
  if (built->is_string()) DS_RETURN_IF_ERROR(CountBuilt(built->str().size()));
  if (built->is_list()) DS_RETURN_IF_ERROR(CountBuilt(built->list().size() * sizeof(Value)));
  return built;
}

Status Evaluator::Append(std::string_view text) {
  DS_RETURN_IF_ERROR(CountBuilt(text.size()));
  if (out_->size() + text.size() > kMaxOutputBytes) {
    return ResourceExhaustedError("template error: output exceeds " +
                                  std::to_string(kMaxOutputBytes) + " bytes");
  }
  out_->append(text);
  return OkStatus();
}

Value Evaluator::Lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s != nullptr; s = s->parent.get()) {
    if (const Value* v = s->Find(name)) return *v;
  }
  if (program_.root_undefined.count(name) == 0) {
    if (const Value* v = context_.dict().Find(name)) return *v;
    if (IsGlobal(name)) return MakeCallable(Callable::Type::kGlobal, name);
  }
  return Value::Undefined("'" + name + "' is undefined");
}

Status Evaluator::ExecBody(const Body& body, const ScopePtr& scope) {
  for (const NodePtr& node : body) {
    DS_RETURN_IF_ERROR(Annotate(Exec(*node, scope), node->line));
    if (flow_ != Flow::kNormal) break;
  }
  return OkStatus();
}

StatusOr<std::string> Evaluator::Capture(const Body& body, const ScopePtr& scope) {
  std::string text;
  std::string* saved = out_;
  out_ = &text;
  Status s = ExecBody(body, scope);
  out_ = saved;
  DS_RETURN_IF_ERROR(s);
  return text;
}

StatusOr<Value> Evaluator::ApplyBlockFilters(const Expr& chain, std::string text,
                                             const ScopePtr& scope) {
  const Value body = Value::Str(std::move(text));
  const Value* saved = block_value_;
  block_value_ = &body;
  StatusOr<Value> result = Eval(chain, scope);
  block_value_ = saved;
  return result;
}

Status Evaluator::Exec(const Node& node, const ScopePtr& scope) {
  DS_RETURN_IF_ERROR(Step());
  switch (node.kind) {
    case Node::Kind::kData: return Append(node.text);
    case Node::Kind::kOutput: {
      DS_ASSIGN_OR_RETURN(Value v, Eval(*node.expr, scope));
      return Append(ToPyStr(v));
    }
    case Node::Kind::kIf:
      for (const auto& [cond, body] : node.branches) {
        bool take = cond == nullptr;
        if (!take) {
          DS_ASSIGN_OR_RETURN(Value c, Eval(*cond, scope));
          take = Truthy(c);
        }
        if (take) return ExecBody(body, scope);
      }
      return OkStatus();
    case Node::Kind::kFor: {
      DS_ASSIGN_OR_RETURN(Value iterable, Eval(*node.expr, scope));
      return ExecFor(node, scope, iterable, 0);
    }
    case Node::Kind::kSet: return ExecSet(node, scope);
    case Node::Kind::kSetBlock: {
      DS_ASSIGN_OR_RETURN(std::string text, Capture(node.body, ChildScope(scope)));
      Value v = Value::Str(text);
      if (node.expr) {
        DS_ASSIGN_OR_RETURN(v, ApplyBlockFilters(*node.expr, std::move(text), scope));
      }
      scope->Set(node.targets[0], std::move(v));
      return OkStatus();
    }
    case Node::Kind::kMacro: {
      auto fn = std::make_shared<Callable>();
      fn->type = Callable::Type::kMacro;
      fn->name = node.name;
      fn->node = &node;
      fn->closure = scope;
      scope->Set(node.name, Value::MakeCallable(std::move(fn)));
      return OkStatus();
    }
    case Node::Kind::kCallBlock: return ExecCallBlock(node, scope);
    case Node::Kind::kFilterBlock: {
      DS_ASSIGN_OR_RETURN(std::string text, Capture(node.body, ChildScope(scope)));
      DS_ASSIGN_OR_RETURN(Value v, ApplyBlockFilters(*node.expr, std::move(text), scope));
      return Append(ToPyStr(v));
    }
    case Node::Kind::kWith: {
      ScopePtr inner = ChildScope(scope);
      for (const MacroParam& p : node.params) {
        DS_ASSIGN_OR_RETURN(Value v, Eval(*p.default_value, scope));
        inner->Set(p.name, std::move(v));
      }
      return ExecBody(node.body, inner);
    }
    case Node::Kind::kScope: return ExecBody(node.body, ChildScope(scope));
    case Node::Kind::kBreak: flow_ = Flow::kBreak; return OkStatus();
    case Node::Kind::kContinue: flow_ = Flow::kContinue; return OkStatus();
  }
  return OkStatus();
}

namespace {

Status BindTargets(const Node& node, Scope& scope, const Value& item) {
  if (!node.unpack) {
    scope.Set(node.targets[0], item);
    return OkStatus();
  }
  DS_ASSIGN_OR_RETURN(List parts, Iterate(item));
  if (parts.size() != node.targets.size()) {
    const bool few = parts.size() < node.targets.size();
    return InvalidArgumentError(
        std::string(few ? "not enough" : "too many") + " values to unpack (expected " +
        std::to_string(node.targets.size()) +
        (few ? ", got " + std::to_string(parts.size()) + ")" : ")"));
  }
  for (size_t i = 0; i < parts.size(); ++i) scope.Set(node.targets[i], parts[i]);
  return OkStatus();
}

}  // namespace

Status Evaluator::ExecFor(const Node& node, const ScopePtr& scope, const Value& iterable,
                          int depth0) {
  DS_ASSIGN_OR_RETURN(List items, Iterate(iterable));
  if (node.filter) {
    List kept;
    for (Value& item : items) {
      DS_RETURN_IF_ERROR(Step());  // an empty body costs nothing else, and loops may nest
      ScopePtr tmp = ChildScope(scope);
      DS_RETURN_IF_ERROR(BindTargets(node, *tmp, item));
      DS_ASSIGN_OR_RETURN(Value keep, Eval(*node.filter, tmp));
      if (Truthy(keep)) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return ExecBody(node.else_body, ChildScope(scope));
  auto loop = std::make_shared<LoopState>();
  loop->items = std::move(items);
  loop->depth0 = depth0;
  loop->node = &node;
  loop->scope = scope;
  const Value loop_value = Value::MakeLoop(loop);
  for (size_t i = 0; i < loop->items.size(); ++i) {
    DS_RETURN_IF_ERROR(Step());
    loop->index0 = i;
    ScopePtr iteration = ChildScope(scope);
    DS_RETURN_IF_ERROR(BindTargets(node, *iteration, loop->items[i]));
    iteration->Set("loop", loop_value);
    DS_RETURN_IF_ERROR(ExecBody(node.body, iteration));
    const Flow flow = flow_;
    flow_ = Flow::kNormal;
    if (flow == Flow::kBreak) break;
  }
  return OkStatus();
}

Status Evaluator::ExecSet(const Node& node, const ScopePtr& scope) {
  DS_ASSIGN_OR_RETURN(Value value, Eval(*node.expr, scope));
  if (!node.attribute.empty()) {
    const Value ns = Lookup(node.targets[0], scope);
    if (ns.kind() != Kind::kNamespace) {
      return InvalidArgumentError("cannot assign attribute on non-namespace object");
    }
    ns.ns().attrs.Set(Value::Str(node.attribute), std::move(value));
    return OkStatus();
  }
  return BindTargets(node, *scope, value);
}

Status Evaluator::ExecCallBlock(const Node& node, const ScopePtr& scope) {
  const Expr& call = *node.expr;
  DS_ASSIGN_OR_RETURN(Value fn, Eval(*call.args[0], scope));
  DS_ASSIGN_OR_RETURN(Args args, EvalArgs(call.call, scope));
  auto caller = std::make_shared<Callable>();
  caller->type = Callable::Type::kMacro;
  caller->name = "caller";
  caller->node = &node;
  caller->closure = scope;
  args.keyword.emplace_back("caller", Value::MakeCallable(std::move(caller)));
  DS_ASSIGN_OR_RETURN(Value result, Call(fn, args));
  return Append(ToPyStr(result));
}

StatusOr<Value> Evaluator::Call(const Value& fn, const Args& args) {
  DS_RETURN_IF_ERROR(Step());
  if (fn.is_undefined()) return InvalidArgumentError(fn.undefined_message());
  if (fn.kind() == Kind::kLoop) {
    if (!fn.loop().node->recursive) {
      return InvalidArgumentError("Tried to call non recursive loop.  Maybe you forgot the "
                                  "'recursive' modifier.");
    }
    return CallLoop(Callable::Type::kLoopRecurse, fn.loop(), args);
  }
  if (fn.kind() != Kind::kCallable) {
    return InvalidArgumentError("'" + TypeName(fn) + "' object is not callable");
  }
  const Callable& c = fn.callable();
  switch (c.type) {
    case Callable::Type::kGlobal: {
      DS_ASSIGN_OR_RETURN(Value result, CallGlobal(c.name, args));
      if (result.kind() == Kind::kNamespace) namespaces_.Add(result.shared_namespace());
      return result;
    }
    case Callable::Type::kMethod: return CallMethod(c.receiver, c.name, args);
    case Callable::Type::kMacro: return CallMacro(c, args);
    default: return CallLoop(c.type, *c.loop, args);
  }
}

StatusOr<Value> Evaluator::CallLoop(Callable::Type type, LoopState& loop, const Args& args) {
  if (type == Callable::Type::kLoopCycle) {
    if (args.positional.empty()) return InvalidArgumentError("no items for cycling given");
    return args.positional[loop.index0 % args.positional.size()];
  }
  if (type == Callable::Type::kLoopChanged) {
    const Value v = args.positional.size() == 1 ? args.positional[0]
                                                : Value::MakeList(args.positional, true);
    if (loop.has_changed_value && Equals(v, loop.changed_value)) return Value::Bool(false);
    loop.has_changed_value = true;
    loop.changed_value = v;
    return Value::Bool(true);
  }
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    return InvalidArgumentError("loop() takes exactly one argument");
  }
  if (++call_depth_ > kMaxCallDepth) return InvalidArgumentError("maximum recursion depth exceeded");
  std::string text;
  std::string* saved = out_;
  out_ = &text;
  Status s = ExecFor(*loop.node, loop.scope, args.positional[0], loop.depth0 + 1);
  out_ = saved;
  --call_depth_;
  DS_RETURN_IF_ERROR(s);
  return Value::Str(std::move(text));
}

StatusOr<Value> Evaluator::CallMacro(const Callable& macro, const Args& args) {
  const Node& node = *macro.node;
  const std::string prefix = "macro '" + macro.name + "'";
  const size_t num_params = node.params.size();
  if (args.positional.size() > num_params && !node.uses_varargs) {
    return InvalidArgumentError(prefix + " takes not more than " + std::to_string(num_params) +
                                " argument(s)");
  }
  ScopePtr scope = ChildScope(macro.closure);
  std::vector<bool> bound(num_params, false);
  for (size_t i = 0; i < std::min(num_params, args.positional.size()); ++i) {
    scope->Set(node.params[i].name, args.positional[i]);
    bound[i] = true;
  }
  Dict extra;
  Value caller = Value::Undefined("No caller defined");
  for (const auto& [key, value] : args.keyword) {
    auto it = std::find_if(node.params.begin(), node.params.end(),
                           [&](const MacroParam& p) { return p.name == key; });
    if (it != node.params.end()) {
      const size_t j = static_cast<size_t>(it - node.params.begin());
      if (bound[j]) return InvalidArgumentError(prefix + " got multiple values for argument '" +
                                                key + "'");
      scope->Set(key, value);
      bound[j] = true;
    } else if (key == "caller" && node.uses_caller) {
      caller = value;
    } else if (node.uses_kwargs) {
      extra.Set(Value::Str(key), value);
    } else {
      return InvalidArgumentError(prefix + " takes no keyword argument '" + key + "'");
    }
  }
  for (size_t j = 0; j < num_params; ++j) {
    if (bound[j]) continue;
    const MacroParam& p = node.params[j];
    if (p.default_value) {
      DS_ASSIGN_OR_RETURN(Value v, Eval(*p.default_value, scope));
      scope->Set(p.name, std::move(v));
    } else {
      scope->Set(p.name, Value::Undefined("parameter '" + p.name + "' was not provided"));
    }
  }
  if (node.uses_varargs) {
    List rest;
    for (size_t i = num_params; i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    scope->Set("varargs", Value::MakeList(std::move(rest), true));
  }
  if (node.uses_kwargs) scope->Set("kwargs", Value::MakeDict(std::move(extra)));
  if (node.uses_caller) scope->Set("caller", caller);
  if (++call_depth_ > kMaxCallDepth) return InvalidArgumentError("maximum recursion depth exceeded");
  const Flow saved_flow = flow_;
  StatusOr<std::string> text = Capture(node.body, scope);
  flow_ = saved_flow;
  --call_depth_;
  if (!text.ok()) return text.status();
  return Value::Str(std::move(text).value());
}

}  // namespace ds::text::jinja
