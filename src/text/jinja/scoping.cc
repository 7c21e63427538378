#include "text/jinja/scoping.h"

#include <unordered_map>

namespace ds::text::jinja {
namespace {

// One frame's symbol table: for each referenced name, whether it starts undefined (true) or is
// resolved from the context (false); plus the names stored in the frame.
struct Symbols {
  std::unordered_map<std::string, bool> starts_undefined;
  std::unordered_set<std::string> stores;

  void Load(const std::string& name) { starts_undefined.emplace(name, false); }
  void Store(const std::string& name) {
    stores.insert(name);
    starts_undefined.emplace(name, true);
  }
};

void VisitExpr(const Expr* e, Symbols& sym) {
  if (e == nullptr) return;
  if (e->kind == Expr::Kind::kName) sym.Load(e->name);
  for (const ExprPtr& a : e->args) VisitExpr(a.get(), sym);
  for (const ExprPtr& a : e->call.positional) VisitExpr(a.get(), sym);
  for (const auto& [key, a] : e->call.keyword) VisitExpr(a.get(), sym);
  VisitExpr(e->call.star.get(), sym);
  VisitExpr(e->call.star_star.get(), sym);
}

void VisitBody(const Body& body, Symbols& sym);

// A name stored in only some branches must be resolved from the context first.
void BranchUpdate(Symbols& sym, const std::vector<Symbols>& branches) {
  std::unordered_set<std::string> stored;
  for (const Symbols& b : branches) stored.insert(b.stores.begin(), b.stores.end());
  for (const std::string& name : sym.stores) stored.erase(name);
  for (const Symbols& b : branches) {
    for (const auto& [name, undefined] : b.starts_undefined) sym.starts_undefined[name] = undefined;
    sym.stores.insert(b.stores.begin(), b.stores.end());
  }
  for (const std::string& name : stored) sym.starts_undefined[name] = false;
}

// Jinja parses `if/elif.../else` as one If whose elif list holds If nodes without else.
void VisitIf(const Node& node, size_t first, Symbols& sym) {
  const auto& branches = node.branches;
  VisitExpr(branches[first].first.get(), sym);
  Symbols body = sym;
  VisitBody(branches[first].second, body);
  Symbols elifs = sym;
  Symbols otherwise = sym;
  // An elif node (first > 0) has no elif list or else of its own: both stay empty copies.
  if (first == 0) {
    for (size_t i = 1; i < branches.size(); ++i) {
      if (branches[i].first) {
        Symbols inner = elifs;
        VisitIf(node, i, inner);
        elifs = std::move(inner);
      } else {
        VisitBody(branches[i].second, otherwise);
      }
    }
  }
  BranchUpdate(sym, {body, elifs, otherwise});
}

void VisitNode(const Node& node, Symbols& sym) {
  switch (node.kind) {
    case Node::Kind::kOutput:
    case Node::Kind::kFor:
    case Node::Kind::kCallBlock:
    case Node::Kind::kFilterBlock: VisitExpr(node.expr.get(), sym); break;
    case Node::Kind::kIf: VisitIf(node, 0, sym); break;
    case Node::Kind::kSet:
      VisitExpr(node.expr.get(), sym);
      if (!node.attribute.empty()) {
        sym.Load(node.targets[0]);
      } else {
        for (const std::string& t : node.targets) sym.Store(t);
      }
      break;
    case Node::Kind::kSetBlock: sym.Store(node.targets[0]); break;
    case Node::Kind::kMacro: sym.Store(node.name); break;
    case Node::Kind::kWith:
      for (const MacroParam& p : node.params) VisitExpr(p.default_value.get(), sym);
      break;
    default: break;
  }
}

void VisitBody(const Body& body, Symbols& sym) {
  for (const NodePtr& n : body) VisitNode(*n, sym);
}

}  // namespace

std::unordered_set<std::string> RootUndefinedNames(const Body& root) {
  Symbols sym;
  VisitBody(root, sym);
  std::unordered_set<std::string> names;
  for (const auto& [name, undefined] : sym.starts_undefined) {
    if (undefined) names.insert(name);
  }
  return names;
}

}  // namespace ds::text::jinja
