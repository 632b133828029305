/* musterctl: the admin CLI of musterd. Everything is in musterctl-lib. */
#include "ctl.h"

int main(int argc, char **argv) {
        return ctl_main(argc, argv);
}
