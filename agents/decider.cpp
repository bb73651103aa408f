// Daemon and in-process deciders (agents/decider.h).
#include "agents/decider.h"

namespace warden::agents {

namespace {

class Unavailable final : public Decider {
 public:
  Verdict decide(std::string_view) override {
    Verdict v;
    v.error_code = "E_NOT_IMPLEMENTED";
    v.error_message = "no decider";
    return v;
  }
  std::string describe() const override { return "none"; }
};

}  // namespace

std::unique_ptr<Decider> make_decider(const DeciderConfig&, std::string*) {
  return std::make_unique<Unavailable>();
}

}  // namespace warden::agents
