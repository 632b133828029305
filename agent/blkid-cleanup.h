/* Scoped cleanup for libblkid's probe, shared by the agent's files that
 * read signatures (install.c, probe_disks.c, reclaim.c):
 *   _cleanup_blkid_probe_ blkid_probe pr = blkid_new_probe();
 * The function is static inline, so any file may include this header. */
#pragma once
#include <blkid/blkid.h>

#include "cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe)

#define _cleanup_blkid_probe_ _cleanup_(blkid_free_probep)
