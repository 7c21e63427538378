// Jinja's compile-time scoping rule for top-level names, reproduced for exact behaviour.
// jinja2/idtracking.py decides per frame how each name starts out: a name whose first reference
// in the top-level frame is an assignment (not inside an `if` branch that some other branch lacks)
// starts as undefined instead of being resolved from the render context. That is visible when a
// loop body or macro reads it before the assignment has run: it is undefined even if the context
// passes a value. Loop, macro, call, filter, with and set-block bodies are separate frames.
// Thread safety: pure function.
#pragma once

#include <string>
#include <unordered_set>

#include "text/jinja/ast.h"

namespace ds::text::jinja {

std::unordered_set<std::string> RootUndefinedNames(const Body& root);

}  // namespace ds::text::jinja
