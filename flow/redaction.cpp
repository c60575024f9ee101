#include "flow/redaction.hpp"

namespace nf::flow {

void redact_fields(boost::json::object& output, const std::vector<std::string>& fields) {
  for (const auto& f : fields)
    if (auto it = output.find(f); it != output.end())
      it->value() = redacted_value;
}

} // namespace nf::flow
