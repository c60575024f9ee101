#pragma once

// Finds the COMMITs in a Postgres client->server byte stream, so the proxy can
// cut a connection right after the server got one and before the client hears
// the answer. It reads the frontend protocol only as far as it must: the
// startup packet (after any SSLRequest/GSSENCRequest) is skipped, then frames
// of type byte + int32 length, which may span reads or share one.
//
// A commit is a simple Query 'Q' whose SQL starts with COMMIT or END (after
// whitespace and comments), or the Execute 'E' that follows a Parse 'P' of
// such SQL: nodeflow sends `COMMIT` both ways (PQexec in store/pg/transaction,
// PQsendQueryParams in store/pg/pipeline), and in the extended protocol the
// server commits when it executes the statement, not when it parses it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nf::fault {

class pg_scanner {
public:
  /// Scans the next bytes of the stream. Calls `on_commit(end)` with the
  /// offset in `data` just past each committing message; scanning stops there
  /// when it returns false.
  void feed(std::string_view data, const std::function<bool(std::size_t)>& on_commit);

  /// Whether SQL text begins (after whitespace and comments) with COMMIT or END.
  static bool is_commit_sql(std::string_view sql);

private:
  enum class phase { startup, frames, lost };
  bool end_of_frame(); // true when the frame just ended commits

  phase phase_ = phase::startup;
  char header_[8] = {};
  std::size_t header_have_ = 0;
  std::uint32_t body_left_ = 0;
  bool in_body_ = false;
  char type_ = 0;
  std::uint32_t startup_code_ = 0;
  std::string prefix_; // the first bytes of a Q or P body
  bool parsed_commit_ = false;
};

} // namespace nf::fault
