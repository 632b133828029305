/* `musterctl completion bash|zsh|fish`: a shell's completion script, made
 * from the command table (ctl_commands): the resources, their verbs, the
 * words a command's synopsis offers (completion bash|zsh|fish, addon
 * rollout pause|resume|rollback), each command's options as its help
 * lists them, and the global options. A command added to the table is
 * completed with nothing else to edit. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"

#define MAX_OPTS 64
#define OPT_LEN 40

/* The options one help text lists: its lines that start "  -", up to the
 * two spaces before the description ("  -o, --out FILE    Write..."). An
 * option followed by an upper-case word (FILE, N) takes a value. */
struct opts {
        char name[MAX_OPTS][OPT_LEN];
        bool value[MAX_OPTS];
        size_t n;
};

static void add_opt(struct opts *o, const char *name, size_t len, bool value) {
        for (size_t i = 0; i < o->n; i++)
                if (strlen(o->name[i]) == len && strncmp(o->name[i], name, len) == 0) {
                        o->value[i] |= value;
                        return;
                }
        if (o->n < MAX_OPTS && len > 1 && len < OPT_LEN) {
                memcpy(o->name[o->n], name, len);
                o->name[o->n][len] = '\0';
                o->value[o->n++] = value;
        }
}

static void help_opts(const char *help, struct opts *o) {
        for (const char *l = help; l && *l;) {
                size_t n = strcspn(l, "\n");
                if (n > 3 && strncmp(l, "  -", 3) == 0) {
                        /* The synopsis part: up to two spaces in a row. */
                        const char *end = l + 2, *stop = l + n;
                        while (end < stop && !(end[0] == ' ' && end + 1 < stop && end[1] == ' '))
                                end++;
                        size_t first = o->n;
                        bool value = false;
                        for (const char *p = l + 2; p < end;) {
                                while (p < end && (*p == ' ' || *p == ','))
                                        p++;
                                const char *w = p;
                                while (p < end && *p != ' ' && *p != ',')
                                        p++;
                                if (p == w)
                                        continue;
                                if (*w == '-') {
                                        size_t k = strcspn(w, "[= ,");
                                        if (w + k > p)
                                                k = (size_t) (p - w);
                                        if (w[k] == '=')
                                                value = true;
                                        add_opt(o, w, k, false);
                                } else if (*w >= 'A' && *w <= 'Z')
                                        value = true;
                        }
                        for (size_t i = first; value && i < o->n; i++)
                                o->value[i] = true;
                }
                l += n + (l[n] != '\0');
        }
}

/* The words a synopsis offers where it starts with "a|b|c". */
static void synopsis_words(const char *args, char *buf, size_t n) {
        buf[0] = '\0';
        size_t k = strcspn(args, " ");
        if (!k || !memchr(args, '|', k) || strspn(args, "abcdefghijklmnopqrstuvwxyz-|") < k)
                return;
        snprintf(buf, n, "%.*s", (int) k, args);
        for (char *p = buf; *p; p++)
                if (*p == '|')
                        *p = ' ';
}

static bool seen_resource(const struct ctl_cmd *cmds, size_t i) {
        for (size_t j = 0; j < i; j++)
                if (strcmp(cmds[j].resource, cmds[i].resource) == 0)
                        return true;
        return false;
}

static void print_words(const struct opts *o) {
        for (size_t i = 0; i < o->n; i++)
                printf(" %s", o->name[i]);
}

/* ---- bash (and zsh through bashcompinit) -------------------------------- */

static void bash_script(const struct ctl_cmd *cmds, size_t n, const struct opts *global) {
        printf("# musterctl's completion for bash: source <(musterctl completion bash),\n"
               "# or save it as /usr/share/bash-completion/completions/musterctl.\n"
               "_musterctl() {\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} res= verb= skip= w i words\n"
               "    local valued=' ");
        struct opts all = *global;
        for (size_t i = 0; i < n; i++)
                help_opts(cmds[i].help, &all);
        for (size_t i = 0; i < all.n; i++)
                if (all.value[i])
                        printf("%s ", all.name[i]);
        printf("'\n"
               "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
               "        w=${COMP_WORDS[i]}\n"
               "        if [[ -n $skip ]]; then skip=; continue; fi\n"
               "        case $w in\n"
               "        -*=*) continue ;;\n"
               "        -*) [[ $valued == *\" $w \"* ]] && skip=1; continue ;;\n"
               "        esac\n"
               "        if [[ -z $res ]]; then res=$w; elif [[ -z $verb ]]; then verb=$w; fi\n"
               "    done\n"
               "    if [[ -n $skip ]]; then\n"
               "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
               "        return\n"
               "    fi\n"
               "    local globals='");
        print_words(global);
        printf(" '\n    case $res/$verb in\n    /) words='");
        for (size_t i = 0; i < n; i++)
                if (!seen_resource(cmds, i))
                        printf(" %s", cmds[i].resource);
        printf("' ;;\n");
        for (size_t i = 0; i < n; i++) {
                char offered[128];
                struct opts o = { 0 };
                help_opts(cmds[i].help, &o);
                synopsis_words(cmds[i].args, offered, sizeof offered);
                if (!*cmds[i].verb) {
                        /* No verbs: the synopsis' words, then options. */
                        printf("    %s/) words='%s", cmds[i].resource, offered);
                        print_words(&o);
                        printf("' ;;\n    %s/*) words='", cmds[i].resource);
                        print_words(&o);
                        printf("' ;;\n");
                        continue;
                }
                if (!seen_resource(cmds, i)) {
                        printf("    %s/) words='", cmds[i].resource);
                        for (size_t j = i; j < n; j++)
                                if (strcmp(cmds[j].resource, cmds[i].resource) == 0)
                                        printf(" %s", cmds[j].verb);
                        printf("' ;;\n");
                }
                printf("    %s/%s) words='%s", cmds[i].resource, cmds[i].verb, offered);
                print_words(&o);
                printf("' ;;\n");
        }
        printf("    *) words= ;;\n"
               "    esac\n"
               "    COMPREPLY=($(compgen -W \"$words $globals\" -- \"$cur\"))\n"
               "}\n"
               "complete -F _musterctl musterctl\n");
}

/* ---- fish ------------------------------------------------------------------ */

/* s in fish's single quotes. */
static void fish_quoted(const char *s) {
        putchar('\'');
        for (; *s; s++) {
                if (*s == '\'' || *s == '\\')
                        putchar('\\');
                putchar(*s);
        }
        putchar('\'');
}

static void fish_opts(const struct opts *o, const char *cond) {
        for (size_t i = 0; i < o->n; i++) {
                const char *nm = o->name[i];
                printf("complete -c musterctl");
                if (cond)
                        printf(" -n %s", cond);
                if (nm[1] == '-')
                        printf(" -l %s", nm + 2);
                else
                        printf(" -s %s", nm + 1);
                printf("%s\n", o->value[i] ? " -r" : "");
        }
}

static void fish_script(const struct ctl_cmd *cmds, size_t n, const struct opts *global) {
        printf("# musterctl's completion for fish: musterctl completion fish | source,\n"
               "# or save it as ~/.config/fish/completions/musterctl.fish.\n"
               "complete -c musterctl -f\n");
        fish_opts(global, NULL);
        for (size_t i = 0; i < n; i++) {
                if (!seen_resource(cmds, i)) {
                        printf("complete -c musterctl -n __fish_use_subcommand -a %s", cmds[i].resource);
                        if (!*cmds[i].verb) {
                                printf(" -d ");
                                fish_quoted(cmds[i].summary);
                        }
                        putchar('\n');
                }
                char cond[512], offered[128];
                if (*cmds[i].verb) {
                        /* The verb, until one of the resource's verbs is there. */
                        int k = snprintf(cond, sizeof cond, "'__fish_seen_subcommand_from %s; and not "
                                                            "__fish_seen_subcommand_from",
                                         cmds[i].resource);
                        for (size_t j = 0; j < n && k > 0 && (size_t) k < sizeof cond; j++)
                                if (strcmp(cmds[j].resource, cmds[i].resource) == 0)
                                        k += snprintf(cond + k, sizeof cond - (size_t) k, " %s", cmds[j].verb);
                        if (k > 0 && (size_t) k < sizeof cond - 1)
                                strcat(cond, "'");
                        printf("complete -c musterctl -n %s -a %s -d ", cond, cmds[i].verb);
                        fish_quoted(cmds[i].summary);
                        putchar('\n');
                        snprintf(cond, sizeof cond,
                                 "'__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s'",
                                 cmds[i].resource, cmds[i].verb);
                } else
                        snprintf(cond, sizeof cond, "'__fish_seen_subcommand_from %s'", cmds[i].resource);
                synopsis_words(cmds[i].args, offered, sizeof offered);
                if (*offered)
                        printf("complete -c musterctl -n %s -a '%s'\n", cond, offered);
                struct opts o = { 0 };
                help_opts(cmds[i].help, &o);
                fish_opts(&o, cond);
        }
}

int ctl_completion(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = { CTL_GLOBAL_OPTIONS, {} };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END)
                return o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
        int rc = ctl_want_args(cmd, argc, argv, 1, "the shell (bash, zsh or fish)");
        if (rc)
                return rc;
        const char *shell = argv[optind];
        size_t n;
        const struct ctl_cmd *cmds = ctl_commands(&n);
        struct opts global = { 0 };
        help_opts(ctl_global_help(), &global);
        add_opt(&global, "--version", strlen("--version"), false);
        if (strcmp(shell, "bash") == 0)
                bash_script(cmds, n, &global);
        else if (strcmp(shell, "zsh") == 0) {
                printf("# musterctl's completion for zsh: source <(musterctl completion zsh)\n"
                       "autoload -U +X bashcompinit && bashcompinit\n");
                bash_script(cmds, n, &global);
        } else if (strcmp(shell, "fish") == 0)
                fish_script(cmds, n, &global);
        else
                return ctl_usage_error(cmd, "no completion for \"%s\": bash, zsh or fish", shell);
        return CTL_EXIT_OK;
}
