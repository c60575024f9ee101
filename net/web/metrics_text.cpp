#include "net/web/metrics_text.hpp"

#include <cmath>
#include <cstdio>

namespace nf::net::web {

namespace {

using engine::metrics::family_snapshot;
using engine::metrics::kind;

// Shortest text that reads back as the same number for the values metrics take (counts,
// seconds, bucket bounds): integers without a fraction, others with 15 digits at most.
void append_number(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.15g", v);
  out += buf;
}

// HELP text escapes backslash and newline; a label value also the double quote.
void append_escaped(std::string& out, const std::string& s, bool quote) {
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (quote && c == '"')
      out += "\\\"";
    else
      out += c;
  }
}

/// `{a="x",b="y"}` (with `extra` last, for a bucket's `le`), or nothing without labels.
void append_labels(std::string& out, const std::vector<std::string>& names,
                   const std::vector<std::string>& values, const char* extra_name = nullptr,
                   const std::string& extra_value = {}) {
  if (names.empty() && extra_name == nullptr)
    return;
  out += '{';
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i > 0)
      out += ',';
    out += names[i];
    out += "=\"";
    append_escaped(out, values[i], true);
    out += '"';
  }
  if (extra_name != nullptr) {
    if (!names.empty())
      out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

const char* type_name(kind k) {
  switch (k) {
    case kind::counter: return "counter";
    case kind::gauge: return "gauge";
    case kind::histogram: return "histogram";
  }
  return "untyped";
}

void append_family(std::string& out, const family_snapshot& f) {
  out += "# HELP ";
  out += f.name;
  out += ' ';
  append_escaped(out, f.help, false);
  out += "\n# TYPE ";
  out += f.name;
  out += ' ';
  out += type_name(f.type);
  out += '\n';
  for (const auto& s : f.samples) {
    if (f.type != kind::histogram) {
      out += f.name;
      append_labels(out, f.label_names, s.labels);
      out += ' ';
      append_number(out, s.value);
      out += '\n';
      continue;
    }
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      std::string le;
      append_number(le, b < f.bounds.size() ? f.bounds[b] : HUGE_VAL);
      out += f.name;
      out += "_bucket";
      append_labels(out, f.label_names, s.labels, "le", le);
      out += ' ';
      append_number(out, static_cast<double>(s.buckets[b]));
      out += '\n';
    }
    out += f.name;
    out += "_sum";
    append_labels(out, f.label_names, s.labels);
    out += ' ';
    append_number(out, s.sum);
    out += '\n';
    out += f.name;
    out += "_count";
    append_labels(out, f.label_names, s.labels);
    out += ' ';
    append_number(out, s.buckets.empty() ? 0.0 : static_cast<double>(s.buckets.back()));
    out += '\n';
  }
}

} // namespace

std::string render_metrics(const std::vector<family_snapshot>& families) {
  std::string out;
  out.reserve(4096);
  for (const auto& f : families)
    append_family(out, f);
  return out;
}

} // namespace nf::net::web
