/* Who a request's token speaks for (svc.h svc_principal): a signature the
 * cache has checked, then revocation, which only the store knows: a host's
 * own token against the host's generation, an agent's against its
 * infra-env's, a person's against the tokens table. */
#include "svc/svc.h"

#include <errno.h>
#include <time.h>

#include "errmsg.h"
#include "store/store.h"

int svc_principal(struct svc *sv, const char *token, struct principal *p, char *err, size_t errlen) {
        return svc_principal_ie(sv, token, p, NULL, err, errlen);
}

int svc_principal_ie(struct svc *sv, const char *token, struct principal *p, struct infra_env *out, char *err,
                     size_t errlen) {
        if (auth_check_cached(sv->auth_cache, sv->key, token, svc_now(sv), p) < 0)
                return errmsg(err, errlen, -EACCES, "the token is not valid");
        if (p->kind == PRINCIPAL_AGENT && p->host_id[0]) {
                /* A host's own token: its generation must be the host's. */
                int64_t gen = 0;
                int r = store_host_token_generation(sv->store, p->infra_env_id, p->host_id, &gen);
                if (r == -ENOENT)
                        return errmsg(err, errlen, -EACCES,
                                      "the host this token was issued to was deleted (or its infra-env)");
                if (r < 0 || gen != p->generation)
                        return errmsg(err, errlen, -EACCES, "the token was revoked");
        } else if (p->kind == PRINCIPAL_AGENT) {
                /* Revocation: the token's generation must be the infra-env's. */
                struct infra_env ie;
                infra_env_init(&ie);
                int r = store_infra_env_get(sv->store, p->infra_env_id, &ie);
                bool ok = r == 0 && ie.token_generation == p->generation;
                if (ok && out) {
                        infra_env_free(out);
                        *out = ie; /* moved */
                } else
                        infra_env_free(&ie);
                if (r == -ENOENT)
                        return errmsg(err, errlen, -EACCES,
                                      "the infra-env this token was issued for was deleted: download a new "
                                      "discovery image from an infra-env that exists");
                if (!ok)
                        return errmsg(err, errlen, -EACCES, "the token was revoked");
        } else {
                /* A person's token: on the revocation list, or never issued
                 * by this store, it is refused; checked on every request. */
                int r = store_token_check(sv->store, p->jti);
                if (r == -ENOENT)
                        return errmsg(err, errlen, -EACCES, "the token is not known to this coordinator");
                if (r == -EKEYREVOKED)
                        return errmsg(err, errlen, -EACCES, "the token was revoked");
                if (r < 0)
                        return r;
        }
        return 0;
}
