#ifndef FLEETPLAN_TOOLS_AGENT_TEST_PORTS_H_
#define FLEETPLAN_TOOLS_AGENT_TEST_PORTS_H_

// For tests of the agent's network pieces: a loopback port free right now.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fleetplan {

inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), length);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_TEST_PORTS_H_
