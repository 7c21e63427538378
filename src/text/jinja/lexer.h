// Jinja2 lexer: splits template source into data and tag tokens, applying Jinja's whitespace rules
// (`-` and `+` modifiers, trim_blocks, lstrip_blocks, the dropped final newline, newline
// normalisation) exactly as jinja2/lexer.py does, so that the parser sees the same text runs.
// Comments are dropped and {% raw %} blocks become data here.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ds::text::jinja {

enum class TokenType : uint8_t {
  kData,
  kVariableBegin,
  kVariableEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type = TokenType::kEnd;
  std::string value;  // data text, name, operator, or decoded string literal
  int64_t int_value = 0;
  double float_value = 0.0;
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};

struct LexOptions {
  bool trim_blocks = true;    // drop the first newline after a block or comment tag
  bool lstrip_blocks = true;  // drop spaces and tabs before a block or comment tag on its line
};

// Errors name the line and column: "line 3, column 7: unexpected end of template".
StatusOr<std::vector<Token>> Tokenize(std::string_view source, const LexOptions& options);

}  // namespace ds::text::jinja
