#include "text/jinja/parser.h"

#include "text/jinja/scoping.h"

#include <initializer_list>

namespace ds::text::jinja {
namespace {

// Deeper nesting than this is rejected so that hostile templates cannot overflow the stack.
constexpr int kMaxNesting = 200;

using Names = std::initializer_list<std::string_view>;

bool Contains(Names names, std::string_view v) {
  for (std::string_view n : names) {
    if (n == v) return true;
  }
  return false;
}

std::string Describe(const Token& t) {
  switch (t.type) {
    case TokenType::kVariableEnd: return "end of print statement";
    case TokenType::kBlockEnd: return "end of statement block";
    case TokenType::kEnd: return "end of template";
    case TokenType::kString: return "string";
    case TokenType::kInteger: return "integer";
    case TokenType::kFloat: return "float";
    case TokenType::kData: return "template data";
    case TokenType::kVariableBegin: return "begin of print statement";
    case TokenType::kBlockBegin: return "begin of statement block";
    default: return "'" + t.value + "'";
  }
}

ExprPtr MakeExpr(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

ExprPtr MakeUnaryOp(Expr::Kind kind, ExprPtr a, int line) {
  ExprPtr e = MakeExpr(kind, line);
  e->args.push_back(std::move(a));
  return e;
}

ExprPtr MakeBinary(Expr::Kind kind, std::string op, ExprPtr a, ExprPtr b, int line) {
  ExprPtr e = MakeExpr(kind, line);
  e->name = std::move(op);
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  StatusOr<std::shared_ptr<const Program>> Run() {
    auto program = std::make_shared<Program>();
    std::string stop;
    DS_RETURN_IF_ERROR(ParseBody({}, &program->body, &stop));
    program->root_undefined = RootUndefinedNames(program->body);
    return std::shared_ptr<const Program>(std::move(program));
  }

 private:
  // Counts recursion depth for the lifetime of one parse function call.
  class DepthGuard {
   public:
    explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
    ~DepthGuard() { --*depth_; }
    bool too_deep() const { return *depth_ > kMaxNesting; }

   private:
    int* depth_;
  };

  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  void Advance() {
    if (Cur().type != TokenType::kEnd) ++pos_;
  }
  bool IsName(std::string_view v) const {
    return Cur().type == TokenType::kName && Cur().value == v;
  }
  bool IsOp(std::string_view v) const {
    return Cur().type == TokenType::kOperator && Cur().value == v;
  }
  bool SkipName(std::string_view v) {
    if (!IsName(v)) return false;
    Advance();
    return true;
  }
  bool SkipOp(std::string_view v) {
    if (!IsOp(v)) return false;
    Advance();
    return true;
  }

  Status Error(const Token& t, const std::string& problem) const {
    return InvalidArgumentError("template syntax error at line " + std::to_string(t.line) +
                                ", column " + std::to_string(t.column) + ": " + problem);
  }
  Status Unexpected(const std::string& expected) const {
    return Error(Cur(), "expected " + expected + ", got " + Describe(Cur()));
  }
  Status ExpectOp(std::string_view v) {
    if (!SkipOp(v)) return Unexpected("'" + std::string(v) + "'");
    return OkStatus();
  }
  Status ExpectBlockEnd() {
    if (Cur().type != TokenType::kBlockEnd) return Unexpected("end of statement block");
    Advance();
    return OkStatus();
  }
  StatusOr<std::string> ExpectName() {
    if (Cur().type != TokenType::kName) return Unexpected("name");
    std::string v = Cur().value;
    Advance();
    return v;
  }

  Status ParseBody(Names stops, Body* body, std::string* stop) {
    DepthGuard guard(&depth_);
    if (guard.too_deep()) return Error(Cur(), "statements nested too deeply");
    while (true) {
      const Token& t = Cur();
      if (t.type == TokenType::kData) {
        auto node = std::make_unique<Node>();
        node->line = t.line;
        node->text = t.value;
        body->push_back(std::move(node));
        Advance();
      } else if (t.type == TokenType::kVariableBegin) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::kOutput;
        node->line = t.line;
        Advance();
        DS_ASSIGN_OR_RETURN(node->expr, ParseTuple(true, {}, false));
        if (Cur().type != TokenType::kVariableEnd) return Unexpected("end of print statement");
        Advance();
        body->push_back(std::move(node));
      } else if (t.type == TokenType::kBlockBegin) {
        const Token& tag = Peek();
        if (tag.type != TokenType::kName) return Error(tag, "tag name expected");
        if (Contains(stops, tag.value)) {
          *stop = tag.value;
          Advance();
          Advance();
          return OkStatus();
        }
        Advance();
        DS_RETURN_IF_ERROR(ParseStatement(body));
      } else if (t.type == TokenType::kEnd) {
        if (stops.size() == 0) return OkStatus();
        return Error(t, "unexpected end of template, expected '" + std::string(*stops.begin()) +
                            "'");
      } else {
        return Error(t, "unexpected " + Describe(t));
      }
    }
  }

  Status ParseStatement(Body* body) {
    const Token tag = Cur();
    auto node = std::make_unique<Node>();
    node->line = tag.line;
    const std::string& n = tag.value;
    Status s;
    if (n == "for") {
      s = ParseFor(node.get());
    } else if (n == "if") {
      s = ParseIf(node.get());
    } else if (n == "set") {
      s = ParseSet(node.get());
    } else if (n == "macro") {
      s = ParseMacro(node.get());
    } else if (n == "call") {
      s = ParseCallBlock(node.get());
    } else if (n == "filter") {
      s = ParseFilterBlock(node.get());
    } else if (n == "with") {
      s = ParseWith(node.get());
    } else if (n == "generation") {
      s = ParseScoped(node.get(), Node::Kind::kScope, "endgeneration", false);
    } else if (n == "break" || n == "continue") {
      if (loop_depth_ == 0) return Error(tag, "'" + n + "' outside of a loop");
      node->kind = n == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
      Advance();
      s = ExpectBlockEnd();
    } else {
      return Error(tag, "encountered unknown tag '" + n + "'");
    }
    DS_RETURN_IF_ERROR(s);
    body->push_back(std::move(node));
    return OkStatus();
  }

  // Parses `name` or `a, b` or `(a, b)` up to the next non-comma.
  Status ParseTargetNames(Node* node) {
    const bool parens = SkipOp("(");
    while (true) {
      DS_ASSIGN_OR_RETURN(std::string name, ExpectName());
      node->targets.push_back(std::move(name));
      if (!SkipOp(",")) break;
      node->unpack = true;
      if (Cur().type != TokenType::kName) break;
    }
    if (parens) {
      node->unpack = true;
      DS_RETURN_IF_ERROR(ExpectOp(")"));
    }
    return OkStatus();
  }

  Status ParseBodyIn(Body* body, Names stops, std::string* stop, bool loop) {
    const int saved_loop = loop_depth_;
    if (loop) ++loop_depth_;
    Status s = ParseBody(stops, body, stop);
    loop_depth_ = saved_loop;
    return s;
  }

  Status ParseFor(Node* node) {
    node->kind = Node::Kind::kFor;
    Advance();
    DS_RETURN_IF_ERROR(ParseTargetNames(node));
    if (!SkipName("in")) return Unexpected("'in'");
    DS_ASSIGN_OR_RETURN(node->expr, ParseTuple(false, {"recursive"}, false));
    if (SkipName("if")) {
      DS_ASSIGN_OR_RETURN(node->filter, ParseExpression(true));
    }
    node->recursive = SkipName("recursive");
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    std::string stop;
    DS_RETURN_IF_ERROR(ParseBodyIn(&node->body, {"endfor", "else"}, &stop, true));
    if (stop == "else") {
      DS_RETURN_IF_ERROR(ExpectBlockEnd());
      DS_RETURN_IF_ERROR(ParseBodyIn(&node->else_body, {"endfor"}, &stop, false));
    }
    return ExpectBlockEnd();
  }

  Status ParseIf(Node* node) {
    node->kind = Node::Kind::kIf;
    Advance();
    DS_ASSIGN_OR_RETURN(ExprPtr cond, ParseTuple(false, {}, false));
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    while (true) {
      Body body;
      std::string stop;
      DS_RETURN_IF_ERROR(ParseBody({"elif", "else", "endif"}, &body, &stop));
      node->branches.emplace_back(std::move(cond), std::move(body));
      if (stop == "elif") {
        DS_ASSIGN_OR_RETURN(cond, ParseTuple(false, {}, false));
        DS_RETURN_IF_ERROR(ExpectBlockEnd());
        continue;
      }
      if (stop == "else") {
        DS_RETURN_IF_ERROR(ExpectBlockEnd());
        Body else_body;
        DS_RETURN_IF_ERROR(ParseBody({"endif"}, &else_body, &stop));
        node->branches.emplace_back(nullptr, std::move(else_body));
      }
      return ExpectBlockEnd();
    }
  }

  Status ParseSet(Node* node) {
    node->kind = Node::Kind::kSet;
    Advance();
    if (Cur().type == TokenType::kName && Peek().type == TokenType::kOperator &&
        Peek().value == ".") {
      node->targets.push_back(Cur().value);
      Advance();
      Advance();
      DS_ASSIGN_OR_RETURN(node->attribute, ExpectName());
    } else {
      DS_RETURN_IF_ERROR(ParseTargetNames(node));
    }
    if (SkipOp("=")) {
      DS_ASSIGN_OR_RETURN(node->expr, ParseTuple(true, {}, false));
      return ExpectBlockEnd();
    }
    if (!node->attribute.empty() || node->unpack) return Unexpected("'='");
    node->kind = Node::Kind::kSetBlock;
    if (IsOp("|")) {
      DS_ASSIGN_OR_RETURN(node->expr, ParseFilter(nullptr, false));
    }
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    std::string stop;
    DS_RETURN_IF_ERROR(ParseBodyIn(&node->body, {"endset"}, &stop, false));
    return ExpectBlockEnd();
  }

  Status ParseSignature(Node* node) {
    DS_RETURN_IF_ERROR(ExpectOp("("));
    while (!IsOp(")")) {
      if (!node->params.empty()) DS_RETURN_IF_ERROR(ExpectOp(","));
      MacroParam param;
      DS_ASSIGN_OR_RETURN(param.name, ExpectName());
      if (SkipOp("=")) {
        DS_ASSIGN_OR_RETURN(param.default_value, ParseExpression(true));
      } else if (!node->params.empty() && node->params.back().default_value) {
        return Error(Cur(), "non-default argument follows default argument");
      }
      node->params.push_back(std::move(param));
    }
    return ExpectOp(")");
  }

  // A macro-like body: its own scope, no enclosing loop, and a record of which of the special
  // names varargs, kwargs and caller it references.
  Status ParseMacroBody(Node* node, std::string_view end) {
    const int saved_loop = loop_depth_;
    loop_depth_ = 0;
    referenced_.emplace_back();
    std::string stop;
    Status s = ParseBody({end}, &node->body, &stop);
    node->uses_varargs = referenced_.back().count("varargs") > 0;
    node->uses_kwargs = referenced_.back().count("kwargs") > 0;
    node->uses_caller = referenced_.back().count("caller") > 0;
    referenced_.pop_back();
    loop_depth_ = saved_loop;
    DS_RETURN_IF_ERROR(s);
    return ExpectBlockEnd();
  }

  Status ParseMacro(Node* node) {
    node->kind = Node::Kind::kMacro;
    Advance();
    DS_ASSIGN_OR_RETURN(node->name, ExpectName());
    DS_RETURN_IF_ERROR(ParseSignature(node));
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    return ParseMacroBody(node, "endmacro");
  }

  Status ParseCallBlock(Node* node) {
    node->kind = Node::Kind::kCallBlock;
    Advance();
    if (IsOp("(")) DS_RETURN_IF_ERROR(ParseSignature(node));
    DS_ASSIGN_OR_RETURN(node->expr, ParseExpression(true));
    if (node->expr->kind != Expr::Kind::kCall) return Error(Cur(), "expected call");
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    return ParseMacroBody(node, "endcall");
  }

  Status ParseFilterBlock(Node* node) {
    node->kind = Node::Kind::kFilterBlock;
    Advance();
    DS_ASSIGN_OR_RETURN(node->expr, ParseFilter(nullptr, true));
    return ParseScoped(node, Node::Kind::kFilterBlock, "endfilter", true);
  }

  Status ParseWith(Node* node) {
    Advance();
    while (Cur().type != TokenType::kBlockEnd) {
      if (!node->params.empty()) DS_RETURN_IF_ERROR(ExpectOp(","));
      MacroParam param;
      DS_ASSIGN_OR_RETURN(param.name, ExpectName());
      DS_RETURN_IF_ERROR(ExpectOp("="));
      DS_ASSIGN_OR_RETURN(param.default_value, ParseExpression(true));
      node->params.push_back(std::move(param));
    }
    return ParseScoped(node, Node::Kind::kWith, "endwith", true);
  }

  // `{% tag ... %}` already consumed up to the block end; parses the body up to `end`.
  Status ParseScoped(Node* node, Node::Kind kind, std::string_view end, bool at_block_end) {
    node->kind = kind;
    if (!at_block_end) Advance();
    DS_RETURN_IF_ERROR(ExpectBlockEnd());
    std::string stop;
    const bool keep_loop = kind == Node::Kind::kScope;
    if (keep_loop) {
      DS_RETURN_IF_ERROR(ParseBody({end}, &node->body, &stop));
    } else {
      DS_RETURN_IF_ERROR(ParseBodyIn(&node->body, {end}, &stop, false));
    }
    return ExpectBlockEnd();
  }

  // ---- Expressions ----

  bool IsTupleEnd(Names extra_end) const {
    const Token& t = Cur();
    if (t.type == TokenType::kVariableEnd || t.type == TokenType::kBlockEnd) return true;
    if (t.type == TokenType::kOperator && t.value == ")") return true;
    return t.type == TokenType::kName && Contains(extra_end, t.value);
  }

  StatusOr<ExprPtr> ParseTuple(bool with_condexpr, Names extra_end, bool explicit_parens) {
    const int line = Cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) DS_RETURN_IF_ERROR(ExpectOp(","));
      if (IsTupleEnd(extra_end)) break;
      DS_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression(with_condexpr));
      items.push_back(std::move(item));
      if (!IsOp(",")) break;
      is_tuple = true;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) return Error(Cur(), "expected an expression, got " + Describe(Cur()));
    }
    ExprPtr e = MakeExpr(Expr::Kind::kTuple, line);
    e->args = std::move(items);
    return e;
  }

  StatusOr<ExprPtr> ParseExpression(bool with_condexpr) {
    DepthGuard guard(&depth_);
    if (guard.too_deep()) return Error(Cur(), "expression nested too deeply");
    if (!with_condexpr) return ParseOr();
    const int line = Cur().line;
    DS_ASSIGN_OR_RETURN(ExprPtr expr, ParseOr());
    while (SkipName("if")) {
      ExprPtr cond_expr = MakeExpr(Expr::Kind::kCondition, line);
      DS_ASSIGN_OR_RETURN(ExprPtr cond, ParseOr());
      ExprPtr otherwise;
      if (SkipName("else")) {
        DS_ASSIGN_OR_RETURN(otherwise, ParseExpression(true));
      }
      cond_expr->args.push_back(std::move(cond));
      cond_expr->args.push_back(std::move(expr));
      cond_expr->args.push_back(std::move(otherwise));
      expr = std::move(cond_expr);
    }
    return expr;
  }

  StatusOr<ExprPtr> ParseOr() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (IsName("or")) {
      const int line = Cur().line;
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      left = MakeBinary(Expr::Kind::kOr, "or", std::move(left), std::move(right), line);
    }
    return left;
  }

  StatusOr<ExprPtr> ParseAnd() {
    DS_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (IsName("and")) {
      const int line = Cur().line;
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      left = MakeBinary(Expr::Kind::kAnd, "and", std::move(left), std::move(right), line);
    }
    return left;
  }

  StatusOr<ExprPtr> ParseNot() {
    DepthGuard guard(&depth_);
    if (guard.too_deep()) return Error(Cur(), "expression nested too deeply");
    if (IsName("not")) {
      const int line = Cur().line;
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
      return MakeUnaryOp(Expr::Kind::kNot, std::move(operand), line);
    }
    return ParseCompare();
  }

  StatusOr<ExprPtr> ParseCompare() {
    const int line = Cur().line;
    DS_ASSIGN_OR_RETURN(ExprPtr first, ParseMath1());
    ExprPtr cmp;
    while (true) {
      std::string op;
      const Token& t = Cur();
      if (t.type == TokenType::kOperator &&
          (t.value == "==" || t.value == "!=" || t.value == "<" || t.value == ">" ||
           t.value == "<=" || t.value == ">=")) {
        op = t.value;
        Advance();
      } else if (SkipName("in")) {
        op = "in";
      } else if (IsName("not") && Peek().type == TokenType::kName && Peek().value == "in") {
        Advance();
        Advance();
        op = "notin";
      } else {
        break;
      }
      if (!cmp) {
        cmp = MakeExpr(Expr::Kind::kCompare, line);
        cmp->args.push_back(std::move(first));
      }
      DS_ASSIGN_OR_RETURN(ExprPtr operand, ParseMath1());
      cmp->ops.push_back(std::move(op));
      cmp->args.push_back(std::move(operand));
    }
    if (!cmp) return first;
    return cmp;
  }

  // One left-associative binary level: `next (op next)*`.
  template <typename Next>
  StatusOr<ExprPtr> ParseBinaryLevel(Names ops, Next next) {
    DS_ASSIGN_OR_RETURN(ExprPtr left, (this->*next)());
    while (Cur().type == TokenType::kOperator && Contains(ops, Cur().value)) {
      const int line = Cur().line;
      std::string op = Cur().value;
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr right, (this->*next)());
      left = MakeBinary(Expr::Kind::kBinary, std::move(op), std::move(left), std::move(right),
                        line);
    }
    return left;
  }

  StatusOr<ExprPtr> ParseMath1() { return ParseBinaryLevel({"+", "-"}, &Parser::ParseConcat); }
  StatusOr<ExprPtr> ParseConcat() { return ParseBinaryLevel({"~"}, &Parser::ParseMath2); }
  StatusOr<ExprPtr> ParseMath2() {
    return ParseBinaryLevel({"*", "/", "//", "%"}, &Parser::ParsePow);
  }
  StatusOr<ExprPtr> ParsePow() { return ParseBinaryLevel({"**"}, &Parser::ParseUnaryFiltered); }
  StatusOr<ExprPtr> ParseUnaryFiltered() { return ParseUnary(true); }

  StatusOr<ExprPtr> ParseUnary(bool with_filter) {
    DepthGuard guard(&depth_);
    if (guard.too_deep()) return Error(Cur(), "expression nested too deeply");
    const int line = Cur().line;
    ExprPtr node;
    if (IsOp("-") || IsOp("+")) {
      const Expr::Kind kind = IsOp("-") ? Expr::Kind::kNeg : Expr::Kind::kPos;
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(false));
      node = MakeUnaryOp(kind, std::move(operand), line);
    } else {
      DS_ASSIGN_OR_RETURN(node, ParsePrimary());
    }
    DS_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
    if (with_filter) {
      DS_ASSIGN_OR_RETURN(node, ParseFilterExpr(std::move(node)));
    }
    return node;
  }

  StatusOr<ExprPtr> ParsePrimary();
  StatusOr<ExprPtr> ParseCollection(bool dict);
  StatusOr<ExprPtr> ParsePostfix(ExprPtr node);
  StatusOr<ExprPtr> ParseFilterExpr(ExprPtr node);
  StatusOr<ExprPtr> ParseSubscript(ExprPtr node);
  StatusOr<ExprPtr> ParseSubscribed();
  Status ParseCallArgs(CallArgs* call);
  StatusOr<ExprPtr> ParseFilter(ExprPtr node, bool start_inline);
  StatusOr<ExprPtr> ParseTest(ExprPtr node);
  StatusOr<std::string> ParseDottedName();

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<std::unordered_set<std::string>> referenced_;
};

StatusOr<ExprPtr> Parser::ParsePrimary() {
  const Token& t = Cur();
  const int line = t.line;
  ExprPtr e = MakeExpr(Expr::Kind::kConst, line);
  switch (t.type) {
    case TokenType::kName:
      if (t.value == "true" || t.value == "True") {
        e->value = Value::Bool(true);
      } else if (t.value == "false" || t.value == "False") {
        e->value = Value::Bool(false);
      } else if (t.value == "none" || t.value == "None") {
        e->value = Value::None();
      } else {
        e->kind = Expr::Kind::kName;
        e->name = t.value;
        for (auto& names : referenced_) names.insert(t.value);
      }
      Advance();
      return e;
    case TokenType::kString: {
      std::string s;
      while (Cur().type == TokenType::kString) {
        s += Cur().value;
        Advance();
      }
      e->value = Value::Str(std::move(s));
      return e;
    }
    case TokenType::kInteger:
      e->value = Value::Int(t.int_value);
      Advance();
      return e;
    case TokenType::kFloat:
      e->value = Value::Float(t.float_value);
      Advance();
      return e;
    case TokenType::kOperator:
      if (t.value == "(") {
        Advance();
        DS_ASSIGN_OR_RETURN(ExprPtr inner, ParseTuple(true, {}, true));
        DS_RETURN_IF_ERROR(ExpectOp(")"));
        return inner;
      }
      if (t.value == "[" || t.value == "{") return ParseCollection(t.value == "{");
      break;
    default: break;
  }
  return Error(t, "unexpected " + Describe(t));
}

StatusOr<ExprPtr> Parser::ParseCollection(bool dict) {
  ExprPtr e = MakeExpr(dict ? Expr::Kind::kDict : Expr::Kind::kList, Cur().line);
  Advance();
  const char* close = dict ? "}" : "]";
  while (!IsOp(close)) {
    if (!e->args.empty()) {
      DS_RETURN_IF_ERROR(ExpectOp(","));
      if (IsOp(close)) break;
    }
    DS_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression(true));
    e->args.push_back(std::move(item));
    if (dict) {
      DS_RETURN_IF_ERROR(ExpectOp(":"));
      DS_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression(true));
      e->args.push_back(std::move(value));
    }
  }
  DS_RETURN_IF_ERROR(ExpectOp(close));
  return e;
}

StatusOr<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    if (IsOp(".") || IsOp("[")) {
      DS_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (IsOp("(")) {
      ExprPtr call = MakeExpr(Expr::Kind::kCall, Cur().line);
      call->args.push_back(std::move(node));
      DS_RETURN_IF_ERROR(ParseCallArgs(&call->call));
      node = std::move(call);
    } else {
      return node;
    }
  }
}

StatusOr<ExprPtr> Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (IsOp("|")) {
      DS_ASSIGN_OR_RETURN(node, ParseFilter(std::move(node), false));
    } else if (IsName("is")) {
      DS_ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else if (IsOp("(")) {
      ExprPtr call = MakeExpr(Expr::Kind::kCall, Cur().line);
      call->args.push_back(std::move(node));
      DS_RETURN_IF_ERROR(ParseCallArgs(&call->call));
      node = std::move(call);
    } else {
      return node;
    }
  }
}

StatusOr<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  const int line = Cur().line;
  if (SkipOp(".")) {
    if (Cur().type == TokenType::kName) {
      ExprPtr e = MakeExpr(Expr::Kind::kGetAttr, line);
      e->name = Cur().value;
      e->args.push_back(std::move(node));
      Advance();
      return e;
    }
    if (Cur().type != TokenType::kInteger) return Unexpected("name or number");
    ExprPtr index = MakeExpr(Expr::Kind::kConst, line);
    index->value = Value::Int(Cur().int_value);
    Advance();
    return MakeBinary(Expr::Kind::kGetItem, "", std::move(node), std::move(index), line);
  }
  Advance();  // [
  std::vector<ExprPtr> items;
  while (!IsOp("]")) {
    if (!items.empty()) DS_RETURN_IF_ERROR(ExpectOp(","));
    DS_ASSIGN_OR_RETURN(ExprPtr item, ParseSubscribed());
    items.push_back(std::move(item));
  }
  DS_RETURN_IF_ERROR(ExpectOp("]"));
  if (items.empty()) return Error(Cur(), "expected subscript expression");
  ExprPtr index;
  if (items.size() == 1) {
    index = std::move(items[0]);
  } else {
    index = MakeExpr(Expr::Kind::kTuple, line);
    index->args = std::move(items);
  }
  return MakeBinary(Expr::Kind::kGetItem, "", std::move(node), std::move(index), line);
}

StatusOr<ExprPtr> Parser::ParseSubscribed() {
  const int line = Cur().line;
  ExprPtr slice = MakeExpr(Expr::Kind::kSlice, line);
  if (SkipOp(":")) {
    slice->args.push_back(nullptr);
  } else {
    DS_ASSIGN_OR_RETURN(ExprPtr start, ParseExpression(true));
    if (!SkipOp(":")) return start;
    slice->args.push_back(std::move(start));
  }
  auto optional_part = [&]() -> StatusOr<ExprPtr> {
    if (IsOp("]") || IsOp(",") || IsOp(":")) return ExprPtr();
    return ParseExpression(true);
  };
  DS_ASSIGN_OR_RETURN(ExprPtr stop, optional_part());
  slice->args.push_back(std::move(stop));
  ExprPtr step;
  if (SkipOp(":")) {
    DS_ASSIGN_OR_RETURN(step, optional_part());
  }
  slice->args.push_back(std::move(step));
  return slice;
}

Status Parser::ParseCallArgs(CallArgs* call) {
  DS_RETURN_IF_ERROR(ExpectOp("("));
  bool need_comma = false;
  while (!IsOp(")")) {
    if (need_comma) {
      DS_RETURN_IF_ERROR(ExpectOp(","));
      if (IsOp(")")) break;
    }
    need_comma = true;
    if (SkipOp("*")) {
      if (call->star) return Error(Cur(), "invalid syntax for function call expression");
      DS_ASSIGN_OR_RETURN(call->star, ParseExpression(true));
    } else if (SkipOp("**")) {
      if (call->star_star) return Error(Cur(), "invalid syntax for function call expression");
      DS_ASSIGN_OR_RETURN(call->star_star, ParseExpression(true));
    } else if (Cur().type == TokenType::kName && Peek().type == TokenType::kOperator &&
               Peek().value == "=") {
      std::string key = Cur().value;
      Advance();
      Advance();
      DS_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression(true));
      call->keyword.emplace_back(std::move(key), std::move(value));
    } else {
      if (!call->keyword.empty() || call->star || call->star_star) {
        return Error(Cur(), "invalid syntax for function call expression");
      }
      DS_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression(true));
      call->positional.push_back(std::move(value));
    }
  }
  return ExpectOp(")");
}

StatusOr<std::string> Parser::ParseDottedName() {
  DS_ASSIGN_OR_RETURN(std::string name, ExpectName());
  while (IsOp(".") && Peek().type == TokenType::kName) {
    Advance();
    name += "." + Cur().value;
    Advance();
  }
  return name;
}

StatusOr<ExprPtr> Parser::ParseFilter(ExprPtr node, bool start_inline) {
  while (IsOp("|") || start_inline) {
    if (!start_inline) Advance();
    start_inline = false;
    ExprPtr e = MakeExpr(Expr::Kind::kFilter, Cur().line);
    DS_ASSIGN_OR_RETURN(e->name, ParseDottedName());
    if (IsOp("(")) DS_RETURN_IF_ERROR(ParseCallArgs(&e->call));
    e->args.push_back(std::move(node));
    node = std::move(e);
  }
  return node;
}

StatusOr<ExprPtr> Parser::ParseTest(ExprPtr node) {
  ExprPtr e = MakeExpr(Expr::Kind::kTest, Cur().line);
  Advance();  // is
  e->negated = SkipName("not");
  DS_ASSIGN_OR_RETURN(e->name, ParseDottedName());
  const Token& t = Cur();
  const bool arg_start =
      t.type == TokenType::kName || t.type == TokenType::kString ||
      t.type == TokenType::kInteger || t.type == TokenType::kFloat ||
      (t.type == TokenType::kOperator && (t.value == "(" || t.value == "[" || t.value == "{"));
  if (IsOp("(")) {
    DS_RETURN_IF_ERROR(ParseCallArgs(&e->call));
  } else if (arg_start && !IsName("else") && !IsName("or") && !IsName("and")) {
    if (IsName("is")) return Error(t, "You cannot chain multiple tests with is");
    DS_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
    DS_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
    e->call.positional.push_back(std::move(arg));
  }
  e->args.push_back(std::move(node));
  return e;
}

}  // namespace

StatusOr<std::shared_ptr<const Program>> ParseProgram(std::string_view source,
                                                      const LexOptions& options) {
  DS_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(source, options));
  Parser parser(std::move(tokens));
  return parser.Run();
}

}  // namespace ds::text::jinja
