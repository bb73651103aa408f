#include "audit/replay_cache.h"

#include <rapidjson/document.h>

#include "engine/proposal_reader.h"

namespace warden::audit::replay {

bool engine_accepts_context_value(std::string_view raw, std::string_view name) {
  std::string text = "{\"target\":\"x\",\"context\":{\"";
  text.append(name);
  text += "\":";
  text.append(raw);
  text += "}}";
  ReadLimits limits;
  limits.max_bytes = text.size();
  rapidjson::Document doc;
  ProposalFields fields;
  std::vector<Leaf> leaves;
  return !read_proposal(text, limits, &doc, &fields, &leaves).has_value();
}

}  // namespace warden::audit::replay
