// The printable address and port at either end of a connected socket.
#pragma once

#include <string>

namespace ds::server {

// "unknown" and port 0 when the socket has no such address.
std::string PeerAddress(int fd, int* port);
std::string LocalAddress(int fd, int* port);

}  // namespace ds::server
