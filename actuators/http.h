// HttpActuator (`http`): one HTTP request as approved. The URL is read by urls::parse — the
// reading the rules saw — and handed to libcurl as a CURLU handle set from the same text with
// the same flags; method, headers and body as approved (CR, LF and NUL refused); no proxy, no
// redirects (a 3xx is an E_ACT_REDIRECT naming the Location); timeouts and a response cap.
// Before connecting, every resolved address is classified: anything but a public address is
// refused unless the approving decision granted `private-network` (no DNS rebinding into
// loopback, private, link-local or metadata ranges). Thread-safe (one curl handle per call).
#pragma once

#include "actuators/actuator.h"
#include "actuators/config.h"

namespace warden::actuators {

class HttpActuator : public Actuator {
 public:
  HttpActuator(HttpConfig config, bool silent);
  std::string_view name() const override { return "http"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  HttpConfig config_;
  bool silent_;
};

}  // namespace warden::actuators
