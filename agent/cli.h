/* muster-agent's command line: one entry point per subcommand. */
#pragma once

int agent_main(int argc, char **argv);
