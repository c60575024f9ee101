#pragma once

// Every message type and atom nodeflow sends, registered once. Remote peers
// must register the same names (STACK.md): nodes and clients both load this
// block with `cfg.load<caf::id_block::nodeflow>()`.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/type_id.hpp>

#include "proto/messages.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(nodeflow, caf::first_custom_type_id)

  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::start_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::start_reply))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::start_request>))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::start_reply>))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::workflow_query))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::search_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::search_page))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::workflow_command))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::signal_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::poll_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::leased_task))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::leased_task>))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::task_result))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::task_result>))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::report_outcome))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::report_outcome>))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::heartbeat_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::events_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::event_view))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::event_view>))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::deadletter_request))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<int16_t>))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<std::string>))

  // Client protocol (proto/client_api.hpp).
  CAF_ADD_ATOM(nodeflow, nf, register_atom, "nf_reg")
  CAF_ADD_ATOM(nodeflow, nf, start_atom, "nf_start")
  CAF_ADD_ATOM(nodeflow, nf, get_atom, "nf_get")
  CAF_ADD_ATOM(nodeflow, nf, search_atom, "nf_search")
  CAF_ADD_ATOM(nodeflow, nf, command_atom, "nf_cmd")
  CAF_ADD_ATOM(nodeflow, nf, signal_atom, "nf_signal")
  CAF_ADD_ATOM(nodeflow, nf, poll_atom, "nf_poll")
  CAF_ADD_ATOM(nodeflow, nf, complete_atom, "nf_done")
  CAF_ADD_ATOM(nodeflow, nf, heartbeat_atom, "nf_beat")
  CAF_ADD_ATOM(nodeflow, nf, events_atom, "nf_events")
  CAF_ADD_ATOM(nodeflow, nf, status_atom, "nf_status")
  CAF_ADD_ATOM(nodeflow, nf, deadletter_atom, "nf_dead")

  // Hints between actors (a lost one costs only a poll interval, I9).
  CAF_ADD_ATOM(nodeflow, nf, decide_atom, "nf_decide")
  CAF_ADD_ATOM(nodeflow, nf, work_atom, "nf_work")
  CAF_ADD_ATOM(nodeflow, nf, armed_atom, "nf_armed")
  CAF_ADD_ATOM(nodeflow, nf, outbox_atom, "nf_outbox")
  CAF_ADD_ATOM(nodeflow, nf, partitions_atom, "nf_parts")
  CAF_ADD_ATOM(nodeflow, nf, flush_atom, "nf_flush")
  CAF_ADD_ATOM(nodeflow, nf, tick_atom, "nf_tick")
  CAF_ADD_ATOM(nodeflow, nf, join_atom, "nf_join")
  CAF_ADD_ATOM(nodeflow, nf, lent_atom, "nf_lent")

  // Between nodes (docs/engine.md §2): who owns which partition, and a request or hint
  // one node forwards to the owner of its partition (never forwarded again).
  CAF_ADD_ATOM(nodeflow, nf, owners_atom, "nf_owners")
  CAF_ADD_ATOM(nodeflow, nf, forward_atom, "nf_fwd")

  // Client protocol, added later: last, so the ids above stay what older peers know.
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::task_progress))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::task_ref_update))
  CAF_ADD_ATOM(nodeflow, nf, ready_atom, "nf_ready")
  CAF_ADD_ATOM(nodeflow, nf, progress_atom, "nf_tprog")
  CAF_ADD_ATOM(nodeflow, nf, task_ref_atom, "nf_tref")
  CAF_ADD_ATOM(nodeflow, nf, metrics_atom, "nf_metrics")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::definitions_query))
  CAF_ADD_ATOM(nodeflow, nf, definitions_atom, "nf_defs")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::namespace_request))
  CAF_ADD_ATOM(nodeflow, nf, namespaces_atom, "nf_ns")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::definitions_registration))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::audit_query))
  CAF_ADD_ATOM(nodeflow, nf, audit_atom, "nf_audit")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::login_request))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::session))
  CAF_ADD_ATOM(nodeflow, nf, login_atom, "nf_login")
  CAF_ADD_ATOM(nodeflow, nf, peer_atom, "nf_peer")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::sink_request))
  CAF_ADD_ATOM(nodeflow, nf, sinks_atom, "nf_sinks")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::task_history_query))
  CAF_ADD_ATOM(nodeflow, nf, task_history_atom, "nf_thist")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::schedule_request))
  CAF_ADD_ATOM(nodeflow, nf, schedules_atom, "nf_sched")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::vector_request))
  CAF_ADD_ATOM(nodeflow, nf, vectors_atom, "nf_vectors")
  CAF_ADD_ATOM(nodeflow, nf, count_atom, "nf_count")
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::poll_data_query))
  CAF_ADD_TYPE_ID(nodeflow, (nf::msg::poll_seen))
  CAF_ADD_TYPE_ID(nodeflow, (std::vector<nf::msg::poll_seen>))
  CAF_ADD_ATOM(nodeflow, nf, poll_data_atom, "nf_polldat")

CAF_END_TYPE_ID_BLOCK(nodeflow)
