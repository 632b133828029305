/* An operator's uninstall as the store keeps it with its subscription
 * (subscriptions.uninstall, DESIGN §9), and the deletions a cluster's
 * payload carries while its uninstalls wait for their operands to go. Read
 * by the payload builder and the subscription's status, written by
 * uninstall.c. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>

#include "domain/opcleanup.h"
#include "records.h"

struct uninstall {
        bool prune;             /* the dependencies nothing needs go with it */
        char *by;               /* who asked */
        struct cleanup_state st;
};
void uninstall_free(struct uninstall *u);

/* {"prune", "by", "cleanup": cleanup_to_json} text into *out (zeroed
 * first). -EINVAL for what is not one, -ENOMEM. */
int uninstall_parse(const char *text, struct uninstall *out);
/* The text of u; malloc'd, NULL on ENOMEM. */
char *uninstall_format(const struct uninstall *u);

/* The payload's deletions member for the subscriptions of one cluster:
 * every operand still pending in an uninstall that waits (Cleanup, not
 * aborted), in subscription order, at most PAYLOAD_MAX_DELETIONS. *out
 * NULL when there is none. 0, -ENOMEM. */
int uninstall_deletions(const struct subscription_record_list *subs, json_object **out);
