#include "config/settings.hpp"

#include <cassert>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace nf::config {

const std::vector<setting>& all_settings() {
  // Every setting is here once; bounds are what the engine can honour.
  static const std::vector<setting> all{
    {keys::db_dsn, "", 0, 0,
     "Postgres 18 connection string (NODEFLOW_DSN and --dsn override it)"},
    {keys::db_connections_per_role, "2", 1, 64,
     "database connections each role (decider, lessor, timer, relay, api) may hold"},
    {keys::db_connect_timeout_s, "10", 0, 3600,
     "seconds a connection attempt may take before it fails (libpq connect_timeout; 0 = "
     "wait forever); a connect_timeout in the DSN (or PGCONNECT_TIMEOUT) wins"},
    {keys::db_keepalives_idle_s, "10", 0, 7200,
     "seconds a database link may be idle before TCP keepalive probes start (0 = the "
     "system's); keepalives_idle in the DSN wins"},
    {keys::db_keepalives_interval_s, "3", 0, 600,
     "seconds between unanswered TCP keepalive probes (0 = the system's); "
     "keepalives_interval in the DSN wins"},
    {keys::db_keepalives_count, "3", 0, 100,
     "unanswered TCP keepalive probes after which a database link is dead (0 = the "
     "system's); keepalives_count in the DSN wins"},
    {keys::db_tcp_user_timeout_ms, "20000", 0, 3600000,
     "milliseconds data sent to the database may stay unacknowledged before the link is "
     "dead (libpq tcp_user_timeout; 0 = the system's); tcp_user_timeout in the DSN wins"},
    {keys::db_statement_timeout_ms, "60000", 0, 86400000,
     "longest a statement may run before it fails with a retryable error (0 = no limit; "
     "migrations and maintenance passes run without one); a statement_timeout in the "
     "DSN's options (or PGOPTIONS) wins"},
    {keys::db_lock_timeout_ms, "30000", 0, 86400000,
     "longest a statement may wait for a lock before it fails with a retryable error (0 = "
     "no limit; migrations run without one); a lock_timeout in the DSN's options wins"},
    {keys::db_idle_in_transaction_timeout_ms, "60000", 0, 86400000,
     "longest a connection may sit idle inside a transaction before the server closes it "
     "(idle_in_transaction_session_timeout; 0 = no limit); the DSN's options win"},
    {keys::node_host, "127.0.0.1", 0, 0,
     "address the client protocol is published on"},
    {keys::node_port, "4510", 0, 65535,
     "port of the client protocol (0 picks a free one)"},
    {keys::node_advertise, "", 0, 0,
     "HOST:PORT other nodes use to reach this node (default node.host:node.port; with cluster "
     "TLS node.host:cluster.port, and a value given here must name that door)"},
    {keys::node_door_guard, "true", 0, 0,
     "the client port is served by a guard that relays each connection to CAF and bounds "
     "connections, message sizes and the bytes of messages still arriving (the three "
     "settings below), and the cluster TLS door by one that bounds its connections (its "
     "frames are encrypted); false: CAF listens on both itself, with none of those bounds"},
    {keys::node_max_connections, "4096", 1, 1000000,
     "client-protocol connections a node keeps at once on each door (peers' included; the "
     "cluster TLS door counts its own); one more is closed as soon as it is accepted, and "
     "logged"},
    {keys::node_max_message_bytes, "268435456", 65536, 4294967295,
     "largest client-protocol message a node takes; a connection whose next message "
     "announces more is closed before any of it is read, and logged"},
    {keys::node_max_buffered_bytes, "1073741824", 65536, 1099511627776,
     "bytes of client-protocol messages still arriving a node holds over all connections "
     "(a message goes to the engine only once whole); a connection that would pass it is "
     "closed, and logged"},
    {keys::cluster_port, "0", -1, 65535,
     "port of the node-to-node door (mutual TLS) on node.host: required with the cluster.tls_* "
     "settings, refused without them; -1 picks a free one, 0 none"},
    {keys::cluster_tls_ca_file, "", 0, 0,
     "PEM certificate of the CA that signs every node's certificate; with cluster.tls_cert_file "
     "and cluster.tls_key_file (all three or none) nodes talk to each other only over mutual TLS"},
    {keys::cluster_tls_cert_file, "", 0, 0,
     "PEM certificate of this node, signed by the cluster CA (it is both server and client)"},
    {keys::cluster_tls_key_file, "", 0, 0,
     "PEM private key of cluster.tls_cert_file, unencrypted"},
    {keys::cluster_peer_answer_ms, "2000", 0, 600000,
     "how long a request relayed to the node that owns its partition waits for an answer (past "
     "a poll's own wait) before this node does the work through the database itself; 0 never "
     "does (the request fails unavailable while the owner cannot be reached)"},
    {keys::cluster_peer_suspect_ms, "10000", 0, 3600000,
     "after a peer failed to answer, how long requests for its partitions go straight to the "
     "database instead of to it"},
    {keys::cluster_max_relayed_per_peer, "1000", 1, 1000000,
     "requests relayed to one peer and not yet answered; beyond: the work is done through the "
     "database on this node"},
    {keys::cluster_lease_locally, "true", 0, 0,
     "a poll is leased by this node from the database, whichever node owns its queue's "
     "partition, so that this node's decisions lease new tasks to it; false forwards it to the "
     "owner"},
    {keys::cluster_deciding_nodes, "0", 0, 1024,
     "how many live nodes own the partitions (decide, lease, fire timers), the longest "
     "registered first; 0 = every node. A node beyond them owns none: it serves its clients by "
     "forwarding their starts, polls and reports to the deciding nodes, and takes partitions "
     "over when one of them leaves (front doors that add no deciding, leasing or timer "
     "transactions to the database)"},
    {keys::engine_partitions, "16", 1, 1024,
     "logical partitions P; must equal the database's ClusterSettings.partitionCount"},
    {keys::engine_nudges, "true", 0, 0,
     "actors wake each other by message; false leaves only table polling (tests)"},
    {keys::decider_batch_size, "128", 1, 10000,
     "DecideQueues rows one decider transaction claims"},
    {keys::decider_committers, "2", 1, 16,
     "decide committers per node, each with its own connection; partition p goes to p mod N "
     "(with K nodes owning partitions, a node uses ceil(N / K): they share one Postgres)"},
    {keys::decider_split_at_requests, "64", 0, 100000,
     "below this many requests per flush one committer decides for every partition (0: always "
     "p mod N)"},
    {keys::decider_poll_interval_ms, "1000", 10, 3600000,
     "how often a decider polls its tables when no nudge arrives"},
    {keys::decider_group_commit_us, "1000", 0, 100000,
     "how long a busy decider waits to group more work into one commit (K times as long with "
     "K nodes owning partitions: each receives a K-th of the work)"},
    {keys::decider_group_commit_from_requests, "8", 2, 100000,
     "a commit that carried at least this many requests makes the next one wait "
     "decider.group_commit_us (fewer: the next commits at once)"},
    {keys::lessor_lease_seconds, "300", 1, 86400,
     "lease length when a task has no responseTimeoutSeconds"},
    {keys::lessor_poll_interval_ms, "1000", 10, 3600000,
     "how often a lessor re-checks parked polls and sweeps expired leases"},
    {keys::lessor_max_batch, "256", 1, 10000,
     "most tasks one lease transaction hands out"},
    {keys::lessor_max_poll_timeout_ms, "60000", 0, 600000,
     "upper bound on a worker's long-poll timeout"},
    {keys::lessor_lease_in_decision, "true", 0, 0,
     "a task decided while a poll of its queue waits is leased to it in the deciding "
     "transaction"},
    {keys::timer_poll_interval_ms, "1000", 10, 3600000,
     "how often a timer actor polls for due timers when no nudge arrives"},
    {keys::timer_batch_size, "256", 1, 10000,
     "due timers one timer transaction claims"},
    {keys::timer_full_sweep_interval_ms, "60000", 10, 3600000,
     "how often a timer actor also claims timers overdue by more than an hour (its other "
     "claims look at the last hour only)"},
    {keys::relay_poll_interval_ms, "1000", 10, 3600000,
     "how often the relay polls the outbox when no nudge arrives"},
    {keys::poll_idle_max_ms, "8000", 10, 3600000,
     "the longest a decider, a lessor or a relay without webhook sinks waits between its "
     "polls while they find nothing (each empty poll doubles the wait from its "
     "poll_interval_ms; a hint or work found brings it back): what a lost hint costs at worst "
     "on an idle node"},
    {keys::relay_batch_size, "128", 1, 10000,
     "outbox events one relay transaction claims"},
    {keys::relay_max_attempts, "10", 1, 1000,
     "delivery attempts before an event is dead-lettered"},
    {keys::relay_base_backoff_ms, "1000", 1, 3600000,
     "first retry delay of a failed delivery; doubles per attempt, with jitter"},
    {keys::relay_max_backoff_ms, "300000", 1, 86400000,
     "cap on the retry delay of a failed delivery"},
    {keys::relay_request_timeout_ms, "5000", 1, 600000,
     "per-attempt timeout of a webhook delivery"},
    {keys::relay_published_retention_s, "604800", 0, 315360000,
     "how long a delivered outbox event is kept before maintenance deletes it"},
    {keys::relay_allow_plain_http, "false", 0, 0,
     "deliver webhooks over plain http:// to any host (otherwise https://, or http:// to "
     "loopback only)"},
    {keys::secrets_master_key_file, "", 0, 0,
     "file holding the 32-byte master key that seals secrets (raw, 64 hex digits or base64; "
     "`nodeflow secrets keygen > FILE`); empty = no secrets"},
    {keys::secrets_previous_key_files, "", 0, 0,
     "comma-separated files of earlier master keys, which unseal values until `nodeflow "
     "secrets rotate` re-seals them under the current key"},
    {keys::system_tasks_concurrency, "8", 1, 1024,
     "HTTP tasks the in-process system-task runner executes at once"},
    {keys::system_tasks_poll_timeout_ms, "10000", 1, 600000,
     "long-poll timeout of the system-task runner on its queue"},
    {keys::system_tasks_request_timeout_ms, "10000", 1, 600000,
     "connect and read timeout of an HTTP task whose input names none"},
    {keys::scripts_processes, "2", 1, 64,
     "sandbox processes that run INLINE, LAMBDA and JSON_JQ_TRANSFORM scripts, so at most this "
     "many scripts run at once"},
    {keys::scripts_timeout_ms, "1000", 10, 60000,
     "how long one script may run before its sandbox process is killed and the task fails"},
    {keys::scripts_memory_mb, "64", 16, 4096,
     "memory, in MiB, one script may allocate before it is stopped and the task fails"},
    {keys::egress_allow, "*", 0, 0,
     "where HTTP tasks and webhooks may connect: CIDR blocks, addresses, host names "
     "(*.example.com) or * for everywhere, comma-separated; empty: nowhere"},
    {keys::egress_deny, "169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal",
     0, 0,
     "never connected to, whatever egress.allow says (same forms, checked on every address a "
     "name resolves to): by default link-local addresses and the cloud metadata services"},
    {keys::membership_heartbeat_ms, "1000", 10, 600000,
     "how often a node heartbeats and renews its partition leases"},
    {keys::membership_lease_ms, "10000", 100, 3600000,
     "partition lease length; a dead node's partitions move after it expires"},
    {keys::maintenance_interval_s, "3600", 1, 86400,
     "how often partitions are created ahead, expired ones dropped, caches and outbox pruned"},
    {keys::retention_executions_months, "12", 1, 1200,
     "months of workflow executions kept after the month they started in; an older month is "
     "dropped with its tasks, unless it still holds a running or paused workflow"},
    {keys::retention_history_months, "12", 1, 1200,
     "months of workflow history (events) kept; an older month is dropped unless a workflow "
     "started by then still runs"},
    {keys::retention_timers_hours, "48", 2, 720,
     "hours of timer partitions kept, and how far back the timer claims an overdue timer; "
     "a pending timer of a dropped hour fires at once"},
    {keys::retention_audit_months, "84", 1, 1200,
     "months of audit events kept; an older month's partition is dropped, the only way "
     "audit rows leave"},
    {keys::retention_request_ids_hours, "24", 1, 8760,
     "hours the request id of a signal, a command or a task update is kept to answer its "
     "retries; a retry later than this is applied again (a keyless start's id stays with "
     "its workflow, as an idempotency key)"},
    {keys::retention_poll_data_hours, "168", 1, 87600,
     "hours a worker's last poll of a task type is kept in the poll data "
     "(GET /api/tasks/queue/polldata) after it stopped polling"},
    {keys::payloads_inline_max_bytes, "65536", 1024, 67108864,
     "a task input or output, or a workflow output, whose JSON is longer than this many bytes "
     "is stored out of line (\"Payloads\") and its row holds a reference; every reader still "
     "sees the whole value"},
    {keys::payloads_max_bytes, "8388608", 1024, 67108864,
     "largest task output, workflow input or signal payload a node takes, on the client "
     "protocol and over HTTP alike (larger: refused as invalid input naming the field and "
     "this limit, before anything is written)"},
    {keys::client_timeout_ms, "30000", 1, 3600000,
     "default timeout of a client request"},
    {keys::api_max_pending, "20000", 1, 10000000,
     "client requests a node has taken and not yet answered (parked polls and waiting event "
     "reads included); beyond: refused at once as unavailable (HTTP 503)"},
    {keys::api_max_open_polls, "16384", 1, 1000000,
     "task polls a node holds open at once; beyond: refused at once as unavailable (HTTP 503)"},
    {keys::api_max_open_polls_per_queue, "4096", 1, 1000000,
     "task polls a node holds open at once for one queue; beyond: refused at once as "
     "unavailable (HTTP 503)"},
    {keys::api_max_event_waits, "4096", 1, 1000000,
     "event reads waiting for new events (wait_ms) a node holds at once; beyond: refused at "
     "once as unavailable (HTTP 503)"},
    {keys::http_host, "127.0.0.1", 0, 0, "address the HTTP API listens on"},
    {keys::http_port, "8080", -1, 65535,
     "port of the HTTP API (Conductor's REST, the history stream, /metrics); 0 turns it "
     "off, -1 picks a free one"},
    {keys::http_threads, "2", 1, 64, "threads serving HTTP connections"},
    {keys::http_max_body_bytes, "8388608", 1024, 1073741824,
     "largest HTTP request body accepted (larger: 413, before payloads.max_bytes is "
     "checked)"},
    {keys::http_max_json_depth, "64", 2, 1000,
     "deepest nesting of arrays and objects in an HTTP request's JSON (deeper: 400)"},
    {keys::http_max_inflight, "4096", 1, 1000000,
     "HTTP requests in flight beyond which the node answers 429 (long polls and streams "
     "not counted)"},
    {keys::http_idle_timeout_s, "60", 1, 86400,
     "how long a kept-alive HTTP connection may sit idle"},
    {keys::http_max_event_streams, "10000", 1, 1000000,
     "history streams (Server-Sent Events) a node serves at once; beyond: 503 with "
     "Retry-After"},
    {keys::http_event_stream_ping_s, "15", 1, 3600,
     "how often an idle history stream gets a keep-alive comment, so proxies keep it open"},
    {keys::http_max_stream_buffer_bytes, "1048576", 1024, 1073741824,
     "bytes a history stream may hold unsent for a client that does not read; beyond: the "
     "stream is closed (the client reconnects with Last-Event-ID)"},
    {keys::http_ui_dir, "", 0, 0,
     "a folder whose files are served as the web UI instead of those built into the binary "
     "(for working on the UI: files are read at each request); empty: the built-in UI"},
    {keys::http_tls_cert_file, "", 0, 0,
     "PEM file of the HTTPS certificate (its chain after it); set with http.tls_key_file, the "
     "HTTP port speaks TLS 1.2 or later only; both empty: plain HTTP"},
    {keys::http_tls_key_file, "", 0, 0,
     "PEM file of the private key of http.tls_cert_file (unencrypted; readable by the node "
     "only)"},
    {keys::auth_enabled, "true", 0, 0,
     "HTTP requests need a token from an API key (`nodeflow keys create`, POST /api/token); "
     "false is allowed only while node.host and http.host are loopback addresses"},
    {keys::auth_token_ttl_s, "3600", 60, 86400,
     "how long a token from POST /api/token is good for (a revoked or expired key stops it "
     "sooner)"},
    {keys::auth_key_refresh_ms, "2000", 100, 60000,
     "how often a node reloads the API keys it checks tokens against: a revoked key is "
     "refused within this long"},
    {keys::log_level, "info", 0, 0, "trace, debug, info, warn, error or off"},
  };
  return all;
}

namespace {

const setting* find(const std::string& name) {
  for (const auto& s : all_settings())
    if (name == s.name)
      return &s;
  return nullptr;
}

// Settings that were renamed: a file or flag with the old name is refused naming the new
// one, never ignored (the old value would silently stop applying).
const char* renamed_to(const std::string& name) {
  static const std::pair<const char*, const char*> renamed[] = {
    {"maintenance.audit_months_retained", "retention.audit_months"},
  };
  for (const auto& [old_name, new_name] : renamed)
    if (name == old_name)
      return new_name;
  return nullptr;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::optional<int64_t> parse_integer(const std::string& raw) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc{} || ptr != raw.data() + raw.size() || raw.empty())
    return std::nullopt;
  return v;
}

} // namespace

values values::defaults() {
  values v;
  for (const auto& s : all_settings()) {
    [[maybe_unused]] auto err = v.set(s.name, s.default_value, "default");
    assert(!err);
  }
  return v;
}

std::optional<std::string> values::set(const std::string& name, const std::string& raw,
                                       const std::string& origin) {
  const setting* s = find(name);
  if (s == nullptr) {
    if (const char* now = renamed_to(name))
      return origin + ": \"" + name + "\" is now \"" + now + "\": rename it (its value means "
             "the same)";
    return origin + ": unknown setting \"" + name + "\"";
  }
  value parsed;
  switch (s->type) {
    case kind::integer: {
      auto v = parse_integer(raw);
      if (!v || *v < s->min || *v > s->max)
        return origin + ": " + name + ": expected a whole number from " + std::to_string(s->min)
               + " to " + std::to_string(s->max) + ", got \"" + raw + "\"";
      parsed = *v;
      break;
    }
    case kind::boolean:
      if (raw != "true" && raw != "false")
        return origin + ": " + name + ": expected true or false, got \"" + raw + "\"";
      parsed = raw == "true";
      break;
    case kind::text:
      if (name == "log.level" && raw != "trace" && raw != "debug" && raw != "info"
          && raw != "warn" && raw != "error" && raw != "off")
        return origin + ": " + name + ": expected trace, debug, info, warn, error or off, got \""
               + raw + "\"";
      parsed = raw;
      break;
  }
  values_[name] = std::move(parsed);
  return std::nullopt;
}

const values::value& values::at(std::string_view name, [[maybe_unused]] kind type) const {
  static_assert(std::is_same_v<std::variant_alternative_t<size_t(kind::boolean), value>, bool>);
  auto it = values_.find(name);
  assert(it != values_.end() && it->second.index() == static_cast<size_t>(type));
  // Without assertions a wrong type still throws (std::get); an undeclared name must too.
  if (it == values_.end())
    throw std::logic_error{"undeclared setting " + std::string{name}};
  return it->second;
}

std::vector<std::string> load_text(const std::string& text, const std::string& origin,
                                   values& into) {
  std::vector<std::string> problems;
  std::istringstream in{text};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto where = origin + ":" + std::to_string(n);
    auto t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    auto eq = t.find('=');
    if (eq == std::string::npos) {
      problems.push_back(where + ": expected `key = value`, got \"" + t + "\"");
      continue;
    }
    auto key = trim(t.substr(0, eq));
    auto value = trim(t.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (auto err = into.set(key, value, where))
      problems.push_back(*err);
  }
  return problems;
}

std::vector<std::string> load_file(const std::string& path, values& into) {
  std::ifstream in{path};
  if (!in)
    return {"cannot read config file " + path};
  std::stringstream buf;
  buf << in.rdbuf();
  return load_text(buf.str(), path, into);
}

std::string reference_config() {
  std::string out =
    "# nodeflow reference configuration: every setting with its default.\n"
    "# Generated from config/settings.cpp; `nodeflow config --reference` prints it.\n"
    "# Command-line flags (--key value, e.g. --node.port 4600) override the file.\n";
  std::string section;
  for (const auto& s : all_settings()) {
    std::string name = s.name;
    auto group = name.substr(0, name.find('.'));
    if (group != section) {
      out += "\n# --- " + group + " ---\n";
      section = group;
    }
    out += "\n# " + std::string{s.doc};
    if (s.type == kind::integer)
      out += " (" + std::to_string(s.min) + ".." + std::to_string(s.max) + ")";
    out += "\n";
    bool quote = s.type == kind::text;
    out += name + " = " + (quote ? "\"" : "") + s.default_value + (quote ? "\"" : "") + "\n";
  }
  return out;
}

} // namespace nf::config
