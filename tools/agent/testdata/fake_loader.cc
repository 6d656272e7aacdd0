// A stand-in dynamic loader for the libraries check's tests. Statically
// linked, so that LD_TRACE_LOADED_OBJECTS (which makes any dynamically
// linked program, a shell too, list its own libraries) leaves it alone:
// prints $FAKE_LOADER_OUTPUT and exits with $FAKE_LOADER_STATUS.

#include <cstdio>
#include <cstdlib>

int main() {
  const char* output = std::getenv("FAKE_LOADER_OUTPUT");
  const char* status = std::getenv("FAKE_LOADER_STATUS");
  if (output != nullptr) std::fputs(output, stdout);
  return status == nullptr ? 0 : std::atoi(status);
}
