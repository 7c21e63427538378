// The Jinja evaluator's internals, shared by the statement executor (evaluator.cc), expression
// evaluation (expressions.cc), filters (filters.cc), tests and globals (builtins.cc) and Python
// methods (methods.cc). Not part of the public API: see jinja.h.
// Thread safety: one Evaluator per render; the Program it walks is shared and read-only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace ds::text::jinja {

// A frame of template variables. Loop bodies, macros and other scoped blocks get a child scope;
// `if` bodies share their parent's.
struct Scope {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Scope> parent;
  bool is_root = false;

  const Value* Find(std::string_view name) const;
  void Set(const std::string& name, Value value);
};
using ScopePtr = std::shared_ptr<Scope>;

// Call arguments after evaluation, Python style.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Binds `args` to a Python signature with parameters `names` (all optional, all usable by
// keyword): one entry per name, empty when not passed. Errors like Python's TypeError.
StatusOr<std::vector<std::optional<Value>>> BindArgs(const Args& args,
                                                     std::initializer_list<std::string_view> names,
                                                     std::string_view function);

struct LoopState {
  List items;
  size_t index0 = 0;
  int depth0 = 0;
  const Node* node = nullptr;  // the for statement, for recursive loop(...) calls
  std::shared_ptr<Scope> scope;
  bool has_changed_value = false;
  Value changed_value;  // last argument of loop.changed()
};

struct Callable {
  enum class Type : uint8_t {
    kGlobal,       // range, dict, namespace, raise_exception, strftime_now
    kMethod,       // a Python method bound to `receiver`
    kMacro,        // a macro or a call block's caller
    kLoopCycle,    // loop.cycle
    kLoopChanged,  // loop.changed
    kLoopRecurse,  // loop(...) in a recursive for
  };
  Type type = Type::kGlobal;
  std::string name;
  Value receiver;
  const Node* node = nullptr;
  ScopePtr closure;
  std::shared_ptr<LoopState> loop;
};

Value MakeCallable(Callable::Type type, std::string name);

// Objects a render made that may still be alive when it ends. Most scopes end with their loop
// iteration: those gone are forgotten whenever the list doubles, so a long loop keeps it short.
template <typename T>
struct Tracked {
  std::vector<std::weak_ptr<T>> items;
  size_t after_sweep = 0;

  void Add(const std::shared_ptr<T>& object) {
    if (items.size() >= 2 * after_sweep + 64) {
      std::erase_if(items, [](const std::weak_ptr<T>& weak) { return weak.expired(); });
      after_sweep = items.size();
    }
    items.push_back(object);
  }
};

class Evaluator {
 public:
  // REQUIRES: `context` is a dict (the render variables).
  Evaluator(const Program& program, Value context);
  ~Evaluator();

  StatusOr<std::string> Render();

  StatusOr<Value> Eval(const Expr& e, const ScopePtr& scope);
  StatusOr<Value> Call(const Value& fn, const Args& args);
  // Jinja's environment.getattr (a.b) and getitem (a[b]) with the sandbox's method rules.
  StatusOr<Value> GetAttr(const Value& obj, const std::string& attr);
  StatusOr<Value> GetItem(const Value& obj, const Value& key);
  // Counts work so that hostile templates terminate: an error once the budget is spent.
  Status Step();

 private:
  enum class Flow : uint8_t { kNormal, kBreak, kContinue };

  Value Lookup(const std::string& name, const ScopePtr& scope) const;
  Status ExecBody(const Body& body, const ScopePtr& scope);
  Status Exec(const Node& node, const ScopePtr& scope);
  Status ExecFor(const Node& node, const ScopePtr& scope, const Value& iterable, int depth0);
  Status ExecSet(const Node& node, const ScopePtr& scope);
  Status ExecCallBlock(const Node& node, const ScopePtr& scope);
  StatusOr<std::string> Capture(const Body& body, const ScopePtr& scope);
  StatusOr<Value> ApplyBlockFilters(const Expr& chain, std::string text, const ScopePtr& scope);
  StatusOr<Value> CallMacro(const Callable& macro, const Args& args);
  StatusOr<Value> CallLoop(Callable::Type type, LoopState& loop, const Args& args);
  StatusOr<Args> EvalArgs(const CallArgs& call, const ScopePtr& scope);
  StatusOr<Value> EvalCompare(const Expr& e, const ScopePtr& scope);
  StatusOr<Value> EvalSubscript(const Expr& e, const ScopePtr& scope);
  Status Append(std::string_view text);
  ScopePtr ChildScope(const ScopePtr& parent);
  // Counts what an operator, call or filter built against a budget for the whole render:
  // bounding each string alone still let a loop of doublings take gigabytes.
  StatusOr<Value> Charge(StatusOr<Value> built);
  Status CountBuilt(size_t bytes);

  const Program& program_;
  Value context_;
  ScopePtr root_;
  std::string* out_ = nullptr;
  Flow flow_ = Flow::kNormal;
  const Value* block_value_ = nullptr;  // the body of the enclosing filter/set block
  int call_depth_ = 0;
  int64_t steps_ = 0;
  size_t built_bytes_ = 0;
  // What the destructor empties to free reference cycles.
  Tracked<Scope> scopes_;
  Tracked<Namespace> namespaces_;
};

// Python operators. `op` is one of + - * / // % ** ~.
StatusOr<Value> BinaryOp(std::string_view op, const Value& a, const Value& b);
// Python `item in container`.
StatusOr<bool> Contains(const Value& container, const Value& item);
// Python iteration: list items, dict keys, string code points; Undefined iterates as empty.
StatusOr<List> Iterate(const Value& v);
// Python slicing of a list, tuple or string.
StatusOr<Value> SliceValue(const Value& v, const Value& start, const Value& stop, const Value& step);
// Python str % args.
StatusOr<std::string> PercentFormat(const std::string& format, const Value& args);

StatusOr<Value> ApplyFilter(Evaluator& ev, std::string_view name, const Value& input,
                            const Args& args);
StatusOr<bool> ApplyTest(Evaluator& ev, std::string_view name, const Value& input,
                         const Args& args);
StatusOr<Value> CallGlobal(std::string_view name, const Args& args);
bool IsGlobal(std::string_view name);

// Python methods on str, dict and list, as the immutable sandbox allows them.
bool HasMethod(const Value& receiver, std::string_view name);
// True for list/dict methods that mutate: the sandbox turns them into an undefined value.
bool IsUnsafeMethod(const Value& receiver, std::string_view name);
StatusOr<Value> CallMethod(const Value& receiver, std::string_view name, const Args& args);

// Jinja's soft_str: strings (Markup kept) pass through, other values become str(value).
Value SoftStr(const Value& v);
// markupsafe.escape.
std::string HtmlEscape(std::string_view s);

}  // namespace ds::text::jinja
