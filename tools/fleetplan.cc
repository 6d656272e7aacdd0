// main() of `fleetplan`: `fleetplan COMMAND [options] ...`, dispatched by the
// subcommand table (tools/cli/subcommands.h).

#include "tools/cli/subcommands.h"

int main(int argc, char** argv) { return fleetplan::FleetplanMain(argc, argv); }
