/* muster-agent: probes the host and (later) works for the coordinator. */
#include "cli.h"

int main(int argc, char **argv) {
        return agent_main(argc, argv);
}
