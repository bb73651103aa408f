// Internals of the shell parser: one recursive-descent Parser per piece of text (the line, a
// backquoted body, a `bash -c` string), sharing a Context that collects the commands. Used only
// by shell_lexer.cpp, shell_words.cpp, shell_grammar.cpp and shell_parser.cpp; each parse()
// call owns its own Context, so nothing here is shared between threads. Errors throw ShellError.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/shell_parser.h"

namespace warden::shell::detail {

// ASCII character classes (never locale-dependent, safe on any byte).
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_name_start(char c) { return is_alpha(c) || c == '_'; }
inline bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
inline bool is_meta(char c) {  // ends an unquoted word
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

// Thrown inside the parser for any reason to fail closed; parse() turns it into `error`.
struct ShellError {
  std::string message;
  Failure failure = Failure::Syntax;
};

// One shell word as lexed: source text plus the value after quote removal. Expansions the
// parser cannot resolve ($VAR, ${…}, $(…), `…`, $((…))) are kept as written in `value`.
struct Word {
  std::string raw;         // exact source text
  std::string value;       // after quote removal
  bool quoted = false;     // had quotes or backslash escapes
  bool dynamic = false;    // holds an unresolved expansion or an unquoted glob
  bool glob = false;       // holds an unquoted glob character
  bool expansion = false;  // holds an unresolved expansion
  void set_expansion() { dynamic = expansion = true; }
  void set_glob() { dynamic = glob = true; }
  void merge(const Word& o) {
    dynamic = dynamic || o.dynamic;
    glob = glob || o.glob;
    expansion = expansion || o.expansion;
  }
};

// Appends the strings of `more` that `to` does not hold yet.
inline void add_unique(std::vector<std::string>& to, const std::vector<std::string>& more) {
  for (const std::string& r : more)
    if (std::find(to.begin(), to.end(), r) == to.end()) to.push_back(r);
}

// Why a command is dynamic (SimpleCommand::dynamic and its reasons), carried down to the
// commands unwrapped or re-parsed from it.
struct Unknowns {
  bool glob = false;
  bool expansion = false;
  bool runtime = false;               // operands supplied at run time (find -exec, xargs, parallel)
  std::vector<std::string> replaced;  // SimpleCommand::replaced
  bool any() const { return glob || expansion || runtime; }
  void add_replaced(const std::vector<std::string>& more) { add_unique(replaced, more); }
  void add(const Word& w) {
    glob = glob || w.glob;
    expansion = expansion || w.expansion;
  }
  void add(const Unknowns& u) {
    glob = glob || u.glob;
    expansion = expansion || u.expansion;
    runtime = runtime || u.runtime;
    add_replaced(u.replaced);
  }
};

enum class Tok {
  End,
  Newline,
  Word,
  Semi,
  Amp,
  AndIf,
  OrIf,
  Pipe,
  PipeAmp,
  DSemi,
  SemiAmp,
  DSemiAmp,
  LParen,
  DLParen,
  RParen,
  Redir
};

struct Token {
  Tok type = Tok::End;
  Word word;                     // Tok::Word
  std::string op;                // Tok::Redir: ">", ">>", "<<-", …
  int fd = -1;                   // Tok::Redir: explicit fd prefix, -1 if none
  std::size_t start = 0;         // offset in the parser's text
  std::string describe() const;  // for error messages
};

// A wrapper's options as the parser reads them to find the command it wraps: which take a
// value (the word after them is skipped) and which hand a command string to a shell. The
// effects table lists a wrapper's options again for its bare call (`sudo -l`, `nice -n 5`);
// engine_tests/effects_wrappers_test holds the two lists together.
struct WrapperOptions {
  std::string_view program;
  std::string_view short_val;  // letters that take a value (attached or the next word)
  std::span<const std::string_view> long_val;  // long options (no `--`) taking the next word
  std::string_view short_opt = {};             // letters whose optional value can only be attached
  // The option whose value is a command string a shell runs (`su -c CMD`): its letter (0:
  // none) and long names. Among short_val and long_val where it is read with the options;
  // flock reads it after its FILE.
  char command = 0;
  std::span<const std::string_view> command_long = {};
};

// Every wrapper whose options the parser reads, sorted by program.
std::span<const WrapperOptions> wrapper_options();

// Set operations on the working directories a command may run in (WorkingDir in
// shell_parser.h). A set never grows past kMaxCwds: past it, an unknown directory stands
// for the rest.
using Cwds = std::vector<WorkingDir>;
constexpr std::size_t kMaxCwds = 8;
constexpr std::size_t kMaxCwdSteps = 64;
void add_cwd(Cwds& set, const WorkingDir& d);
void add_cwds(Cwds& set, const Cwds& more);
inline WorkingDir unknown_cwd() { return WorkingDir{false, {}}; }

// What the shell being modelled remembers between commands, as far as the line shows it:
// where it may be, OLDPWD, and the `pushd` stack (below its top, each entry a set).
struct ShellState {
  Cwds cwds{WorkingDir{}};
  Cwds oldpwd{unknown_cwd()};  // OLDPWD comes from outside the line until a cd sets it
  std::vector<Cwds> dirs;
  bool dirs_known = false;  // the stack holds only what the line pushed
};

struct Context {
  Limits limits;
  ShellState sh;
  // Where `cd X` leaves the shell when it succeeds, for `cd X && …`: set by the cd, valid
  // while it is the last command emitted (cd_index).
  std::optional<Cwds> cd_success;
  Cwds cd_before;
  Cwds cd_oldpwd;  // OLDPWD when that cd succeeded
  std::size_t cd_index = 0;
  bool moved = false;     // some cd of the line may have changed the directory
  int runtime = 0;        // inside a command string whose words come at run time (xargs, parallel)
  bool home_set = false;  // HOME assigned in the line: `cd` alone goes who knows where
  bool cdpath_set = false;    // CDPATH assigned: `cd name` may go elsewhere
  bool cdable_vars = false;   // shopt -s cdable_vars: `cd name` may go to $name
  bool cd_untrusted = false;  // an alias, a sourced file or `enable` may have replaced cd
  std::vector<std::string> cwd_functions;  // functions whose body changes the directory
  std::vector<std::size_t> deferred;       // commands of function bodies and traps
  std::vector<std::string> tainted;        // variables whose value may hold code (a[$(…)])
  std::vector<std::string> integers;       // variables declared -i: assigning evaluates
  bool has(const std::vector<std::string>& names, const std::string& n) const;
  int max_nest = 64;  // structural nesting (subshells, groups, if, ${…}, …) bound
  int nest = 0;
  unsigned ticks = 0;               // tokens lexed, for the periodic deadline check
  std::size_t total_words = 0;      // words + assignments + redirects over all emitted commands
  void count_words(std::size_t n);  // adds n; throws past limits.max_total_words
  std::vector<SimpleCommand> out;
};

// Where `cd t` from `from` goes; unknown when the target is known only at run time or may
// be looked up elsewhere (CDPATH, cdable_vars).
WorkingDir resolve_dir(const WorkingDir& from, const std::string& t, bool dynamic,
                       const Context& ctx);

// Runs a piece of the line in a subshell: the shell state is restored when it ends.
class SubshellScope {
 public:
  explicit SubshellScope(Context& ctx) : ctx_(ctx), saved_(ctx.sh) { ctx_.cd_success.reset(); }
  ~SubshellScope() {
    ctx_.sh = std::move(saved_);
    ctx_.cd_success.reset();
  }
  SubshellScope(const SubshellScope&) = delete;
  SubshellScope& operator=(const SubshellScope&) = delete;

 private:
  Context& ctx_;
  ShellState saved_;
};

// Counts one level of recursion; throws before the stack can grow past the bound.
class NestGuard {
 public:
  explicit NestGuard(Context& ctx);
  ~NestGuard() { --ctx_.nest; }
  NestGuard(const NestGuard&) = delete;
  NestGuard& operator=(const NestGuard&) = delete;

 private:
  Context& ctx_;
};

class Parser {
 public:
  Parser(Context& ctx, std::string_view text, int depth, std::vector<std::string> wrappers)
      : ctx_(ctx), text_(text), depth_(depth), wrappers_(std::move(wrappers)) {}

  void parse_all();          // the whole text as a command list
  void scan_heredoc_body();  // the whole text as an unquoted here-document body

 private:
  struct PendingHeredoc {
    std::string delim;
    bool strip_tabs = false;
    bool expand = false;
    int fd = 0;
    // Set when the body is a script read by a shell on stdin (`bash <<EOF`).
    bool script = false;
    std::vector<std::string> script_wrappers;
    std::vector<Assignment> script_assignments;
    int script_depth = 0;  // depth of the shell that reads it; its commands are one deeper
    Cwds script_cwds{WorkingDir{}};  // where that shell starts
  };

  // ---- lexer (shell_lexer.cpp; word pieces in shell_words.cpp) ----
  const Token& peek();
  Token next();
  Token lex();
  Token lex_operator();
  Word read_word();
  void read_single_quote(Word& w);
  void read_double_quote(Word& w);            // pos_ just after the opening quote
  void read_ansi_c(Word& w);                  // pos_ at `$'`
  void read_dollar(Word& w, bool in_dquote);  // pos_ at `$`
  void read_brace_param(Word& w, bool in_dquote);
  void read_command_subst(Word& w);  // pos_ at `$(`, `<(` or `>(`
  void read_backquote(Word& w, bool in_dquote);
  void read_array(Word& w);                       // pos_ at `(` of `name=(…)`
  void check_brace_param(std::string_view body);  // the text between `${` and `}`
  bool scan_arith();                              // pos_ after `((`; false if it is not `…))`
  // Whether a bracket expression opened just before `i` closes with `]` within the word
  // (`[ab]`, `[!a]`, `[]a]`), which makes the `[` a glob.
  bool closes_bracket(std::size_t i) const;
  // Whether the text from `i` (just after `((`) closes as `))` (arithmetic) rather than as
  // nested parentheses `( … ) … )`. A cheap pre-scan, so nothing is parsed twice.
  bool closes_as_arith(std::size_t i) const;
  void read_heredocs();                 // when the newline before the bodies is consumed
  void enter_depth(int inc = 1) const;  // throws if depth_ + inc exceeds the limit

  // ---- grammar (shell_grammar.cpp) ----
  static bool is_kw(const Token& t, std::string_view kw);
  static bool is_compound_start(const Token& t);
  bool at_stop();
  void expect_kw(std::string_view kw);
  void skip_newlines();
  void parse_list();
  void parse_and_or();
  void parse_pipeline();
  void parse_command(std::vector<Word> prefix);
  void parse_simple(std::vector<Word> prefix);
  Redirect parse_redirect(Unknowns& dyn);
  void parse_trailing_redirects();
  void parse_function_body();
  void parse_subshell_body();  // after `(`: list then `)`
  void parse_group();
  void parse_if();
  void parse_loop();
  void parse_for();
  void parse_case();
  void parse_function_kw();
  void parse_cond();
  void parse_arith_command();
  void parse_function_def(const std::string& name);  // at the body, after `name ()`
  void parse_compound_branches();                    // if/case: the directory after is any branch's

  // ---- unwrapping and emission (shell_parser.cpp) ----
  // first_heredoc: index in heredocs_ of this command's first here-document.
  void finish_simple(std::vector<Word> words, std::vector<Assignment> assignments,
                     std::vector<Redirect> redirects, Unknowns dyn, std::size_t first_heredoc);
  // Unwraps the wrappers at the start of `words` and emits what they run (recursing for
  // `find -exec` commands, which are words of the same line).
  void run_words(std::vector<Word> words, std::vector<std::string> wrappers,
                 std::vector<Assignment> assignments, std::vector<Redirect> redirects, Unknowns dyn,
                 std::size_t first_heredoc);
  void emit(std::vector<std::string> argv, std::vector<std::string> wrappers,
            std::vector<Assignment> assignments, std::vector<Redirect> redirects, Unknowns dyn);
  void parse_nested(const std::string& text, std::vector<std::string> wrappers, int depth_inc,
                    const std::vector<Assignment>& assignments,
                    const std::vector<Redirect>& redirects, Unknowns dyn);
  // A shell at `depth` with these wrappers (its own name last) reads this command's stdin:
  // parse the here-documents (from first_heredoc) and here-strings feeding fd 0 as scripts.
  void feed_stdin(const std::vector<std::string>& shell_wrappers, int depth,
                  const std::vector<Assignment>& assignments,
                  const std::vector<Redirect>& redirects, Unknowns dyn, std::size_t first_heredoc);

  // ---- shell state and evaluated text (shell_state.cpp) ----
  // After the command argv[i…] was emitted: what it changes in the shell state (cd, pushd,
  // popd, source, shopt …). in_shell: it runs in this shell (no wrapper but builtin,
  // command or the time keyword).
  void follow_state(const std::vector<std::string>& argv, std::size_t i,
                    const std::vector<Word>& words, bool in_shell);
  // Text the command's builtin evaluates as code (test -v, let, declare -i, printf -v,
  // read, mapfile -C, hash -p, trap, complete -C …).
  void evaluated_text(const std::vector<std::string>& argv, std::size_t i,
                      const std::vector<Word>& words);
  void note_code(std::string what, std::string_view text);
  // Arithmetic text (`$((…))`, `((…))`, a subscript, an operand of `let` or `[[ -eq ]]`):
  // noted as code when it may evaluate code (a subscript, a substitution, a variable whose
  // value may hold code).
  void check_arith(std::string_view what, std::string_view text, bool dynamic);
  void check_name_subscript(std::string_view what, std::string_view name, bool dynamic);
  void taint_assignment(const Assignment& a);
  // Pending code goes to the last command emitted since index `first` (a substitution's
  // inside `((…))`), or to an empty command when there is none.
  void flush_code(std::size_t first);

  Context& ctx_;
  std::vector<std::string> pending_code_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_;
  std::vector<std::string> wrappers_;  // prefix for every command parsed from this text
  std::vector<std::string> replaced_;  // SimpleCommand::replaced of every command parsed from it
  std::optional<Token> peeked_;
  std::vector<PendingHeredoc> heredocs_;
};

}  // namespace warden::shell::detail
