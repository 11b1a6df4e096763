// A cpp-httplib server (the agent's and the live scheduler's /metrics) listening from a
// background thread. ListenInBackground binds HOST:PORT (port 0: any free one) before it
// returns, so a caller can report where it listens or fail at once; StopListening stops the
// server and joins the thread, and is safe right after the start: Debian's cpp-httplib 0.11
// ignores stop() until the thread has entered its accept loop, which used to leave an agent
// that stopped at once (an empty recording with --exit-at-end) waiting forever in join().
// Thread-safety: call both from the thread that owns `server` and `thread`.
#ifndef GPUPLANE_UTIL_HTTP_SERVER_H_
#define GPUPLANE_UTIL_HTTP_SERVER_H_

#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}

namespace gpuplane::util {

// Binds `addr` ("HOST:PORT") and serves from `thread`; returns "HOST:PORT" as bound. Errors
// name `flag` and `addr`: InvalidArgument for a malformed address, Unavailable when it
// cannot be bound (in use, or no such address).
absl::StatusOr<std::string> ListenInBackground(httplib::Server& server, std::string_view flag,
                                               const std::string& addr, std::thread& thread);

// Stops a server started by ListenInBackground and joins its thread; nothing when `thread`
// is not running.
void StopListening(httplib::Server& server, std::thread& thread);

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_HTTP_SERVER_H_
