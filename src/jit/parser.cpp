// The parser of TorchScript's serialized code: Python syntax limited to what torch.jit.save
// prints (classes of methods, free functions, assignments, if/for/return, calls, operators,
// literals). Type annotations are parsed and skipped. Names are resolved to frame slots here,
// so the interpreter never looks a local up by name.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

#include "ember/error.h"
#include "jit/script.h"

namespace ember::jit {

std::string to_string(const SourceLoc& loc) {
  return (loc.file ? *loc.file : std::string("<code>")) + ":" + std::to_string(loc.line);
}

namespace {

// Nesting deeper than this in one expression or block is refused rather than risking the stack.
constexpr int kMaxDepth = 200;

struct Token {
  enum class Kind { Name, Int, Float, String, Op, Newline, Indent, Dedent, End } kind;
  std::string text;  // Name, String (decoded), Op
  int64_t i = 0;
  double d = 0;
  int line = 0;
};
using TK = Token::Kind;

class Lexer {
 public:
  Lexer(const std::string& src, const std::string* file) : s_(src), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    std::vector<size_t> indents{0};
    bool line_start = true;
    while (pos_ < s_.size()) {
      if (line_start && depth_ == 0) {
        size_t col = 0;
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_, ++col;
        if (pos_ >= s_.size()) break;
        if (s_[pos_] == '\n' || s_[pos_] == '#' || s_[pos_] == '\r') {  // blank or comment line
          skip_line();
          continue;
        }
        line_start = false;
        if (col > indents.back()) {
          indents.push_back(col);
          out.push_back({TK::Indent, "", 0, 0, line_});
        }
        while (col < indents.back()) {
          indents.pop_back();
          out.push_back({TK::Dedent, "", 0, 0, line_});
        }
        if (col != indents.back()) fail("inconsistent indentation");
      }
      const char c = s_[pos_];
      if (c == '\n') {
        ++pos_;
        if (depth_ == 0) {
          out.push_back({TK::Newline, "", 0, 0, line_});
          line_start = true;
        }
        ++line_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
        pos_ += 2;
        ++line_;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const size_t b = pos_;
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
        out.push_back({TK::Name, s_.substr(b, pos_ - b), 0, 0, line_});
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
        out.push_back(number());
      } else if (c == '"' || c == '\'') {
        out.push_back({TK::String, string(c), 0, 0, line_});
      } else {
        out.push_back({TK::Op, op(), 0, 0, line_});
      }
    }
    if (!out.empty() && out.back().kind != TK::Newline) out.push_back({TK::Newline, "", 0, 0, line_});
    for (size_t i = 1; i < indents.size(); ++i) out.push_back({TK::Dedent, "", 0, 0, line_});
    out.push_back({TK::End, "", 0, 0, line_});
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error("torch::jit::load: " + to_string({file_, line_}) + ": " + msg);
  }
  void skip_line() {
    while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    if (pos_ < s_.size()) ++pos_, ++line_;
  }
  Token number() {
    const size_t b = pos_;
    bool is_float = false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.') {
        is_float = true;
        ++pos_;
      } else if ((c == 'e' || c == 'E') && pos_ + 1 < s_.size()) {
        is_float = true;
        ++pos_;
        if (s_[pos_] == '+' || s_[pos_] == '-') ++pos_;
      } else {
        break;
      }
    }
    const std::string text = s_.substr(b, pos_ - b);
    Token t{is_float ? TK::Float : TK::Int, text, 0, 0, line_};
    char* end = nullptr;
    errno = 0;
    if (is_float)
      t.d = std::strtod(text.c_str(), &end);
    else
      t.i = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size() || errno == ERANGE) fail("bad number literal '" + text + "'");
    return t;
  }
  std::string string(char quote) {
    std::string out;
    ++pos_;
    for (;;) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') fail("unterminated string literal");
      char c = s_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= s_.size()) fail("unterminated string literal");
        c = s_[pos_++];
        switch (c) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case '0': c = '\0'; break;
          case '\\': case '\'': case '"': break;
          default: fail(std::string("unsupported escape '\\") + c + "' in a string literal");
        }
      }
      out += c;
    }
    return out;
  }
  std::string op() {
    static const char* kTwo[] = {"->", "**", "//", "==", "!=", "<=", ">="};
    for (const char* t : kTwo)
      if (s_.compare(pos_, 2, t) == 0) {
        pos_ += 2;
        return t;
      }
    const char c = s_[pos_++];
    if (std::string("()[]{}:,.=+-*/%<>@").find(c) == std::string::npos)
      fail(std::string("unexpected character '") + c + "'");
    if (c == '(' || c == '[' || c == '{') ++depth_;
    if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
    return std::string(1, c);
  }

  const std::string& s_;
  const std::string* file_;
  size_t pos_ = 0;
  int line_ = 1;
  int depth_ = 0;
};

// Python's operators as the builtins that implement them.
const char* binary_builtin(const std::string& op) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"+", "aten::add"},      {"-", "aten::sub"},       {"*", "aten::mul"}, {"/", "aten::div"},
      {"//", "aten::floordiv"}, {"%", "aten::remainder"}, {"**", "aten::pow"}, {"@", "aten::matmul"},
      {"==", "aten::eq"},       {"!=", "aten::ne"},       {"<", "aten::lt"},  {"<=", "aten::le"},
      {">", "aten::gt"},        {">=", "aten::ge"}};
  for (const auto& [o, b] : kOps)
    if (op == o) return b;
  return nullptr;
}

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string* file) : t_(std::move(toks)), file_(file) {}

  void parse_module(const std::string& module, std::unordered_map<std::string, std::unique_ptr<ClassType>>& classes,
                    std::unordered_map<std::string, std::unique_ptr<Function>>& functions) {
    while (!at(TK::End)) {
      if (accept(TK::Newline)) continue;
      if (is_name("class")) {
        auto cls = parse_class(module);
        const std::string name = cls->qualified_name;
        if (!classes.emplace(name, std::move(cls)).second) fail("class " + name + " is defined twice");
      } else if (is_name("def")) {
        auto fn = parse_def(module);
        const std::string name = fn->qualified_name;
        if (!functions.emplace(name, std::move(fn)).second) fail("function " + name + " is defined twice");
      } else if (is_name("import") || is_name("from")) {
        skip_line();
      } else {
        fail("expected a class or def at the top level, got '" + cur().text + "'");
      }
    }
  }

 private:
  // ---- tokens ----
  const Token& cur() const { return t_[p_]; }
  bool at(TK k) const { return cur().kind == k; }
  bool is_op(const char* o) const { return at(TK::Op) && cur().text == o; }
  bool is_name(const char* n) const { return at(TK::Name) && cur().text == n; }
  bool accept(TK k) {
    if (!at(k)) return false;
    ++p_;
    return true;
  }
  bool accept_op(const char* o) {
    if (!is_op(o)) return false;
    ++p_;
    return true;
  }
  bool accept_name(const char* n) {
    if (!is_name(n)) return false;
    ++p_;
    return true;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error("torch::jit::load: " + to_string(loc()) + ": " + msg);
  }
  SourceLoc loc() const { return {file_, cur().line}; }
  void expect_op(const char* o) {
    if (!accept_op(o)) fail(std::string("expected '") + o + "', got '" + describe() + "'");
  }
  void expect(TK k, const char* what) {
    if (!accept(k)) fail(std::string("expected ") + what + ", got '" + describe() + "'");
  }
  std::string describe() const {
    switch (cur().kind) {
      case TK::Newline: return "end of line";
      case TK::Indent: return "indent";
      case TK::Dedent: return "dedent";
      case TK::End: return "end of file";
      default: return cur().text;
    }
  }
  std::string name() {
    if (!at(TK::Name)) fail("expected a name, got '" + describe() + "'");
    return t_[p_++].text;
  }
  void skip_line() {
    int depth = 0;
    while (!at(TK::End) && !(depth == 0 && at(TK::Newline))) {
      if (at(TK::Op) && (cur().text == "(" || cur().text == "[" || cur().text == "{")) ++depth;
      if (at(TK::Op) && (cur().text == ")" || cur().text == "]" || cur().text == "}")) --depth;
      ++p_;
    }
    accept(TK::Newline);
  }
  // A type annotation, skipped: tokens up to a ',', '=', ')' or ':' outside brackets.
  void skip_type() {
    int depth = 0;
    const size_t start = p_;
    while (!at(TK::End) && !at(TK::Newline)) {
      if (depth == 0 && (is_op(",") || is_op("=") || is_op(")") || is_op(":"))) break;
      if (is_op("[") || is_op("(")) ++depth;
      if (is_op("]") || is_op(")")) --depth;
      ++p_;
    }
    if (p_ == start) fail("expected a type");
  }

  // ---- definitions ----
  std::unique_ptr<ClassType> parse_class(const std::string& module) {
    accept_name("class");
    auto cls = std::make_unique<ClassType>();
    cls->qualified_name = module + "." + name();
    if (accept_op("(")) {
      while (!accept_op(")")) {
        if (at(TK::End) || at(TK::Newline)) fail("unterminated base class list");
        if (is_name("NamedTuple")) cls->named_tuple = true;
        ++p_;
      }
    }
    expect_op(":");
    expect(TK::Newline, "end of line");
    expect(TK::Indent, "an indented class body");
    while (!accept(TK::Dedent)) {
      if (at(TK::End)) fail("unterminated class body");
      if (accept(TK::Newline)) continue;
      if (is_name("def")) {
        auto fn = parse_def(cls->qualified_name);
        fn->is_method = !fn->params.empty();
        const std::string short_name = fn->qualified_name.substr(cls->qualified_name.size() + 1);
        if (!cls->methods.emplace(short_name, std::move(fn)).second)
          fail("method " + short_name + " is defined twice");
        continue;
      }
      if (at(TK::Name) && (cur().text == "__parameters__" || cur().text == "__buffers__") &&
          t_[p_ + 1].kind == TK::Op && t_[p_ + 1].text == "=") {
        auto& dst = cur().text == "__parameters__" ? cls->parameters : cls->buffers;
        p_ += 2;
        expect_op("[");
        while (!accept_op("]")) {
          if (!at(TK::String)) fail("expected a string in the __parameters__/__buffers__ list");
          dst.push_back(t_[p_++].text);
          if (!is_op("]")) expect_op(",");
        }
        expect(TK::Newline, "end of line");
        continue;
      }
      // `name : Final[T] = value`: a constant that code may read as self.name.
      if (at(TK::Name) && t_[p_ + 1].kind == TK::Op && t_[p_ + 1].text == ":" && t_[p_ + 2].kind == TK::Name &&
          t_[p_ + 2].text == "Final") {
        const std::string attr = name();
        expect_op(":");
        skip_type();
        if (accept_op("=")) {
          Scope none;
          scope_ = &none;
          ExprPtr e = parse_expr();
          scope_ = nullptr;
          if (e->kind == Expr::Kind::Const) {
            cls->constants.emplace_back(attr, e->value);
          } else if (e->kind == Expr::Kind::Tuple) {
            std::vector<IValue> elems;
            for (auto& k : e->kids) {
              if (k->kind != Expr::Kind::Const) fail("class constant " + attr + " is not a literal");
              elems.push_back(k->value);
            }
            cls->constants.emplace_back(attr, IValue(std::make_shared<ivalue::Tuple>(std::move(elems))));
          }
        }
        expect(TK::Newline, "end of line");
        continue;
      }
      // A NamedTuple's fields, in order: `name : T`.
      if (cls->named_tuple && at(TK::Name) && t_[p_ + 1].kind == TK::Op && t_[p_ + 1].text == ":") {
        const std::string field = cur().text;
        if (std::find(cls->fields.begin(), cls->fields.end(), field) != cls->fields.end())
          fail("field " + field + " of " + cls->qualified_name + " is declared twice");
        cls->fields.push_back(field);
      }
      skip_line();  // attribute annotations and __annotations__[...] entries
    }
    return cls;
  }

  struct Scope {
    std::unordered_map<std::string, int> slots;
    int next = 0;
  };

  int define(const std::string& n) {
    auto [it, fresh] = scope_->slots.try_emplace(n, scope_->next);
    if (fresh) ++scope_->next;
    return it->second;
  }

  std::unique_ptr<Function> parse_def(const std::string& owner) {
    const SourceLoc def_loc = loc();
    accept_name("def");
    auto fn = std::make_unique<Function>();
    fn->qualified_name = owner + "." + name();
    fn->loc = def_loc;
    Scope scope;
    scope_ = &scope;
    expect_op("(");
    while (!accept_op(")")) {
      Param p;
      p.name = name();
      if (accept_op(":")) skip_type();
      if (accept_op("=")) p.default_value = parse_expr();
      define(p.name);
      fn->params.push_back(std::move(p));
      if (!is_op(")")) expect_op(",");
    }
    if (accept_op("->")) skip_type();
    expect_op(":");
    fn->body = parse_block(0);
    fn->num_slots = scope.next;
    scope_ = nullptr;
    return fn;
  }

  std::vector<StmtPtr> parse_block(int depth) {
    if (depth > kMaxDepth) fail("blocks nested too deeply");
    expect(TK::Newline, "end of line");
    expect(TK::Indent, "an indented block");
    std::vector<StmtPtr> out;
    while (!accept(TK::Dedent)) {
      if (at(TK::End)) fail("unterminated block");
      if (accept(TK::Newline)) continue;
      out.push_back(parse_stmt(depth));
    }
    return out;
  }

  StmtPtr make_stmt(Stmt::Kind k) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->loc = loc();
    return s;
  }

  StmtPtr parse_stmt(int depth) {
    if (is_name("return")) {
      auto s = make_stmt(Stmt::Kind::Return);
      ++p_;
      if (!at(TK::Newline)) s->value = parse_exprlist();
      expect(TK::Newline, "end of line");
      return s;
    }
    for (auto [word, kind] : {std::pair{"pass", Stmt::Kind::Pass}, std::pair{"break", Stmt::Kind::Break},
                              std::pair{"continue", Stmt::Kind::Continue}}) {
      if (is_name(word)) {
        auto s = make_stmt(kind);
        ++p_;
        expect(TK::Newline, "end of line");
        return s;
      }
    }
    if (is_name("if")) return parse_if(depth);
    if (is_name("for")) {
      auto s = make_stmt(Stmt::Kind::For);
      ++p_;
      s->target = parse_targets();
      if (!accept_name("in")) fail("expected 'in' in a for statement");
      s->value = parse_exprlist();
      expect_op(":");
      s->body = parse_block(depth + 1);
      return s;
    }
    if (is_name("while")) {
      auto s = make_stmt(Stmt::Kind::While);
      ++p_;
      s->value = parse_expr();
      expect_op(":");
      s->body = parse_block(depth + 1);
      return s;
    }
    for (const char* word : {"with", "raise", "assert", "del", "global", "nonlocal", "try", "lambda",
                             "yield", "class", "def", "import"})
      if (is_name(word)) fail(std::string("'") + word + "' statements are not supported by Ember's TorchScript "
                                                        "interpreter");
    // An assignment if the line has '=' outside brackets; `x : T = v` is one too.
    bool assign = false;
    int d = 0;
    for (size_t i = p_; t_[i].kind != TK::Newline && t_[i].kind != TK::End; ++i) {
      const Token& t = t_[i];
      if (t.kind != TK::Op) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}") --d;
      if (d == 0 && t.text == "=") {
        assign = true;
        break;
      }
    }
    if (assign) {
      auto s = make_stmt(Stmt::Kind::Assign);
      // The value is parsed first: `x = f(x)` reads the old x.
      const size_t target_at = p_;
      while (!at(TK::Newline) && !at(TK::End) && !(is_op("=") || (is_op(":") && scope_))) {
        if (is_op("(") || is_op("[") || is_op("{")) {
          int depth2 = 0;
          do {
            if (is_op("(") || is_op("[") || is_op("{")) ++depth2;
            if (is_op(")") || is_op("]") || is_op("}")) --depth2;
            ++p_;
          } while (depth2 > 0 && !at(TK::End));
          continue;
        }
        ++p_;
      }
      if (accept_op(":")) skip_type();
      expect_op("=");
      s->value = parse_exprlist();
      expect(TK::Newline, "end of line");
      const size_t after = p_;
      p_ = target_at;
      s->target = parse_targets();
      p_ = after;
      return s;
    }
    auto s = make_stmt(Stmt::Kind::Expr);
    s->value = parse_exprlist();
    expect(TK::Newline, "end of line");
    return s;
  }

  StmtPtr parse_if(int depth) {
    auto s = make_stmt(Stmt::Kind::If);
    ++p_;  // if / elif
    s->value = parse_expr();
    expect_op(":");
    s->body = parse_block(depth + 1);
    if (is_name("elif")) {
      s->orelse.push_back(parse_if(depth + 1));
    } else if (accept_name("else")) {
      expect_op(":");
      s->orelse = parse_block(depth + 1);
    }
    return s;
  }

  ExprPtr make(Expr::Kind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->loc = loc();
    return e;
  }

  // Assignment and loop targets: names (defined here), attributes, tuples of them.
  ExprPtr parse_targets() {
    ExprPtr first = parse_target();
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::Tuple);
    t->kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (is_op("=") || is_op(":") || is_name("in")) break;
      t->kids.push_back(parse_target());
    }
    return t;
  }
  ExprPtr parse_target() {
    if (accept_op("(")) {
      ExprPtr t = parse_targets();
      expect_op(")");
      return t;
    }
    const SourceLoc l = loc();
    const std::string n = name();
    if (is_op(".")) {  // self.x = v
      auto it = scope_->slots.find(n);
      if (it == scope_->slots.end()) fail("assignment to an attribute of unknown name " + n);
      ExprPtr obj = make(Expr::Kind::Local);
      obj->slot = it->second;
      obj->loc = l;
      while (accept_op(".")) {
        auto a = make(Expr::Kind::Attr);
        a->name = name();
        a->kids.push_back(std::move(obj));
        obj = std::move(a);
      }
      return obj;
    }
    if (is_op("[")) fail("assignment to a subscript is not supported");
    auto e = make(Expr::Kind::Local);
    e->loc = l;
    e->slot = define(n);
    e->name = n;
    return e;
  }

  // ---- expressions ----
  ExprPtr parse_exprlist() {
    ExprPtr first = parse_expr();
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::Tuple);
    t->kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (at(TK::Newline) || is_op("=") || is_op(":")) break;
      t->kids.push_back(parse_expr());
    }
    return t;
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail("expression nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  ExprPtr call_of(const char* builtin, std::vector<ExprPtr> args, const SourceLoc& l) {
    auto c = make(Expr::Kind::Call);
    c->loc = l;
    auto g = make(Expr::Kind::Global);
    g->loc = l;
    g->name = builtin;
    c->kids.push_back(std::move(g));
    for (auto& a : args) c->kids.push_back(std::move(a));
    return c;
  }

  ExprPtr parse_expr() {
    DepthGuard guard(*this);
    ExprPtr e = parse_or();
    if (is_name("if")) {
      auto x = make(Expr::Kind::IfExp);
      ++p_;
      ExprPtr cond = parse_or();
      if (!accept_name("else")) fail("expected 'else' in a conditional expression");
      ExprPtr other = parse_expr();
      x->kids.push_back(std::move(cond));
      x->kids.push_back(std::move(e));
      x->kids.push_back(std::move(other));
      return x;
    }
    return e;
  }
  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) {
      auto x = make(Expr::Kind::Or);
      ++p_;
      x->kids.push_back(std::move(e));
      x->kids.push_back(parse_and());
      e = std::move(x);
    }
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) {
      auto x = make(Expr::Kind::And);
      ++p_;
      x->kids.push_back(std::move(e));
      x->kids.push_back(parse_not());
      e = std::move(x);
    }
    return e;
  }
  ExprPtr parse_not() {
    DepthGuard guard(*this);
    if (is_name("not")) {
      const SourceLoc l = loc();
      ++p_;
      std::vector<ExprPtr> a;
      a.push_back(parse_not());
      return call_of("aten::__not__", std::move(a), l);
    }
    return parse_comparison();
  }
  ExprPtr parse_comparison() {
    ExprPtr e = parse_arith();
    const SourceLoc l = loc();
    const char* fn = nullptr;
    if (at(TK::Op)) fn = (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                          cur().text == ">" || cur().text == ">=")
                             ? binary_builtin(cur().text)
                             : nullptr;
    if (fn) {
      ++p_;
    } else if (is_name("is")) {
      ++p_;
      fn = accept_name("not") ? "aten::__isnot__" : "aten::__is__";
    } else if (is_name("in")) {  // a in b: b.__contains__(a)
      ++p_;
      std::vector<ExprPtr> a;
      a.push_back(parse_arith());
      a.push_back(std::move(e));
      return call_of("aten::__contains__", std::move(a), l);
    } else if (is_name("not") && t_[p_ + 1].kind == TK::Name && t_[p_ + 1].text == "in") {
      fail("'not in' is not supported");
    } else {
      return e;
    }
    std::vector<ExprPtr> a;
    a.push_back(std::move(e));
    a.push_back(parse_arith());
    return call_of(fn, std::move(a), l);
  }
  ExprPtr parse_arith() {
    ExprPtr e = parse_term();
    while (is_op("+") || is_op("-")) {
      const SourceLoc l = loc();
      const char* fn = binary_builtin(t_[p_++].text);
      std::vector<ExprPtr> a;
      a.push_back(std::move(e));
      a.push_back(parse_term());
      e = call_of(fn, std::move(a), l);
    }
    return e;
  }
  ExprPtr parse_term() {
    ExprPtr e = parse_factor();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%") || is_op("@")) {
      const SourceLoc l = loc();
      const char* fn = binary_builtin(t_[p_++].text);
      std::vector<ExprPtr> a;
      a.push_back(std::move(e));
      a.push_back(parse_factor());
      e = call_of(fn, std::move(a), l);
    }
    return e;
  }
  ExprPtr parse_factor() {
    DepthGuard guard(*this);
    if (is_op("-")) {
      const SourceLoc l = loc();
      ++p_;
      ExprPtr x = parse_factor();
      if (x->kind == Expr::Kind::Const && x->value.isInt()) {
        x->value = IValue(-x->value.toInt());
        return x;
      }
      if (x->kind == Expr::Kind::Const && x->value.isDouble()) {
        x->value = IValue(-x->value.toDouble());
        return x;
      }
      std::vector<ExprPtr> a;
      a.push_back(std::move(x));
      return call_of("aten::neg", std::move(a), l);
    }
    if (accept_op("+")) return parse_factor();
    ExprPtr e = parse_primary();
    if (is_op("**")) {
      const SourceLoc l = loc();
      ++p_;
      std::vector<ExprPtr> a;
      a.push_back(std::move(e));
      a.push_back(parse_factor());
      return call_of("aten::pow", std::move(a), l);
    }
    return e;
  }

  ExprPtr parse_primary() {
    ExprPtr e = parse_atom();
    for (;;) {
      if (is_op(".")) {
        ++p_;
        const std::string attr = name();
        if (e->kind == Expr::Kind::Global) {  // still a dotted global name
          e->name += "." + attr;
          continue;
        }
        auto a = make(Expr::Kind::Attr);
        a->name = attr;
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else if (is_op("[")) {
        const SourceLoc l = loc();
        ++p_;
        std::vector<ExprPtr> a;
        a.push_back(std::move(e));
        if (is_op(":") || is_op("]")) fail("slicing is not supported");
        a.push_back(parse_exprlist());
        if (is_op(":")) fail("slicing is not supported");
        expect_op("]");
        e = call_of("aten::__getitem__", std::move(a), l);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto c = make(Expr::Kind::Call);
    c->loc = callee->loc;
    expect_op("(");
    c->kids.push_back(std::move(callee));
    while (!accept_op(")")) {
      if (at(TK::Name) && t_[p_ + 1].kind == TK::Op && t_[p_ + 1].text == "=") {
        c->kwnames.push_back(name());
        ++p_;
      } else if (!c->kwnames.empty()) {
        fail("positional argument after a keyword argument");
      }
      c->kids.push_back(parse_expr());
      if (!is_op(")")) expect_op(",");
    }
    // annotate(T, v) and unchecked_cast(T, v) are v; uninitialized(T) is None. The types are
    // only for the compiler, except a number type given a tensor: annotate(int, t) converts t
    // as TorchScript's IntImplicit does (FloatImplicit for float, ScalarImplicit for number).
    const Expr* fn = c->kids[0].get();
    if (fn->kind == Expr::Kind::Global && c->kwnames.empty()) {
      if (fn->name == "annotate" && c->kids.size() == 3 && c->kids[1]->kind == Expr::Kind::Global) {
        const std::string& type = c->kids[1]->name;
        const char* convert = type == "int" ? "aten::IntImplicit" : type == "float" ? "aten::FloatImplicit"
                              : type == "number" ? "aten::ScalarImplicit" : nullptr;
        if (convert) {
          std::vector<ExprPtr> a;
          a.push_back(std::move(c->kids[2]));
          return call_of(convert, std::move(a), c->loc);
        }
      }
      if ((fn->name == "annotate" || fn->name == "unchecked_cast") && c->kids.size() == 3)
        return std::move(c->kids[2]);
      if (fn->name == "uninitialized" && c->kids.size() == 2) {
        auto none = make(Expr::Kind::Const);
        none->loc = c->loc;
        return none;
      }
    }
    return c;
  }

  ExprPtr parse_atom() {
    DepthGuard guard(*this);
    const SourceLoc l = loc();
    if (at(TK::Int) || at(TK::Float)) {
      auto e = make(Expr::Kind::Const);
      e->value = at(TK::Int) ? IValue(cur().i) : IValue(cur().d);
      ++p_;
      return e;
    }
    if (at(TK::String)) {
      std::string s;
      while (at(TK::String)) s += t_[p_++].text;  // adjacent literals concatenate
      auto e = make(Expr::Kind::Const);
      e->loc = l;
      e->value = IValue(std::move(s));
      return e;
    }
    if (accept_op("(")) {
      if (accept_op(")")) {
        auto t = make(Expr::Kind::Tuple);
        t->loc = l;
        return t;
      }
      ExprPtr first = parse_expr();
      if (accept_op(")")) return first;
      auto t = make(Expr::Kind::Tuple);
      t->loc = l;
      t->kids.push_back(std::move(first));
      while (accept_op(",")) {
        if (is_op(")")) break;
        t->kids.push_back(parse_expr());
      }
      expect_op(")");
      return t;
    }
    if (accept_op("[")) {
      auto t = make(Expr::Kind::List);
      t->loc = l;
      while (!accept_op("]")) {
        t->kids.push_back(parse_expr());
        if (is_name("for")) fail("list comprehensions are not supported");
        if (!is_op("]")) expect_op(",");
      }
      return t;
    }
    if (accept_op("{")) {
      auto t = make(Expr::Kind::Dict);
      t->loc = l;
      while (!accept_op("}")) {
        t->kids.push_back(parse_expr());
        expect_op(":");
        t->kids.push_back(parse_expr());
        if (!is_op("}")) expect_op(",");
      }
      return t;
    }
    if (!at(TK::Name)) fail("unexpected '" + describe() + "' in an expression");
    const std::string n = name();
    if (n == "None" || n == "True" || n == "False") {
      auto e = make(Expr::Kind::Const);
      e->loc = l;
      if (n != "None") e->value = IValue(n == "True");
      return e;
    }
    if (scope_) {
      auto it = scope_->slots.find(n);
      if (it != scope_->slots.end()) {
        auto e = make(Expr::Kind::Local);
        e->loc = l;
        e->slot = it->second;
        e->name = n;
        return e;
      }
    }
    auto e = make(Expr::Kind::Global);
    e->loc = l;
    e->name = n;
    return e;
  }

  std::vector<Token> t_;
  const std::string* file_;
  size_t p_ = 0;
  int depth_ = 0;
  Scope* scope_ = nullptr;
};

}  // namespace

void CompilationUnit::parse_file(const std::string& path, const std::string& module, const std::string& source) {
  files_.push_back(std::make_unique<std::string>(path));
  const std::string* file = files_.back().get();
  Parser(Lexer(source, file).run(), file).parse_module(module, classes_, functions_);
}

const ClassType* CompilationUnit::find_class(const std::string& qualified_name) const {
  auto it = classes_.find(qualified_name);
  return it == classes_.end() ? nullptr : it->second.get();
}

int CompilationUnit::intern(const std::string& name) {
  return ids_.try_emplace(name, static_cast<int>(ids_.size())).first->second;
}

int CompilationUnit::id_of(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

const Function* CompilationUnit::find_function(const std::string& qualified_name) const {
  auto it = functions_.find(qualified_name);
  return it == functions_.end() ? nullptr : it->second.get();
}

}  // namespace ember::jit
