#pragma once
// ASTContext owns every node of one parse; nodes live exactly as long as the context.

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "ast.h"

namespace rbt::ast {

class ASTContext {
public:
  template <typename T, typename... Args> T *make(Args &&...args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }
  // A macro's call site, kept where expanded nodes' ranges can point (expanded_from).
  const SourceRange *keep_site(const SourceRange &site) { return &sites_.emplace_back(site); }
  // An imported file's text, kept for as long as the nodes and ranges that point into it.
  const SourceFile &keep_file(SourceFile file) { return files_.emplace_back(std::move(file)); }
  Program *root = nullptr;

private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::deque<SourceRange> sites_;
  std::deque<SourceFile> files_;  // a deque: pointers to its elements stay valid
};

}  // namespace rbt::ast
