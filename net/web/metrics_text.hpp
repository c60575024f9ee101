#pragma once

// Metric families as Prometheus' text exposition format, version 0.0.4: `# HELP` and
// `# TYPE` before each family's samples, label values escaped, a histogram as its
// cumulative `_bucket{le=…}` lines ending in `+Inf`, then `_sum` and `_count`.

#include <string>
#include <vector>

#include "engine/metrics/registry.hpp"

namespace nf::net::web {

/// The content type of what render_metrics writes.
inline constexpr const char* metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

std::string render_metrics(const std::vector<engine::metrics::family_snapshot>& families);

} // namespace nf::net::web
