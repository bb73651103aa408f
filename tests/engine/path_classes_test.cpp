// Path classes: the [[class]] table's errors (code and line), first-match order, exceptions,
// case-insensitivity, "~/" expansion and the resolved reading.
#include <catch2/catch.hpp>

#include <re2/re2.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>

#include "bindings/glob.h"
#include "bindings/text.h"
#include "engine/path_classes.h"
#include "tests/build_paths.h"

using namespace warden;

namespace {

std::shared_ptr<PathClasses> parse_ok(const std::string& text) {
  Diagnostics diagnostics;
  auto table = PathClasses::parse({"paths.toml", text}, &diagnostics);
  for (const auto& d : diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(diagnostics.empty());
  REQUIRE(table);
  return table;
}

// Parses text that must fail; returns its diagnostics (every one E_PATH_CLASSES in paths.toml).
Diagnostics parse_errors(const std::string& text) {
  Diagnostics diagnostics;
  auto table = PathClasses::parse({"paths.toml", text}, &diagnostics);
  CHECK_FALSE(table);
  REQUIRE_FALSE(diagnostics.empty());
  for (const auto& d : diagnostics) {
    INFO(d.to_text());
    CHECK(d.code == code::kPathClasses);
    CHECK(d.file == "paths.toml");
    CHECK(d.severity == Severity::Error);
  }
  return diagnostics;
}

bool has_line(const Diagnostics& diagnostics, long line, const std::string& text) {
  for (const auto& d : diagnostics)
    if (d.line == line && d.message.find(text) != std::string::npos) return true;
  return false;
}

const char* kHomeDir = "/home/user";

const char* kPathTable = R"([[class]]
name = "credential"
patterns = ["~/.ssh/id_*", "**/.env", "**/.env.*", "**/*.pem"]
except = ["**/.env.example", "**/*.pub"]

[[class]]
name = "persistence"
patterns = ["**/.git/hooks/**", "~/.bashrc", "**/.env.example"]

[[class]]
name = "system"
case-insensitive = false
patterns = ["/etc/**", "/usr/**"]
)";

}  // namespace

TEST_CASE("path classes: the first class in file order wins; none when no class matches",
          "[path-classes]") {
  auto t = parse_ok(kPathTable);
  CHECK(t->names() == std::vector<std::string>{"credential", "persistence", "system"});
  CHECK(t->classify("/home/user/project/.env", "", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/project/a/b/server.pem", "", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/project/.git/hooks/pre-commit", "", kHomeDir) == "persistence");
  CHECK(t->classify("/home/user/project/sub/.git/hooks/x", "", kHomeDir) == "persistence");
  CHECK(t->classify("/etc/passwd", "", kHomeDir) == "system");
  CHECK(t->classify("/home/user/project/src/main.cpp", "", kHomeDir) == "none");
  CHECK(t->classify("/home/user/project/.envrc", "", kHomeDir) == "none");
  // "*" does not cross "/": ~/.ssh/id_* is only directly in ~/.ssh.
  CHECK(t->classify("/home/user/.ssh/sub/id_rsa", "", kHomeDir) == "none");
}

TEST_CASE("path classes: an exception removes its class only, and a later class may match",
          "[path-classes]") {
  auto t = parse_ok(kPathTable);
  CHECK(t->classify("/home/user/project/.env.local", "", kHomeDir) == "credential");
  // excepted from credential, but persistence lists it: the next class wins
  CHECK(t->classify("/home/user/project/.env.example", "", kHomeDir) == "persistence");
  CHECK(t->classify("/home/user/.ssh/id_rsa.pub", "", kHomeDir) == "none");
  CHECK(t->classify("/home/user/.ssh/id_rsa", "", kHomeDir) == "credential");
}

TEST_CASE("path classes: case-insensitive by default, case-sensitive when asked",
          "[path-classes]") {
  auto t = parse_ok(kPathTable);
  CHECK(t->classify("/home/user/project/.ENV", "", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/project/KEY.PEM", "", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/.SSH/ID_RSA", "", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/project/.ENV.EXAMPLE", "", kHomeDir) == "persistence");
  CHECK(t->classify("/etc/hosts", "", kHomeDir) == "system");
  CHECK(t->classify("/ETC/hosts", "", kHomeDir) == "none");  // system is case-sensitive
}

TEST_CASE("path classes: ~/ means the home given to classify", "[path-classes]") {
  auto t = parse_ok(kPathTable);
  CHECK(t->classify("/home/user/.bashrc", "", "/home/user") == "persistence");
  CHECK(t->classify("/home/user/.bashrc", "", "/home/other") == "none");
  CHECK(t->classify("/home/other/.bashrc", "", "/home/other") == "persistence");
  CHECK(t->classify("/root/.ssh/id_ed25519", "", "/root") == "credential");
  CHECK(t->classify("/root/.ssh/id_ed25519", "", "/home/user") == "none");
  // A home holding glob characters means itself, not a pattern.
  CHECK(t->classify("/home/a*b/.bashrc", "", "/home/a*b") == "persistence");
  CHECK(t->classify("/home/axxb/.bashrc", "", "/home/a*b") == "none");
  // Several threads, several homes, the same table.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const std::string home = "/home/u" + std::to_string(i);
      for (int n = 0; n < 200; ++n) {
        if (t->classify(home + "/.bashrc", "", home) != "persistence") ++wrong;
        if (t->classify("/home/user/.bashrc", "", home) != "none") ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("path classes: a glob's class reads ~/ as the home given, per home and per thread",
          "[path-classes][glob]") {
  auto t = parse_ok(kPathTable);
  // The patterns are read once per home: each home's answers stay its own, in any order.
  for (int round = 0; round < 2; ++round) {
    CHECK(t->classify_glob("/home/user/.ssh/id_*", "/home/user", false, true) == "credential");
    CHECK(t->classify_glob("/home/user/.ssh/id_*", "/home/other", false, true) == "none");
    CHECK(t->classify_glob("/home/other/.ssh/id_*", "/home/other", false, true) == "credential");
    CHECK(t->classify_glob("/home/other/.bash{rc,_profile}", "/home/other", false, true) ==
          "persistence");
    CHECK(t->classify_glob("/home/user/.bash{rc,_profile}", "/home/other", false, true) == "none");
  }
  // Case: credential reads without case, system with it.
  CHECK(t->classify_glob("/home/user/project/*.PEM", kHomeDir, false, false) == "credential");
  CHECK(t->classify_glob("/ETC/pass*", kHomeDir, false, true) == "none");
  CHECK(t->classify_glob("/etc/pass*", kHomeDir, false, true) == "system");
  // Several threads, several homes, the same table.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const std::string home = "/home/u" + std::to_string(i);
      for (int n = 0; n < 50; ++n) {
        if (t->classify_glob(home + "/.ssh/id_*", home, false, true) != "credential") ++wrong;
        if (t->classify_glob("/home/user/.ssh/id_*", home, false, true) != "none") ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE(
    "path classes: the resolved path is classified too; an exception on one reading does not clear the other",
    "[path-classes]") {
  auto t = parse_ok(kPathTable);
  // ws/link -> ~/.ssh/id_rsa
  CHECK(t->classify("/home/user/project/link", "/home/user/.ssh/id_rsa", kHomeDir) == "credential");
  // The name is an excepted one, but what it resolves to is a credential.
  CHECK(t->classify("/home/user/project/x.pub", "/home/user/.ssh/id_rsa", kHomeDir) ==
        "credential");
  // Of the two readings' classes, the earlier in file order wins.
  CHECK(t->classify("/etc/link", "/home/user/project/.env", kHomeDir) == "credential");
  CHECK(t->classify("/home/user/project/.git/hooks/a", "/etc/x", kHomeDir) == "persistence");
  CHECK(t->classify("/home/user/project/a", "/home/user/project/b", kHomeDir) == "none");
}

TEST_CASE("path classes: invalid UTF-8 does not slip past a glob", "[path-classes]") {
  auto t = parse_ok(kPathTable);
  CHECK(t->classify(std::string("/home/user/.ssh/id_\xff"), "", kHomeDir) == "credential");
  CHECK(t->classify(std::string("/etc/\xfe\xff"), "", kHomeDir) == "system");
}

TEST_CASE("path classes: answers stay the same when asked again, past the remembered ones",
          "[path-classes]") {
  auto t = parse_ok(kPathTable);
  for (int round = 0; round < 2; ++round) {
    int wrong = 0;
    for (int i = 0; i < 5000; ++i) {
      const std::string dir = "/home/user/project/d" + std::to_string(i);
      if (t->classify(dir + "/.env", "", kHomeDir) != "credential") ++wrong;
      if (t->classify(dir + "/a.txt", "", kHomeDir) != "none") ++wrong;
      if (t->classify(dir + "/link", "/etc/x" + std::to_string(i), kHomeDir) != "system") ++wrong;
      if (t->classify(dir + "/link", "", kHomeDir) != "none") ++wrong;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("path classes: merged tables keep file order", "[path-classes]") {
  auto a = parse_ok("[[class]]\nname = \"first\"\npatterns = [\"/a/**\"]\n");
  auto b = parse_ok("[[class]]\nname = \"second\"\npatterns = [\"/a/b/**\", \"/b/**\"]\n");
  CHECK(a->classify("/b/x", "", kHomeDir) == "none");  // compiled before the merge
  a->merge(*b);
  CHECK(a->names() == std::vector<std::string>{"first", "second"});
  CHECK(a->classify("/a/b/c", "", kHomeDir) == "first");
  CHECK(a->classify("/b/x", "", kHomeDir) == "second");
}

TEST_CASE("path classes: errors carry E_PATH_CLASSES and the line", "[path-classes]") {
  SECTION("TOML syntax") {
    auto d = parse_errors("[[class]]\nname = \"x\"\npatterns = [\"/a\"\n");
    CHECK(d.front().line >= 3);
  }
  SECTION("unknown top-level key") {
    auto d = parse_errors("[[class]]\nname = \"x\"\npatterns = [\"/a\"]\n\n[other]\nk = 1\n");
    CHECK(has_line(d, 5, "unknown key \"other\""));
  }
  SECTION("unknown key in a class") {
    auto d = parse_errors("[[class]]\nname = \"x\"\npatterns = [\"/a\"]\npattern = [\"/b\"]\n");
    CHECK(has_line(d, 4, "unknown key \"pattern\""));
  }
  SECTION("bad names") {
    auto d = parse_errors(
        "[[class]]\nname = \"Credential\"\npatterns = [\"/a\"]\n"
        "[[class]]\nname = \"none\"\npatterns = [\"/b\"]\n"
        "[[class]]\nname = \"dup\"\npatterns = [\"/c\"]\n"
        "[[class]]\nname = \"dup\"\npatterns = [\"/d\"]\n"
        "[[class]]\nname = 3\npatterns = [\"/e\"]\n");
    CHECK(has_line(d, 2, "not a symbol"));
    CHECK(has_line(d, 5, "reserved"));
    CHECK(has_line(d, 11, "defined twice"));
    CHECK(has_line(d, 14, "must be a string"));
  }
  SECTION("a pattern not anchored at /, ~/ or **/") {
    auto d = parse_errors(
        "[[class]]\nname = \"x\"\npatterns = [\n  \"/ok\",\n  \"*.pem\",\n  \"~user/x\",\n]\n"
        "except = [\"relative/x\"]\n");
    CHECK(has_line(d, 5, "\"*.pem\" is not anchored"));
    CHECK(has_line(d, 6, "\"~user/x\" is not anchored"));
    CHECK(has_line(d, 8, "\"relative/x\" is not anchored"));
    CHECK(d.size() == 3);
  }
  SECTION("a glob RE2 cannot compile (over the memory budget)") {
    // Over the whole table's budget alone: the set refuses it, and the glob is named.
    const std::string huge = "/" + std::string(300000, '?');
    auto d =
        parse_errors("[[class]]\nname = \"x\"\npatterns = [\"/ok\"]\nexcept = [\n  \"/a\",\n  \"" +
                     huge + "\"]\n");
    REQUIRE(d.size() == 1);
    CHECK(d[0].line == 6);
    CHECK(d[0].message.find("cannot be compiled") != std::string::npos);
  }
  SECTION("wrong types and missing fields") {
    auto d = parse_errors(
        "[[class]]\nname = \"a\"\npatterns = \"/a\"\n"                                // 1-3
        "[[class]]\nname = \"b\"\npatterns = [\"/b\", 2]\n"                           // 4-6
        "[[class]]\nname = \"c\"\ncase-insensitive = \"yes\"\npatterns = [\"/c\"]\n"  // 7-10
        "[[class]]\npatterns = [\"/d\"]\n"                                            // 11-12
        "[[class]]\nname = \"e\"\n"                                                   // 13-14
        "[[class]]\nname = \"f\"\npatterns = []\n");                                  // 15-17
    CHECK(has_line(d, 3, "must be a list"));
    CHECK(has_line(d, 6, "only strings"));
    CHECK(has_line(d, 9, "true or false"));
    CHECK(has_line(d, 11, "no \"name\""));
    CHECK(has_line(d, 13, "no \"patterns\""));
    CHECK(has_line(d, 15, "empty \"patterns\""));
  }
  SECTION("class is not an array of tables") {
    auto d = parse_errors("class = \"x\"\n");
    CHECK(has_line(d, 1, "[[class]]"));
  }
}

namespace {

// The meaning of a table, written the plain way: each class's patterns with "~/" expanded
// to the home (its characters as glob literals), each compiled alone, matched against each
// reading in the encoding of that reading; the first class with a pattern hit and no
// exception hit on a reading, the earlier of the two readings' classes.
struct Reference {
  struct Class {
    std::string name;
    std::vector<std::unique_ptr<RE2>> patterns[2], except[2];  // [latin1]
  };
  std::vector<Class> classes;
  bool broken = false;  // some expansion does not compile: every path gets the first class

  Reference(const std::vector<std::tuple<std::string, bool, std::vector<std::string>,
                                         std::vector<std::string>>>& table,
            const std::string& home) {
    std::string h;
    for (char c : home) {
      if (c == '*' || c == '?' || c == '[' || c == '\\') h.push_back('\\');
      h.push_back(c);
    }
    while (!h.empty() && h.back() == '/') h.pop_back();
    for (const auto& [name, ci, patterns, except] : table) {
      Class k;
      k.name = name;
      auto add = [&](const std::vector<std::string>& globs,
                     std::vector<std::unique_ptr<RE2>>* out) {
        for (std::string g : globs) {
          if (g.rfind("~/", 0) == 0) g = h + g.substr(1);
          for (int latin1 = 0; latin1 < 2; ++latin1) {
            RE2::Options o;
            o.set_log_errors(false);
            o.set_dot_nl(true);
            o.set_encoding(latin1 ? RE2::Options::EncodingLatin1 : RE2::Options::EncodingUTF8);
            auto re = std::make_unique<RE2>((ci ? "(?i)" : "") + glob::to_regex(g), o);
            if (!re->ok()) broken = true;  // a home that is not UTF-8 in a UTF-8 expression
            out[latin1].push_back(std::move(re));
          }
        }
      };
      add(patterns, k.patterns);
      add(except, k.except);
      classes.push_back(std::move(k));
    }
  }

  std::size_t first(std::string_view text) const {
    const int latin1 = text::valid_utf8(text) ? 0 : 1;
    auto any = [&](const std::vector<std::unique_ptr<RE2>>& res) {
      for (const auto& re : res)
        if (RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *re)) return true;
      return false;
    };
    for (std::size_t i = 0; i < classes.size(); ++i)
      if (any(classes[i].patterns[latin1]) && !any(classes[i].except[latin1])) return i;
    return classes.size();
  }

  std::string classify(std::string_view normalized, std::string_view resolved) const {
    if (broken) return classes.front().name;
    std::size_t best = first(normalized);
    if (!resolved.empty() && resolved != normalized) best = std::min(best, first(resolved));
    return best < classes.size() ? classes[best].name : "none";
  }
};

}  // namespace

TEST_CASE(
    "path classes: one compiled table answers for every home as the home's own expansion would",
    "[path-classes]") {
  // "~/" patterns are compiled once with a mark for the home; the reference expands the
  // home into every pattern. Homes and paths mix case, glob characters, NUL, invalid UTF-8,
  // "~" and the mark's byte, trailing slashes and the root.
  using Row = std::tuple<std::string, bool, std::vector<std::string>, std::vector<std::string>>;
  const std::vector<Row> table = {
      {"home-ssh", true, {"~/.ssh/**", "~/.aws/credentials"}, {"~/.ssh/*.pub"}},
      {"home-exact", false, {"~/Secret*", "~/[ab]?/x"}, {"~/Secret-ok"}},
      {"anywhere", true, {"**/.env", "**/~/x", "**/*.pem"}, {"~/keep/**", "**/ok.pem"}},
      {"root-home", true, {"~/**"}, {"~/.cache/**", "/tmp/**"}},
      {"system", false, {"/etc/**", "/home/*/x"}, {}},
  };
  std::string text = "";
  for (const auto& [name, ci, patterns, except] : table) {
    text += "[[class]]\nname = \"" + name + "\"\ncase-insensitive = " + (ci ? "true" : "false") +
            "\npatterns = [";
    for (const auto& p : patterns) text += "\"" + p + "\",";
    text += "]\nexcept = [";
    for (const auto& p : except) text += "\"" + p + "\",";
    text += "]\n";
  }
  auto classes = parse_ok(text);
  const std::vector<std::string> homes = {"/home/user", "/home/user/",
                                          "/HOME/User", "/home/u[1]*?",
                                          "/home/ü",    "/",
                                          "",           "/home/a\\b",
                                          "/home/~",    std::string("/home/\xff", 7)};
  const std::vector<std::string> parts = {"/home",
                                          "/user",
                                          "/USER",
                                          "/u[1]*?",
                                          "/ü",
                                          "/Ü",
                                          "/.ssh",
                                          "/id",
                                          "/a.pub",
                                          "/.aws",
                                          "/credentials",
                                          "/Secret",
                                          "-ok",
                                          "/a1",
                                          "/x",
                                          "/.env",
                                          "/k.pem",
                                          "/ok.pem",
                                          "/keep",
                                          "/.cache",
                                          "/tmp",
                                          "/etc",
                                          "/~",
                                          std::string("/\0", 2),
                                          "/\xff",
                                          "/a\\b",
                                          "/",
                                          "u",
                                          "~"};
  std::mt19937 random(20261129);
  std::size_t compared = 0;
  for (const auto& home : homes) {
    Reference ref(table, home);
    std::vector<std::string> paths = {home, home + "/.ssh/id_rsa", home + "/Secret",
                                      home + "/.env"};
    for (int n = 0; n < 400; ++n) {
      std::string p;
      if (random() % 2) p = home;
      const int len = 1 + static_cast<int>(random() % 5);
      for (int i = 0; i < len; ++i) p += parts[random() % parts.size()];
      if (random() % 4 == 0)
        for (char& c : p)
          c = static_cast<char>(random() % 2 ? std::toupper(static_cast<unsigned char>(c)) : c);
      paths.push_back(p);
    }
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::string& resolved = i % 3 == 0 ? paths[(i * 7) % paths.size()] : std::string();
      INFO("home \"" << home << "\" path \"" << paths[i] << "\" resolved \"" << resolved << "\"");
      CHECK(std::string(classes->classify(paths[i], resolved, home)) ==
            ref.classify(paths[i], resolved));
      ++compared;
    }
  }
  CHECK(compared == homes.size() * 404);
}

namespace {

// Paths a pattern names, spelled several ways: `**` as no directory, one and two, `*` as
// nothing and a word, `?` and a class as one letter, `~` as the home, in the case written,
// upper and lower; each also with a name added, a directory added and its last letter cut.
std::vector<std::string> spellings(const std::string& glob, const std::string& home) {
  std::vector<std::string> out;
  for (int variant = 0; variant < 3; ++variant) {
    std::string p;
    for (std::size_t i = 0; i < glob.size(); ++i) {
      const char c = glob[i];
      if (i == 0 && c == '~') {
        p += home;
      } else if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
        p += variant == 0 ? "" : variant == 1 ? "a" : "Deep/er";
        ++i;
        if (variant == 0 && i + 1 < glob.size() && glob[i + 1] == '/' && !p.empty() &&
            p.back() == '/')
          ++i;
      } else if (c == '*') {
        p += variant == 0 ? "" : variant == 1 ? "x" : "Key.Pem";
      } else if (c == '?') {
        p += variant == 2 ? "Q" : "q";
      } else if (c == '[') {
        const std::size_t close = glob.find(']', i + 2);
        if (close == std::string::npos) {
          p += c;
          continue;
        }
        const char first = glob[i + 1] == '!' || glob[i + 1] == '^' ? glob[i + 2] : glob[i + 1];
        p += variant == 1 ? 'z' : first;
        i = close;
      } else if (c == '\\' && i + 1 < glob.size()) {
        p += glob[++i];
      } else {
        p += c;
      }
    }
    if (p.empty() || p[0] != '/') p = "/" + p;
    for (std::string spelled : {p, text::ascii_lower(p)}) {
      out.push_back(spelled);
      std::string upper = spelled;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      out.push_back(upper);
      out.push_back(spelled + ".bak");
      out.push_back(spelled + "/inner");
      out.push_back(spelled.size() > 1 ? spelled.substr(0, spelled.size() - 1) : spelled);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("path classes: the shipped table answers through the prefilter as through the one set",
          "[path-classes]") {
  // An ASCII path is matched by the patterns whose literal pieces it holds; every other path
  // by one set of every pattern. The two must agree on every path: here every pattern and
  // exception of rules/paths.toml spelled many ways, for two homes, as the normalized and as
  // the resolved reading, and the same paths with a non-ASCII letter (the set's side alone).
  std::ifstream in(WARDEN_SOURCE_DIR "/rules/paths.toml");
  REQUIRE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto classes = parse_ok(text);
  std::vector<std::string> globs;
  const RE2 quoted("\"([^\"]+)\"");
  re2::StringPiece rest(text);
  std::string glob;
  while (RE2::FindAndConsume(&rest, quoted, &glob))
    if (glob[0] == '/' || glob[0] == '~' || glob.rfind("**/", 0) == 0) globs.push_back(glob);
  REQUIRE(globs.size() > 400);
  std::size_t compared = 0, classified = 0, ascii = 0;
  for (const std::string home : {"/home/user", "/Users/Dev"}) {
    std::vector<std::string> paths;
    for (const auto& g : globs)
      for (auto& p : spellings(g, home)) paths.push_back(std::move(p));
    paths.insert(paths.end(), {"/", home, home + "/project/src/main.c", "/etc/passwd", "/tmp/x",
                               "/var/run/docker.sock", home + "/.ssh"});
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::string& p = paths[i];
      const std::string resolved = i % 5 == 0 ? paths[(i * 7) % paths.size()] : std::string();
      INFO("home " << home << " path \"" << p << "\" resolved \"" << resolved << "\"");
      const std::string_view by_set = classes->classify_by_set(p, resolved, home);
      CHECK(classes->classify(p, resolved, home) == by_set);
      CHECK(classes->classify(p + "\xc3\xa9", "", home) ==
            classes->classify_by_set(p + "\xc3\xa9", "", home));
      if (by_set != "none") ++classified;
      if (text::is_ascii(p)) ++ascii;
      ++compared;
    }
  }
  // The spellings reach most classes' patterns, and nearly all of them are ASCII.
  CHECK(compared > 20000);
  CHECK(classified > compared / 2);
  CHECK(ascii > compared * 9 / 10);
}

TEST_CASE("path classes: a glob's class is remembered per glob and per reading",
          "[path-classes][glob]") {
  // The same glob answers by its flags: `.en?` with dot files matched or not, a one-place
  // pattern inside or outside the workspace. Asked in turn, each keeps its own answer.
  auto t = parse_ok(R"([[class]]
name = "credential"
patterns = ["**/.env", "/srv/keys/*.key"]
)");
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(t->classify_glob("/home/user/project/*", kHomeDir, true, false) == "credential");
    CHECK(t->classify_glob("/home/user/project/*", kHomeDir, false, false) == "none");
    CHECK(t->classify_glob("/srv/*/x*", kHomeDir, false, true) == "credential");
    CHECK(t->classify_glob("/srv/*/x*", kHomeDir, false, false) == "none");
  }
}

TEST_CASE(
    "path classes: a non-ASCII letter that folds to an ASCII one matches through the prefilter",
    "[path-classes]") {
  // Folded, the Kelvin sign matches "k" and the long s matches "s": an ASCII path must still
  // reach these patterns, though their literal text holds no such ASCII letter.
  auto t = parse_ok(R"([[class]]
name = "credential"
patterns = ["**/\u212Aey.pem", "/srv/\u017Fecret/**"]

[[class]]
name = "exact"
case-insensitive = false
patterns = ["/opt/\u212Aey"]
)");
  for (const std::string p :
       {"/home/user/key.pem", "/home/user/KEY.PEM", "/srv/secret/a", "/srv/SECRET/b/c"}) {
    INFO(p);
    CHECK(t->classify(p, "", kHomeDir) == "credential");
    CHECK(t->classify_by_set(p, "", kHomeDir) == "credential");
  }
  CHECK(t->classify("/opt/key", "", kHomeDir) == "none");
  CHECK(t->classify("/opt/\u212Aey", "", kHomeDir) == "exact");
  CHECK(t->classify("/srv/secre/a", "", kHomeDir) == "none");
}
