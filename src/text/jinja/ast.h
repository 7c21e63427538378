// Syntax tree of a parsed Jinja template. Built once by the parser, then read-only: renders on
// many threads may walk the same tree. Every node records its source line for error messages.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace ds::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct CallArgs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  ExprPtr star;       // *args
  ExprPtr star_star;  // **kwargs
};

struct Expr {
  enum class Kind : uint8_t {
    kConst,        // value
    kName,         // name
    kList,         // args
    kTuple,        // args
    kDict,         // args: key0, value0, key1, value1, ...
    kGetAttr,      // args[0].name
    kGetItem,      // args[0][args[1]]
    kSlice,        // args: start, stop, step (each may be null); only as a kGetItem index
    kCall,         // args[0](call)
    kFilter,       // args[0] | name(call); args[0] null means the enclosing block's body
    kTest,         // args[0] is [not] name(call)
    kNot,          // not args[0]
    kNeg,          // -args[0]
    kPos,          // +args[0]
    kBinary,       // args[0] name args[1], name in + - * / // % ** ~
    kAnd,          // args[0] and args[1]
    kOr,           // args[0] or args[1]
    kCompare,      // args[0] ops[0] args[1] ops[1] args[2] ... (chained like Python)
    kCondition,    // args[1] if args[0] else args[2]; args[2] may be null
  };
  Kind kind = Kind::kConst;
  int line = 0;
  Value value;
  std::string name;
  bool negated = false;  // kTest: `is not`
  std::vector<ExprPtr> args;
  std::vector<std::string> ops;
  CallArgs call;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required (Undefined when missing)
};

struct Node {
  enum class Kind : uint8_t {
    kData,         // text
    kOutput,       // {{ expr }}
    kIf,           // branches (an else branch has a null condition)
    kFor,          // for targets in expr [if filter] [recursive]: body {% else %} else_body
    kSet,          // set targets = expr; or set targets[0].attribute = expr
    kSetBlock,     // set targets[0] [| filters in expr]: body
    kMacro,        // macro name(params): body
    kCallBlock,    // call(params) expr: body, where the body is `caller`
    kFilterBlock,  // filter expr: body
    kWith,         // with params: body
    kScope,        // body rendered in place ({% generation %} from HF's extension)
    kBreak,
    kContinue,
  };
  Kind kind = Kind::kData;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::string> targets;
  bool unpack = false;    // the target list was written as a tuple
  std::string attribute;  // kSet on a namespace attribute
  bool recursive = false;
  std::string name;
  std::vector<MacroParam> params;
  bool uses_varargs = false;  // the macro body references `varargs`
  bool uses_kwargs = false;   // the macro body references `kwargs`
  bool uses_caller = false;   // the macro body references `caller`
  Body body;
  Body else_body;
};

struct Program {
  Body body;
  // Top-level names that Jinja binds as template locals starting out undefined (see scoping.h):
  // until their assignment runs they read as undefined, never from the render context.
  std::unordered_set<std::string> root_undefined;
};

}  // namespace ds::text::jinja
