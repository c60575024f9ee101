#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nf::config {

enum class kind { integer, boolean, text };

/// One setting, declared once: name, default, bounds and a doc line. The
/// reference config (config/nodeflow.reference.conf) is generated from these.
struct setting {
  const char* name;
  kind type;
  const char* default_value; ///< as written in a config file
  int64_t min = 0;           ///< integers only
  int64_t max = 0;           ///< integers only
  const char* doc;
};

/// Every setting nodeflow reads, in reference order.
const std::vector<setting>& all_settings();

/// Validated values by name. Reading a name that was not declared is a
/// programmer error (assertion).
class values {
public:
  int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& text(const std::string& name) const;

  /// Sets `name` from text, checking its type and bounds; returns an error
  /// message naming the key and what was expected, or nullopt when accepted.
  std::optional<std::string> set(const std::string& name, const std::string& raw,
                                 const std::string& origin);

  static values defaults();

private:
  std::map<std::string, std::string> raw_;
};

/// Reads `key = value` lines (`#` comments, blank lines, optional double quotes
/// around text) from `text` into `into`. Every problem is collected, each
/// naming the origin, line and key; an unknown key is an error, not ignored.
std::vector<std::string> load_text(const std::string& text, const std::string& origin,
                                   values& into);

/// Reads a config file; a missing or unreadable file is an error.
std::vector<std::string> load_file(const std::string& path, values& into);

/// The commented reference config listing every setting with its default.
std::string reference_config();

} // namespace nf::config
