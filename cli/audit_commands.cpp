// `warden audit verify|show|query|keygen`: the auditor's commands over the audit log
// (docs/AUDIT.md). Thin wiring over audit/verify.h, audit/query.h and audit/signing.h; every
// text that came from the log is printed through printable() or json_for_terminal().
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "audit/chain.h"
#include "audit/query.h"
#include "audit/reader.h"
#include "audit/signing.h"
#include "audit/verify.h"
#include "bindings/json.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"

namespace warden::cli {
namespace {

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string thousands(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return thousands(n) + " " + (n == 1 ? one : many);
}

// At most `width` code points of already printable text, "…" marking a cut; padded to width.
std::string cell(const std::string& text, std::size_t width, bool pad = true) {
  std::size_t points = 0, at = 0;
  while (at < text.size() && points < width) {
    unsigned char c = static_cast<unsigned char>(text[at]);
    at += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    ++points;
  }
  std::string out;
  if (at < text.size()) {
    // Make room for the ellipsis: drop the last code point.
    std::size_t back = at;
    do --back;
    while (back > 0 && (static_cast<unsigned char>(text[back]) & 0xC0) == 0x80);
    out = text.substr(0, back) + "\xE2\x80\xA6";
  } else {
    out = text;
  }
  if (pad && points < width) out.append(width - points, ' ');
  return out;
}

// ---------------------------------------------------------------- verify

struct VerifyArgs {
  std::vector<std::string> logs;
  std::vector<std::string> keys;
  bool chain_only = false;
  // The flags set these directly; the keys are added once loaded.
  audit::VerifyOptions options;
  std::string format = "text";
};

void print_verify_text(const audit::VerifyReport& r, const std::vector<std::string>& files,
                       double seconds) {
  std::printf(
      "%s: %s, %s, seq %llu..%llu, %s (%.2f s, %s records/s)\n",
      printable(base_name(files.empty() ? std::string() : files.back())).c_str(),
      plural(r.files, "file", "files").c_str(), plural(r.records, "record", "records").c_str(),
      static_cast<unsigned long long>(r.first_seq), static_cast<unsigned long long>(r.last_seq),
      plural(r.checkpoints, "checkpoint", "checkpoints").c_str(), seconds,
      thousands(seconds > 0 ? static_cast<std::uint64_t>(r.records / seconds) : r.records).c_str());
  if (r.files > 1)
    for (const auto& f : files) std::printf("  %s\n", printable(f).c_str());
  if (r.chain_only) {
    std::printf(
        "signatures: not checked (--chain-only): a log rewritten whole, hashes recomputed, would "
        "pass\n");
  } else {
    std::printf("signatures: checked with %s; signed through seq %llu\n", r.key_id.c_str(),
                static_cast<unsigned long long>(r.signed_through));
  }
  if (r.unsigned_tail)
    std::printf(
        "unsigned tail: %s after the last checkpoint (signed at the next checkpoint, rotation or "
        "stop)\n",
        plural(r.unsigned_tail, "record", "records").c_str());
  if (r.ok) {
    std::printf("OK: the log verifies\n");
    return;
  }
  std::printf("FAILED: %s\n", plural(r.findings_total, "problem", "problems").c_str());
  for (const auto& f : r.findings) {
    std::printf("  %-18s seq %-8llu %s:%llu  %s\n",
                std::string(audit::finding_kind_name(f.kind)).c_str(),
                static_cast<unsigned long long>(f.seq), printable(f.file).c_str(),
                static_cast<unsigned long long>(f.line), printable(f.message).c_str());
  }
  if (r.findings_total > r.findings.size())
    std::printf("  … and %s more (--max-findings)\n",
                thousands(r.findings_total - r.findings.size()).c_str());
}

void register_verify(CLI::App* audit, int* exit_code) {
  auto a = std::make_shared<VerifyArgs>();
  auto* cmd = audit->add_subcommand("verify",
                                    "Check the hash chain across rotated files and the checkpoint "
                                    "signatures; exit 0 only if everything verifies");
  cmd->add_option("LOG", a->logs,
                  "The live log file (its rotated siblings are included) or log files")
      ->required();
  cmd->add_option(
         "--key", a->keys,
         "Public key (PEM) that verifies the checkpoints (warden audit keygen); repeat it for a "
         "log signed with successive keys")
      ->allow_extra_args(false);
  cmd->add_flag("--chain-only", a->chain_only,
                "Check the hash chain only, without a key (a rewrite of the whole log passes)");
  cmd->add_flag(
      "--require-signed-tail", a->options.require_signed_tail,
      "Fail when records follow the last checkpoint (a log after a graceful stop has none)");
  cmd->add_flag("--partial", a->options.partial,
                "A slice of the log: it may begin after seq 1 (its older files were archived or "
                "removed; the first record's prev is taken as given) and end with a rotation "
                "checkpoint (its newer files are not given)");
  cmd->add_flag("--require-closed", a->options.require_closed,
                "The daemon has stopped: the log must end with its stop checkpoint (a log cut at "
                "an interval checkpoint is truncated; records after the last checkpoint fail, as "
                "with --require-signed-tail)");
  cmd->add_option("--max-unsigned", a->options.max_unsigned,
                  "Records no signature covers that are accepted after the last valid checkpoint "
                  "when no signed every_records bounds them (e.g. a log with no valid checkpoint "
                  "yet)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 62))
      ->capture_default_str();
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "Hashing threads (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--max-findings", a->options.max_findings, "Problems listed (all are counted)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->callback([a, exit_code] {
    if (a->keys.empty() == !a->chain_only) {
      std::fprintf(stderr,
                   "warden audit verify: give --key PUBLIC_KEY (checks the chain and the "
                   "checkpoint signatures) or "
                   "--chain-only (the chain alone, which a rewrite of the whole log passes)%s\n",
                   a->chain_only ? ", not both" : "");
      *exit_code = kExitUsage;
      return;
    }
    std::vector<std::unique_ptr<audit::VerifyKey>> keys;
    for (const auto& path : a->keys) {
      std::string error;
      keys.push_back(audit::VerifyKey::load(path, &error));
      if (!keys.back()) {
        std::fprintf(stderr, "warden audit verify: cannot load the key %s: %s\n",
                     printable(path).c_str(), printable(error).c_str());
        *exit_code = kExitUsage;
        return;
      }
    }
    audit::VerifyOptions options = a->options;
    for (const auto& k : keys)
      (options.key ? options.other_keys.push_back(k.get()) : void(options.key = k.get()));
    const std::vector<std::string> files = audit::expand_log_paths(a->logs);
    const auto started = std::chrono::steady_clock::now();
    audit::VerifyReport report = audit::verify_paths(a->logs, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const bool unreadable =
        report.first_bad() && report.first_bad()->kind == audit::FindingKind::Unreadable;
    if (a->format == "json") {
      std::printf("%s\n", json_for_terminal(audit::report_to_json(report)).c_str());
    } else if (unreadable) {
      std::fprintf(stderr, "warden audit verify: %s\n",
                   printable(report.first_bad()->message).c_str());
    } else {
      print_verify_text(report, files, seconds);
    }
    *exit_code = unreadable ? kExitUsage : report.ok ? kExitOk : kExitRejected;
  });
}

// ---------------------------------------------------------------- show / query

struct QueryArgs {
  std::vector<std::string> logs;
  std::string since, until, outcome, rule, principal, session, target, kind, approval_id, event;
  std::size_t limit = 0;
  long long seq = 0;
  std::string format = "table";
};

void print_full_record(const audit::QueryRow& row, bool json) {
  if (json) {
    std::printf("%s\n", json_for_terminal(row.line).c_str());
    return;
  }
  // The daemon's own line (one edited on disk that does not read is printed as its text).
  rapidjson::Document doc;
  if (warden::json::parse_stored(row.line, &doc)) {
    std::printf("%s\n", json_for_terminal(row.line).c_str());
    return;
  }
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  doc.Accept(w);
  std::printf("%s\n",
              json_for_terminal(std::string_view(buffer.GetString(), buffer.GetSize())).c_str());
}

void run_query_command(const QueryArgs& a, bool show, int* exit_code) {
  const char* name = show ? "warden audit show" : "warden audit query";
  audit::QueryFilter filter;
  // --approval and --event only match approval records: they imply --kind approval.
  const bool approval_filter = !a.approval_id.empty() || !a.event.empty();
  filter.kind = !a.kind.empty()   ? a.kind
                : approval_filter ? "approval"
                                  : (show ? "all" : "decision");
  filter.rule = a.rule;
  filter.principal = a.principal;
  filter.session = a.session;
  filter.target = a.target;
  filter.approval_id = a.approval_id;
  filter.event = a.event;
  filter.limit = a.limit;
  if (a.seq > 0) filter.seq = static_cast<std::uint64_t>(a.seq);
  const std::int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::string error;
  for (auto [text, into] :
       {std::pair{&a.since, &filter.since_us}, std::pair{&a.until, &filter.until_us}}) {
    if (text->empty()) continue;
    std::int64_t t = 0;
    if (!audit::parse_time_arg(*text, now, &t, &error)) {
      std::fprintf(stderr, "%s: %s\n", name, printable(error).c_str());
      *exit_code = kExitUsage;
      return;
    }
    *into = t;
  }
  if (!a.outcome.empty()) filter.outcome = parse_outcome(a.outcome);
  audit::LogSet set;
  const std::vector<std::string> files = audit::expand_log_paths(a.logs);
  if (!audit::LogSet::open(files, &set, &error)) {
    std::fprintf(stderr, "%s: %s\n", name, printable(error).c_str());
    *exit_code = kExitUsage;
    return;
  }
  const bool json = a.format == "json";
  const bool terminal = ::isatty(STDOUT_FILENO);
  const bool full = show && filter.seq;
  if (!json && !full)
    std::printf("%-19s  %8s  %-16s  %-12s  %-50s  %-17s  %s\n", "TIME (UTC)", "SEQ", "PRINCIPAL",
                "SESSION", "ACTION", "OUTCOME", "RULES");
  audit::QueryStats stats = audit::run_query(set, filter, [&](const audit::QueryRow& row) {
    if (full) {
      print_full_record(row, json);
    } else if (json) {
      // The original record, byte for byte when piped (it still verifies); made safe to show
      // on a terminal.
      if (terminal) {
        std::printf("%s\n", json_for_terminal(row.line).c_str());
      } else {
        std::fwrite(row.line.data(), 1, row.line.size(), stdout);
        std::fputc('\n', stdout);
      }
    } else {
      std::string time = audit::format_time(row.time_us).substr(0, 19);
      time[10] = ' ';
      std::string rules;
      for (const auto& r : row.rules) rules += (rules.empty() ? "" : ",") + r;
      std::string action = row.kind == "decision" ? row.summary : row.kind + ": " + row.summary;
      std::printf("%s  %8llu  %s  %s  %s  %-17s  %s\n", time.c_str(),
                  static_cast<unsigned long long>(row.seq),
                  cell(printable(row.principal), 16).c_str(),
                  cell(printable(row.session), 12).c_str(), cell(printable(action), 50).c_str(),
                  row.outcome.c_str(), cell(printable(rules), 60, false).c_str());
    }
  });
  if (!json && !full)
    std::printf("%s of %s read, %s\n", plural(stats.matched, "record", "records").c_str(),
                plural(stats.lines, "line", "lines").c_str(),
                plural(set.files().size(), "file", "files").c_str());
  if (stats.unreadable)
    std::fprintf(
        stderr,
        "%s: %s could not be read as records (torn or malformed: run warden audit verify)\n", name,
        plural(stats.unreadable, "line", "lines").c_str());
  if (full && stats.matched == 0) {
    std::fprintf(stderr, "%s: no record with seq %lld\n", name, a.seq);
    *exit_code = kExitRejected;
    return;
  }
  *exit_code = kExitOk;
}

void register_query(CLI::App* audit, int* exit_code, bool show) {
  auto a = std::make_shared<QueryArgs>();
  auto* cmd = audit->add_subcommand(
      show ? "show" : "query",
      show ? "Print the log's records (every kind), or one record in full with --seq"
           : "Print the decisions that match filters, as a table or JSON lines");
  cmd->add_option("LOG", a->logs,
                  "The live log file (its rotated siblings are included) or log files")
      ->required();
  cmd->add_option("--since", a->since,
                  "From this time: RFC 3339 or a duration before now (24h, 7d)");
  cmd->add_option("--until", a->until, "Before this time: RFC 3339 or a duration before now");
  cmd->add_option("--outcome", a->outcome, "Only decisions with this outcome")
      ->check(CLI::IsMember({"approve", "reject", "approval-required"}));
  cmd->add_option(
      "--rule", a->rule,
      "Only decisions where this rule fired (any outcome), approvals this rule asked for");
  cmd->add_option("--principal", a->principal,
                  "Only decisions for this authenticated principal, approvals it requested");
  cmd->add_option("--session", a->session, "Only decisions and approvals of this session");
  cmd->add_option("--target", a->target,
                  "Only proposals and approvals' actions with this target (shell, file, http, …)");
  cmd->add_option("--approval", a->approval_id, "Only the approval records of this approval id");
  cmd->add_option("--event", a->event, "Only approval records of this event")
      ->check(CLI::IsMember({"created", "approved", "denied", "expired", "executed", "refused",
                             "scoped-use", "vote", "limited"}));
  cmd->add_option(
      "--kind", a->kind,
      std::string("Record kind (decision, approval, start, reload, checkpoint, rotate, stop) or "
                  "all; default ") +
          (show ? "all" : "decision") + " (approval with --approval or --event)");
  cmd->add_option("--limit", a->limit, "At most this many records (0: all)");
  if (show)
    cmd->add_option("--seq", a->seq, "Print the record with this seq in full")
        ->check(CLI::PositiveNumber);
  cmd->add_option("--format", a->format, "Output format: a table, or the records as JSON lines")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([a, exit_code, show] { run_query_command(*a, show, exit_code); });
}

// ---------------------------------------------------------------- keygen

void register_keygen(CLI::App* audit, int* exit_code) {
  auto out = std::make_shared<std::string>();
  auto pub = std::make_shared<std::string>();
  auto* cmd =
      audit->add_subcommand("keygen", "Create the Ed25519 key that signs the log's checkpoints");
  cmd->add_option("--out", *out, "Private key file to create (PEM, mode 0600; never overwritten)")
      ->required();
  cmd->add_option("--pub", *pub,
                  "Public key file to create (default: the private key's path + .pub)");
  cmd->callback([out, pub, exit_code] {
    const std::string public_path = pub->empty() ? *out + ".pub" : *pub;
    std::string error;
    if (!audit::generate_key(*out, public_path, &error)) {
      std::fprintf(stderr, "warden audit keygen: %s\n", printable(error).c_str());
      *exit_code = kExitUsage;
      return;
    }
    auto key = audit::VerifyKey::load(public_path, &error);
    if (!key) {
      std::fprintf(stderr, "warden audit keygen: cannot read back %s: %s\n",
                   printable(public_path).c_str(), printable(error).c_str());
      *exit_code = kExitInternal;
      return;
    }
    std::printf("key id:      %s\n", key->key_id().c_str());
    std::printf("private key: %s (mode 0600)\n", printable(*out).c_str());
    std::printf(
        "  the daemon signs checkpoints with it: set audit.signing_key in warden.toml; only the "
        "daemon's\n"
        "  user may read it\n");
    std::printf("public key:  %s\n", printable(public_path).c_str());
    std::printf(
        "  give it to the auditors and keep a copy OFF this host: whoever can change the public "
        "key an\n"
        "  auditor uses can forge the log. Verify with: warden audit verify LOG --key %s\n",
        printable(public_path).c_str());
    *exit_code = kExitOk;
  });
}

}  // namespace

void register_audit_commands(CLI::App& app, int* exit_code) {
  auto* audit = app.add_subcommand(
      "audit", "The audit log: verify it, show and query it, create its signing key");
  audit->require_subcommand(1);
  register_verify(audit, exit_code);
  register_query(audit, exit_code, false);
  register_query(audit, exit_code, true);
  register_keygen(audit, exit_code);
}

}  // namespace warden::cli
