// Completions and manual pages from the CLI11 tree (cli_docs.h).
#include "cli/cli_docs.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace warden::cli {
namespace {

std::string join_words(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += separator;
    out += w;
  }
  return out;
}

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, separator)) out.push_back(item);
  return out;
}

// The choices of an IsMember check: CLI11 describes one as "{a,b,c}" (detail::generate_set);
// a transformer's map shows "a->b" pairs, which are not choices. CLI11 2.1 tells the number of
// validators only by throwing OptionNotFound past the last one.
std::vector<std::string> member_choices(CLI::Option* option) {
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option->get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    const std::string d = validator->get_description();
    if (d.size() >= 2 && d.front() == '{' && d.back() == '}' && d.find("->") == std::string::npos)
      return split_on(d.substr(1, d.size() - 2), ',');
  }
}

// "TEXT:{text,json}" or "INT:INT in [0 - 3600]" → "TEXT", "INT": the value's kind, without
// the validators' descriptions (choices and ranges are told apart).
std::string value_kind(const CLI::Option* option) {
  const std::string full = option->get_type_name();
  return full.substr(0, full.find(':'));
}

void add_options(CLI::App& app, CommandDoc* doc) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    const bool positional_only = option->get_positional() && !option->nonpositional();
    const bool repeatable = option->get_items_expected_max() > 1;
    if (positional_only) {
      PositionalDoc p;
      p.name = option->get_name();
      p.value_name = value_kind(option);
      p.choices = member_choices(option);
      p.description = option->get_description();
      p.required = option->get_required();
      p.repeatable = repeatable;
      doc->positionals.push_back(std::move(p));
      continue;
    }
    OptionDoc o;
    o.long_names = option->get_lnames();
    o.short_names = option->get_snames();
    if (option->get_expected_max() != 0) {  // a flag expects no value
      o.value_name = value_kind(option);
      o.choices = member_choices(option);
      o.default_value = option->get_default_str();
      o.repeatable = repeatable;
    }
    o.envname = option->get_envname();
    o.description = option->get_description();
    o.required = option->get_required();
    doc->options.push_back(std::move(o));
  }
}

CommandDoc describe_at(CLI::App& app, std::vector<std::string> path) {
  CommandDoc doc;
  doc.path = std::move(path);
  doc.description = app.get_description();
  doc.footer = app.get_footer();
  doc.requires_subcommand = app.get_require_subcommand_min() > 0;
  add_options(app, &doc);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_disabled()) continue;
    if (sub->get_name().empty()) {  // an option group: its options are the command's
      add_options(*sub, &doc);
      continue;
    }
    if (sub->get_group().empty()) continue;  // hidden
    std::vector<std::string> sub_path = doc.path;
    sub_path.push_back(sub->get_name());
    doc.subcommands.push_back(describe_at(*sub, std::move(sub_path)));
  }
  return doc;
}

std::vector<std::string> subcommand_names(const CommandDoc& doc) {
  std::vector<std::string> out;
  for (const auto& sub : doc.subcommands) out.push_back(sub.path.back());
  return out;
}

// A word the completion scripts list unquoted: a name, a choice. Anything else would need
// quoting in three shells' syntaxes; a definition that needs it stops the generator.
const std::string& plain_word(const std::string& word) {
  if (word.empty()) throw std::runtime_error("completion: an empty name or choice");
  for (unsigned char c : word) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '+' || c == '/' || c == '@' ||
                    c == '%';
    if (!ok)
      throw std::runtime_error("completion: a name or choice the scripts cannot list: " + word);
  }
  return word;
}

std::vector<std::string> option_words(const OptionDoc& o) {
  std::vector<std::string> out;
  for (const auto& s : o.short_names) out.push_back("-" + plain_word(s));
  for (const auto& l : o.long_names) out.push_back("--" + plain_word(l));
  return out;
}

std::vector<std::string> checked(const std::vector<std::string>& words) {
  for (const auto& w : words) plain_word(w);
  return words;
}

// 'text' for sh-like shells (bash, zsh): ' becomes '\''.
std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A summary on one line: the first sentence, control characters as spaces.
std::string summary(const std::string& text) {
  std::string s = first_sentence(text);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

// ---- bash ------------------------------------------------------------------------------

std::string bash_script(const CommandDoc& root) {
  const std::string program = root.path.front();
  const std::string fn = "_" + program;
  std::ostringstream o;
  o << "# bash completion for " << program << ": generated by `" << program
    << " completion bash` from " << program << "'s own\n"
    << "# command-line definitions. Install it as bash-completion/completions/" << program
    << ", or source it.\n\n"
    << "# Sets, for the command path $1 (\"" << program << "\", \"" << program
    << " audit query\"), subcommands, options (every\n"
    << "# option's names), takes_value (the options that take a value) and positional_choices.\n"
    << fn << "_command() {\n"
    << "  subcommands='' options='' takes_value='' positional_choices=''\n"
    << "  case \"$1\" in\n";
  for (const CommandDoc* c : all_commands(root)) {
    std::vector<std::string> options, takes_value, positional_choices;
    for (const auto& opt : c->options) {
      for (const auto& w : option_words(opt)) {
        options.push_back(w);
        if (!opt.value_name.empty()) takes_value.push_back(w);
      }
    }
    for (const auto& p : c->positionals)
      for (const auto& choice : checked(p.choices)) positional_choices.push_back(choice);
    o << "    " << single_quoted(join_words(c->path, " ")) << ")\n";
    if (!c->subcommands.empty())
      o << "      subcommands=" << single_quoted(join_words(checked(subcommand_names(*c)), " "))
        << "\n";
    o << "      options=" << single_quoted(join_words(options, " ")) << "\n";
    if (!takes_value.empty())
      o << "      takes_value=" << single_quoted(join_words(takes_value, " ")) << "\n";
    if (!positional_choices.empty())
      o << "      positional_choices=" << single_quoted(join_words(positional_choices, " "))
        << "\n";
    o << "      ;;\n";
  }
  o << "  esac\n}\n\n"
    << "# Prints the choices of option $2 of the command path $1; nothing for a file or free text.\n"
    << fn << "_choices() {\n"
    << "  case \"$1 $2\" in\n";
  for (const CommandDoc* c : all_commands(root)) {
    for (const auto& opt : c->options) {
      if (opt.choices.empty()) continue;
      std::vector<std::string> keys;
      for (const auto& w : option_words(opt))
        keys.push_back(single_quoted(join_words(c->path, " ") + " " + w));
      o << "    " << join_words(keys, "|") << ") echo "
        << single_quoted(join_words(checked(opt.choices), " ")) << " ;;\n";
    }
  }
  o << "  esac\n}\n\n"
    << fn << "() {\n"
    << "  local cur=${COMP_WORDS[COMP_CWORD]} path=" << program
    << " subcommands options takes_value positional_choices\n"
    << "  local i word pending='' choices\n"
    << "  COMPREPLY=()\n"
    << "  " << fn << "_command \"$path\"\n"
    << "  # The words before the cursor: subcommands descend, an option that takes a value takes\n"
    << "  # the next word (after an '=' that COMP_WORDBREAKS split off), '--' ends the options.\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    word=${COMP_WORDS[i]}\n"
    << "    if [[ -n $pending ]]; then\n"
    << "      [[ $word == = ]] || pending=''\n"
    << "      continue\n"
    << "    fi\n"
    << "    case $word in\n"
    << "      --) return 0 ;;  # a command's own words follow: the shell's default completion\n"
    << "      -*=*) ;;\n"
    << "      -*) [[ \" $takes_value \" == *\" $word \"* ]] && pending=$word ;;\n"
    << "      *)\n"
    << "        if [[ \" $subcommands \" == *\" $word \"* ]]; then\n"
    << "          path=\"$path $word\"\n"
    << "          " << fn << "_command \"$path\"\n"
    << "        fi ;;\n"
    << "    esac\n"
    << "  done\n"
    << "  [[ -n $pending && $cur == = ]] && cur=''\n"
    << "  if [[ -n $pending ]]; then\n"
    << "    choices=$(" << fn << "_choices \"$path\" \"$pending\")\n"
    << "    [[ -n $choices ]] && COMPREPLY=($(compgen -W \"$choices\" -- \"$cur\"))\n"
    << "    return 0\n"
    << "  fi\n"
    << "  case $cur in\n"
    << "    --*=*)\n"
    << "      choices=$(" << fn << "_choices \"$path\" \"${cur%%=*}\")\n"
    << "      [[ -n $choices ]] && COMPREPLY=($(compgen -P \"${cur%%=*}=\" -W \"$choices\" -- \"${cur#*=}\")) ;;\n"
    << "    -*) COMPREPLY=($(compgen -W \"$options\" -- \"$cur\")) ;;\n"
    << "    *)\n"
    << "      if [[ -n $subcommands ]]; then\n"
    << "        COMPREPLY=($(compgen -W \"$subcommands\" -- \"$cur\"))\n"
    << "      elif [[ -n $positional_choices ]]; then\n"
    << "        COMPREPLY=($(compgen -W \"$positional_choices\" -- \"$cur\"))\n"
    << "      fi ;;\n"
    << "  esac\n"
    << "  return 0\n"
    << "}\n\n"
    << "# Where the function offers nothing (a file, free text), readline completes file names.\n"
    << "complete -o default -F " << fn << " " << program << "\n";
  return o.str();
}

// ---- zsh -------------------------------------------------------------------------------

std::string zsh_function_name(const CommandDoc& c) {
  std::string name = "_" + join_words(c.path, "_");
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

// The description inside an _arguments spec's brackets: brackets and backslashes escaped.
std::string zsh_bracketed(const std::string& text) {
  std::string out;
  for (char c : summary(text)) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Completes a value: one of the choices, else a file name.
std::string zsh_action(const std::vector<std::string>& choices) {
  if (!choices.empty()) return "(" + join_words(checked(choices), " ") + ")";
  return "_files";
}

std::string zsh_option_specs(const CommandDoc& c) {
  std::string out;
  for (const auto& opt : c.options) {
    for (const auto& w : option_words(opt)) {
      std::string spec =
          (opt.repeatable ? "*" : "") + w + "[" + zsh_bracketed(opt.description) + "]";
      if (!opt.value_name.empty()) spec += ":" + opt.value_name + ":" + zsh_action(opt.choices);
      out += "    " + single_quoted(spec) + " \\\n";
    }
  }
  return out;
}

std::string zsh_script(const CommandDoc& root) {
  const std::string program = root.path.front();
  std::set<std::string> names;
  for (const CommandDoc* c : all_commands(root)) {
    if (!names.insert(zsh_function_name(*c)).second)
      throw std::runtime_error("completion: two commands map to the zsh function " +
                               zsh_function_name(*c));
  }
  std::ostringstream o;
  o << "#compdef " << program << "\n"
    << "# zsh completion for " << program << ": generated by `" << program
    << " completion zsh` from " << program << "'s own\n"
    << "# command-line definitions. Install it as _" << program
    << " in a directory of $fpath, or source it after compinit.\n\n";
  const auto all = all_commands(root);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const CommandDoc& c = **it;
    o << zsh_function_name(c) << "() {\n";
    if (c.subcommands.empty()) {
      o << "  _arguments -s -S \\\n" << zsh_option_specs(c);
      for (const auto& p : c.positionals) {
        const std::string action = zsh_action(p.choices);
        std::string spec = p.repeatable ? "*:" : (p.required ? ":" : "::");
        spec += plain_word(p.name) + ":" + action;
        o << "    " << single_quoted(spec) << " \\\n";
      }
      o << "    && return 0\n  return 1\n}\n\n";
      continue;
    }
    o << "  local curcontext=$curcontext state state_descr line\n"
      << "  typeset -A opt_args\n"
      << "  _arguments -C -s -S \\\n"
      << zsh_option_specs(c) << "    '1: :->command' \\\n"
      << "    '*:: :->argument' && return 0\n"
      << "  case $state in\n"
      << "    command)\n"
      << "      local -a commands=(\n";
    for (const auto& sub : c.subcommands)
      o << "        " << single_quoted(plain_word(sub.path.back()) + ":" + summary(sub.description))
        << "\n";
    o << "      )\n"
      << "      _describe -t commands " << single_quoted(join_words(c.path, " ") + " command")
      << " commands ;;\n"
      << "    argument)\n"
      << "      curcontext=${curcontext%:*:*}:" << join_words(c.path, "-") << "-$line[1]:\n"
      << "      case $line[1] in\n";
    for (const auto& sub : c.subcommands)
      o << "        " << sub.path.back() << ") " << zsh_function_name(sub) << " ;;\n";
    o << "        *) _files ;;\n"
      << "      esac ;;\n"
      << "  esac\n}\n\n";
  }
  o << "if [[ $funcstack[1] == _" << program << " ]]; then\n"
    << "  _" << program << " \"$@\"\n"
    << "else\n"
    << "  compdef _" << program << " " << program << "\n"
    << "fi\n";
  return o.str();
}

// ---- fish ------------------------------------------------------------------------------

// 'text' for fish: backslash and ' escaped.
std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_script(const CommandDoc& root) {
  const std::string program = root.path.front();
  const std::string fn = "__" + program;
  std::ostringstream o;
  o << "# fish completion for " << program << ": generated by `" << program
    << " completion fish` from " << program << "'s own\n"
    << "# command-line definitions. Install it as vendor_completions.d/" << program
    << ".fish, or source it.\n\n"
    << "# The subcommand path of the command line being completed: \"" << program << "\", \""
    << program << " audit query\".\n"
    << "function " << fn << "_command_path\n"
    << "    set -l tokens (commandline -opc)\n"
    << "    set -e tokens[1]\n"
    << "    set -l path " << program << "\n"
    << "    for token in $tokens\n"
    << "        switch \"$path $token\"\n"
    << "            case";
  for (const CommandDoc* c : all_commands(root))
    if (c != &root) o << " " << fish_quoted(join_words(c->path, " "));
  o << "\n"
    << "                set path \"$path $token\"\n"
    << "        end\n"
    << "    end\n"
    << "    echo $path\n"
    << "end\n\n"
    << "function " << fn << "_at\n"
    << "    test (" << fn << "_command_path) = \"$argv[1]\"\n"
    << "end\n\n";
  for (const CommandDoc* c : all_commands(root)) {
    const std::string at = "-n " + fish_quoted(fn + "_at " + fish_quoted(join_words(c->path, " ")));
    for (const auto& sub : c->subcommands) {
      o << "complete -c " << program << " " << at << " -f -a " << plain_word(sub.path.back())
        << " -d " << fish_quoted(summary(sub.description)) << "\n";
    }
    for (const auto& opt : c->options) {
      o << "complete -c " << program << " " << at;
      for (const auto& s : opt.short_names) o << " -s " << plain_word(s);
      for (const auto& l : opt.long_names) o << " -l " << plain_word(l);
      if (!opt.choices.empty())
        o << " -x -a " << fish_quoted(join_words(checked(opt.choices), " "));
      else if (!opt.value_name.empty())
        o << " -r";
      o << " -d " << fish_quoted(summary(opt.description)) << "\n";
    }
    for (const auto& p : c->positionals) {
      if (p.choices.empty()) continue;
      o << "complete -c " << program << " " << at << " -f -a "
        << fish_quoted(join_words(checked(p.choices), " ")) << " -d "
        << fish_quoted(summary(p.description)) << "\n";
    }
  }
  return o.str();
}

// ---- man -------------------------------------------------------------------------------

// Text for a roff text line: backslashes as \e, '-' as \- (an ASCII minus, so that options
// can be searched and copied), every non-ASCII character as \[uXXXX] (the page is ASCII,
// whatever the formatter's input encoding), control characters as spaces, and a line never
// starts with a control character ('.' or ''').
// A word too long for a line (a JSON example) may break after its punctuation (\: is a
// break point of no width), or groff warns that it cannot break the line.
std::string roff(const std::string& text) {
  constexpr std::size_t kLongWord = 30;
  std::vector<bool> in_long_word(text.size(), false);
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    if (end - start > kLongWord)
      for (std::size_t k = start; k < end; ++k) in_long_word[k] = true;
    start = end + 1;
  }
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\\')
        out += "\\e";
      else if (c == '-')
        out += "\\-";
      else if (c < 0x20 || c == 0x7f)
        out += ' ';
      else
        out += static_cast<char>(c);
      if (in_long_word[i] && (c == ',' || c == ':' || c == '/' || c == '|' || c == '{' || c == '}'))
        out += "\\:";
      ++i;
      continue;
    }
    int length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    std::uint32_t code = length == 4 ? c & 0x07 : length == 3 ? c & 0x0f : c & 0x1f;
    bool valid = length > 0 && i + static_cast<std::size_t>(length) <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    if (!valid) {
      out += "\\[uFFFD]";  // the replacement character
      ++i;
      continue;
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "\\[u%04X]", static_cast<unsigned>(code));
    out += hex;
    i += static_cast<std::size_t>(length);
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

std::string page_name(const CommandDoc& c) { return join_words(c.path, "-"); }

// A description that more sentences follow: ends with a full stop.
std::string as_sentence(const std::string& text) {
  if (text.empty() || text.back() == '.' || text.back() == '!' || text.back() == '?') return text;
  return text + ".";
}

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

std::string option_synopsis(const OptionDoc& opt) {
  std::vector<std::string> names;
  for (const auto& s : opt.short_names) names.push_back("\\fB\\-" + roff(s) + "\\fR");
  for (const auto& l : opt.long_names) names.push_back("\\fB\\-\\-" + roff(l) + "\\fR");
  std::string out = join_words(names, ", ");
  if (!opt.value_name.empty()) out += " \\fI" + roff(opt.value_name) + "\\fR";
  if (opt.repeatable) out += " ...";
  return out;
}

void paragraphs(std::ostringstream& o, const std::string& text) {
  bool first = true;
  for (const auto& line : split_on(text, '\n')) {
    if (line.empty()) continue;
    if (!first) o << ".PP\n";
    o << roff(line) << "\n";
    first = false;
  }
}

ManPage man_page(const CommandDoc& c, const CommandDoc* parent, const std::string& version) {
  const std::string program = c.path.front();
  std::ostringstream o;
  o << ".\\\" Generated by `" << program << " man` from " << program
    << "'s command-line definitions: do not edit.\n"
    << ".TH " << roff(upper(page_name(c))) << " 1 \"\" \"" << roff(version)
    << "\" \"Warden Manual\"\n"
    << ".nh\n"    // no hyphenation: option names and paths stay whole, to search and copy
    << ".ad l\n"  // ragged right
    << ".SH NAME\n"
    << roff(page_name(c)) << " \\- "
    << roff(summary(c.description.empty() ? page_name(c) : c.description)) << "\n"
    << ".SH SYNOPSIS\n"
    << ".B " << roff(join_words(c.path, " ")) << "\n";
  if (!c.options.empty()) o << "[\\fIOPTIONS\\fR]\n";
  if (!c.subcommands.empty())
    o << (c.requires_subcommand ? "\\fICOMMAND\\fR\n" : "[\\fICOMMAND\\fR]\n");
  for (const auto& p : c.positionals) {
    std::string word = "\\fI" + roff(p.name) + "\\fR" + (p.repeatable ? "..." : "");
    o << (p.required ? word : "[" + word + "]") << "\n";
  }
  if (!c.description.empty() || !c.footer.empty()) {
    o << ".SH DESCRIPTION\n";
    paragraphs(o, c.description);
    if (!c.description.empty() && !c.footer.empty()) o << ".PP\n";
    paragraphs(o, c.footer);
  }
  if (!c.subcommands.empty()) {
    o << ".SH COMMANDS\n";
    for (const auto& sub : c.subcommands) {
      o << ".TP\n\\fB" << roff(sub.path.back()) << "\\fR\n"
        << roff(as_sentence(sub.description)) << " See \\fB" << roff(page_name(sub))
        << "\\fR(1).\n";
    }
  }
  if (!c.positionals.empty()) {
    o << ".SH ARGUMENTS\n";
    for (const auto& p : c.positionals) {
      o << ".TP\n\\fI" << roff(p.name) << "\\fR" << (p.repeatable ? " ..." : "") << "\n"
        << roff(as_sentence(p.description));
      if (!p.choices.empty()) o << " One of: " << roff(join_words(p.choices, ", ")) << ".";
      if (p.required) o << " Required.";
      o << "\n";
    }
  }
  if (!c.options.empty()) {
    o << ".SH OPTIONS\n";
    for (const auto& opt : c.options) {
      o << ".TP\n" << option_synopsis(opt) << "\n" << roff(as_sentence(opt.description));
      if (!opt.choices.empty()) o << " One of: " << roff(join_words(opt.choices, ", ")) << ".";
      if (!opt.default_value.empty()) o << " Default: " << roff(opt.default_value) << ".";
      if (!opt.envname.empty()) o << " Default from $" << roff(opt.envname) << ".";
      if (opt.required) o << " Required.";
      o << "\n";
    }
  }
  std::vector<const OptionDoc*> with_env;
  for (const auto& opt : c.options)
    if (!opt.envname.empty()) with_env.push_back(&opt);
  if (!with_env.empty()) {
    o << ".SH ENVIRONMENT\n";
    for (const OptionDoc* opt : with_env) {
      o << ".TP\n\\fB" << roff(opt->envname) << "\\fR\nRead by " << option_synopsis(*opt)
        << " when it is not given.\n";
    }
  }
  std::vector<std::string> see_also;
  if (parent) {
    if (parent->path.size() > 1) see_also.push_back("\\fB" + roff(program) + "\\fR(1)");
    see_also.push_back("\\fB" + roff(page_name(*parent)) + "\\fR(1)");
  }
  for (const auto& sub : c.subcommands)
    see_also.push_back("\\fB" + roff(page_name(sub)) + "\\fR(1)");
  if (!see_also.empty()) o << ".SH SEE ALSO\n" << join_words(see_also, ",\n") << "\n";
  return {page_name(c) + ".1", o.str()};
}

void collect_pages(const CommandDoc& c, const CommandDoc* parent, const std::string& version,
                   std::vector<ManPage>* out) {
  out->push_back(man_page(c, parent, version));
  for (const auto& sub : c.subcommands) collect_pages(sub, &c, version, out);
}

}  // namespace

CommandDoc describe_command(CLI::App& app, const std::string& program) {
  return describe_at(app, {program});
}

std::vector<const CommandDoc*> all_commands(const CommandDoc& root) {
  std::vector<const CommandDoc*> out;
  std::function<void(const CommandDoc&)> walk = [&](const CommandDoc& c) {
    out.push_back(&c);
    for (const auto& sub : c.subcommands) walk(sub);
  };
  walk(root);
  return out;
}

std::string first_sentence(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  for (std::size_t at = line.find(". "); at != std::string::npos; at = line.find(". ", at + 1)) {
    const std::string before = line.substr(0, at);
    const bool abbreviation =
        before.size() >= 3 && (before.compare(before.size() - 3, 3, "e.g") == 0 ||
                               before.compare(before.size() - 3, 3, "i.e") == 0);
    if (!abbreviation) return before;
  }
  if (!line.empty() && line.back() == '.') line.pop_back();
  return line;
}

std::string bash_completion(const CommandDoc& root) { return bash_script(root); }
std::string zsh_completion(const CommandDoc& root) { return zsh_script(root); }
std::string fish_completion(const CommandDoc& root) { return fish_script(root); }

std::vector<ManPage> man_pages(const CommandDoc& root, const std::string& version) {
  std::vector<ManPage> out;
  collect_pages(root, nullptr, version, &out);
  return out;
}

}  // namespace warden::cli
