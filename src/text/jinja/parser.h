// Jinja2 parser: tokens to a Program, following jinja2/parser.py's grammar and precedence
// (filters and tests bind tighter than arithmetic, `**` is left-associative, comparisons chain).
// Supported statements: if/elif/else, for (with else, `if` filter, recursive, loop controls),
// set (plain, tuple, namespace attribute, block), macro, call, filter, with, raw (in the lexer)
// and HF's generation block. include/import/extends/block need a loader and are syntax errors.
// Thread safety: pure function; the returned Program is immutable.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace ds::text::jinja {

// Errors: InvalidArgument "template syntax error at line L, column C: <problem>".
StatusOr<std::shared_ptr<const Program>> ParseProgram(std::string_view source,
                                                      const LexOptions& options);

}  // namespace ds::text::jinja
