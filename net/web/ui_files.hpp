#pragma once
// The web UI's files (ui/), built into the binary by cmake/embed_ui.cmake, as the HTTP server
// answers them: `/` is ui/index.html, `/ui/<path>` is ui/<path>. With http.ui_dir set, the
// files are read from that folder at each request instead (working on the UI without a
// rebuild); the embedded ones are then not served.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nf::net::web {

struct embedded_file {
  std::string_view path; ///< "/ui/app.js"
  std::string_view text;
};

/// Every file of ui/ (generated source).
const std::vector<embedded_file>& embedded_ui();

struct ui_asset {
  std::string body;
  std::string content_type;
  std::string etag; ///< quoted, from the content
};

class ui_files {
public:
  /// `dir` empty: the embedded files; else the files of that folder.
  explicit ui_files(std::string dir = {});

  /// The file a request path names, or none (not a UI path, no such file).
  std::optional<ui_asset> find(std::string_view request_path) const;

  /// Whether a request path is the UI's to answer (`/`, `/index.html`, `/ui/...`).
  static bool is_ui_path(std::string_view request_path);

  /// The headers every UI answer carries: what the page may load and run.
  static const char* content_security_policy();

private:
  std::string dir_;
  std::vector<ui_asset> embedded_;
  std::vector<std::string_view> embedded_paths_;
};

} // namespace nf::net::web
