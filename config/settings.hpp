#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace nf::config {

enum class kind { integer, boolean, text };

/// The C++ type a setting of each kind is read as.
template <class T>
inline constexpr kind kind_of = std::is_same_v<T, int64_t> ? kind::integer
                                : std::is_same_v<T, bool>  ? kind::boolean
                                                           : kind::text;

/// A setting's name with the type it is read as, so a read names a constant the
/// compiler knows instead of a string. all_settings() declares each setting from its
/// constant; tests/config/settings.test.cpp checks that every constant is declared once.
template <class T>
struct key {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, bool>
                  || std::is_same_v<T, std::string>,
                "a setting is an integer, a boolean or text");
  static constexpr kind type = kind_of<T>;
  const char* name;
};

/// One constant per setting of all_settings(), in the same order.
namespace keys {
inline constexpr key<std::string> db_dsn{"db.dsn"};
inline constexpr key<int64_t> db_connections_per_role{"db.connections_per_role"};
inline constexpr key<int64_t> db_connect_timeout_s{"db.connect_timeout_s"};
inline constexpr key<int64_t> db_keepalives_idle_s{"db.keepalives_idle_s"};
inline constexpr key<int64_t> db_keepalives_interval_s{"db.keepalives_interval_s"};
inline constexpr key<int64_t> db_keepalives_count{"db.keepalives_count"};
inline constexpr key<int64_t> db_tcp_user_timeout_ms{"db.tcp_user_timeout_ms"};
inline constexpr key<int64_t> db_statement_timeout_ms{"db.statement_timeout_ms"};
inline constexpr key<int64_t> db_lock_timeout_ms{"db.lock_timeout_ms"};
inline constexpr key<int64_t> db_idle_in_transaction_timeout_ms{
  "db.idle_in_transaction_timeout_ms"};
inline constexpr key<std::string> node_host{"node.host"};
inline constexpr key<int64_t> node_port{"node.port"};
inline constexpr key<std::string> node_advertise{"node.advertise"};
inline constexpr key<bool> node_door_guard{"node.door_guard"};
inline constexpr key<int64_t> node_max_connections{"node.max_connections"};
inline constexpr key<int64_t> node_max_message_bytes{"node.max_message_bytes"};
inline constexpr key<int64_t> node_max_buffered_bytes{"node.max_buffered_bytes"};
inline constexpr key<int64_t> cluster_port{"cluster.port"};
inline constexpr key<std::string> cluster_tls_ca_file{"cluster.tls_ca_file"};
inline constexpr key<std::string> cluster_tls_cert_file{"cluster.tls_cert_file"};
inline constexpr key<std::string> cluster_tls_key_file{"cluster.tls_key_file"};
inline constexpr key<int64_t> cluster_peer_answer_ms{"cluster.peer_answer_ms"};
inline constexpr key<int64_t> cluster_peer_suspect_ms{"cluster.peer_suspect_ms"};
inline constexpr key<int64_t> cluster_max_relayed_per_peer{"cluster.max_relayed_per_peer"};
inline constexpr key<bool> cluster_lease_locally{"cluster.lease_locally"};
inline constexpr key<int64_t> cluster_deciding_nodes{"cluster.deciding_nodes"};
inline constexpr key<int64_t> engine_partitions{"engine.partitions"};
inline constexpr key<bool> engine_nudges{"engine.nudges"};
inline constexpr key<int64_t> decider_batch_size{"decider.batch_size"};
inline constexpr key<int64_t> decider_committers{"decider.committers"};
inline constexpr key<int64_t> decider_split_at_requests{"decider.split_at_requests"};
inline constexpr key<int64_t> decider_poll_interval_ms{"decider.poll_interval_ms"};
inline constexpr key<int64_t> decider_group_commit_us{"decider.group_commit_us"};
inline constexpr key<int64_t> decider_group_commit_from_requests{
  "decider.group_commit_from_requests"};
inline constexpr key<int64_t> lessor_lease_seconds{"lessor.lease_seconds"};
inline constexpr key<int64_t> lessor_poll_interval_ms{"lessor.poll_interval_ms"};
inline constexpr key<int64_t> lessor_max_batch{"lessor.max_batch"};
inline constexpr key<int64_t> lessor_max_poll_timeout_ms{"lessor.max_poll_timeout_ms"};
inline constexpr key<bool> lessor_lease_in_decision{"lessor.lease_in_decision"};
inline constexpr key<int64_t> timer_poll_interval_ms{"timer.poll_interval_ms"};
inline constexpr key<int64_t> timer_batch_size{"timer.batch_size"};
inline constexpr key<int64_t> timer_full_sweep_interval_ms{"timer.full_sweep_interval_ms"};
inline constexpr key<int64_t> relay_poll_interval_ms{"relay.poll_interval_ms"};
inline constexpr key<int64_t> poll_idle_max_ms{"poll.idle_max_ms"};
inline constexpr key<int64_t> relay_batch_size{"relay.batch_size"};
inline constexpr key<int64_t> relay_max_attempts{"relay.max_attempts"};
inline constexpr key<int64_t> relay_base_backoff_ms{"relay.base_backoff_ms"};
inline constexpr key<int64_t> relay_max_backoff_ms{"relay.max_backoff_ms"};
inline constexpr key<int64_t> relay_request_timeout_ms{"relay.request_timeout_ms"};
inline constexpr key<int64_t> relay_published_retention_s{"relay.published_retention_s"};
inline constexpr key<bool> relay_allow_plain_http{"relay.allow_plain_http"};
inline constexpr key<std::string> secrets_master_key_file{"secrets.master_key_file"};
inline constexpr key<std::string> secrets_previous_key_files{"secrets.previous_key_files"};
inline constexpr key<int64_t> system_tasks_concurrency{"system_tasks.concurrency"};
inline constexpr key<int64_t> system_tasks_poll_timeout_ms{"system_tasks.poll_timeout_ms"};
inline constexpr key<int64_t> system_tasks_request_timeout_ms{"system_tasks.request_timeout_ms"};
inline constexpr key<int64_t> scripts_processes{"scripts.processes"};
inline constexpr key<int64_t> scripts_timeout_ms{"scripts.timeout_ms"};
inline constexpr key<int64_t> scripts_memory_mb{"scripts.memory_mb"};
inline constexpr key<std::string> egress_allow{"egress.allow"};
inline constexpr key<std::string> egress_deny{"egress.deny"};
inline constexpr key<int64_t> membership_heartbeat_ms{"membership.heartbeat_ms"};
inline constexpr key<int64_t> membership_lease_ms{"membership.lease_ms"};
inline constexpr key<int64_t> maintenance_interval_s{"maintenance.interval_s"};
inline constexpr key<int64_t> retention_executions_months{"retention.executions_months"};
inline constexpr key<int64_t> retention_history_months{"retention.history_months"};
inline constexpr key<int64_t> retention_timers_hours{"retention.timers_hours"};
inline constexpr key<int64_t> retention_audit_months{"retention.audit_months"};
inline constexpr key<int64_t> retention_request_ids_hours{"retention.request_ids_hours"};
inline constexpr key<int64_t> retention_poll_data_hours{"retention.poll_data_hours"};
inline constexpr key<int64_t> payloads_inline_max_bytes{"payloads.inline_max_bytes"};
inline constexpr key<int64_t> payloads_max_bytes{"payloads.max_bytes"};
inline constexpr key<int64_t> client_timeout_ms{"client.timeout_ms"};
inline constexpr key<int64_t> api_max_pending{"api.max_pending"};
inline constexpr key<int64_t> api_max_open_polls{"api.max_open_polls"};
inline constexpr key<int64_t> api_max_open_polls_per_queue{"api.max_open_polls_per_queue"};
inline constexpr key<int64_t> api_max_event_waits{"api.max_event_waits"};
inline constexpr key<std::string> http_host{"http.host"};
inline constexpr key<int64_t> http_port{"http.port"};
inline constexpr key<int64_t> http_threads{"http.threads"};
inline constexpr key<int64_t> http_max_body_bytes{"http.max_body_bytes"};
inline constexpr key<int64_t> http_max_json_depth{"http.max_json_depth"};
inline constexpr key<int64_t> http_max_inflight{"http.max_inflight"};
inline constexpr key<int64_t> http_idle_timeout_s{"http.idle_timeout_s"};
inline constexpr key<int64_t> http_max_event_streams{"http.max_event_streams"};
inline constexpr key<int64_t> http_event_stream_ping_s{"http.event_stream_ping_s"};
inline constexpr key<int64_t> http_max_stream_buffer_bytes{"http.max_stream_buffer_bytes"};
inline constexpr key<std::string> http_ui_dir{"http.ui_dir"};
inline constexpr key<std::string> http_tls_cert_file{"http.tls_cert_file"};
inline constexpr key<std::string> http_tls_key_file{"http.tls_key_file"};
inline constexpr key<bool> auth_enabled{"auth.enabled"};
inline constexpr key<int64_t> auth_token_ttl_s{"auth.token_ttl_s"};
inline constexpr key<int64_t> auth_key_refresh_ms{"auth.key_refresh_ms"};
inline constexpr key<std::string> log_level{"log.level"};
} // namespace keys

/// One setting, declared once: its key (name and type), default, bounds and a doc line.
/// The reference config (config/nodeflow.reference.conf) is generated from these.
struct setting {
  const char* name;
  kind type;
  const char* default_value; ///< as written in a config file
  int64_t min = 0;           ///< integers only
  int64_t max = 0;           ///< integers only
  const char* doc;

  template <class T>
  setting(key<T> k, const char* default_value_, int64_t min_, int64_t max_, const char* doc_)
    : name{k.name}, type{key<T>::type}, default_value{default_value_}, min{min_}, max{max_},
      doc{doc_} {}
};

/// Every setting nodeflow reads, one per constant of `keys`, in reference order.
const std::vector<setting>& all_settings();

/// Validated values, each parsed once when set and read by its key. Reading a
/// key whose name was not declared with the key's type is a programmer error
/// (assertion).
class values {
public:
  template <class T>
  const T& get(key<T> k) const {
    return std::get<T>(at(k.name, key<T>::type));
  }

  /// Sets `name` from text, checking its type and bounds; returns an error
  /// message naming the key and what was expected, or nullopt when accepted.
  std::optional<std::string> set(const std::string& name, const std::string& raw,
                                 const std::string& origin);

  static values defaults();

private:
  // Alternatives in the order of `kind`.
  using value = std::variant<int64_t, bool, std::string>;

  const value& at(std::string_view name, kind type) const;

  std::map<std::string, value, std::less<>> values_;
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
