/* A minimal DNS server (RFC 1035, UDP only) for the test suites: it answers
 * A and AAAA questions from a zone file of "NAME ADDRESS" lines, where NAME
 * may start with "*." to stand for any name below the rest (one label or
 * more, as a DNS wildcard does). The file is read again for every query, so
 * a test changes an answer by rewriting it. A name with no line is NXDOMAIN;
 * a name with lines of the other family only gets an empty answer (NODATA).
 * Real agents in the integration suites resolve their clusters' api.,
 * api-int. and *.apps. names through it (an /etc/hosts cannot hold a
 * wildcard), inside a test's network namespace. Never pointed anywhere else.
 *
 *   muster-test-dnsd --listen ADDR:PORT --zone FILE
 *
 * Runs until SIGTERM or SIGINT, then exits 0. Prints "ready" once bound. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udpserve.h"

#define MAX_PACKET 512
#define MAX_ANSWERS 16
#define TYPE_A 1
#define TYPE_AAAA 28
#define CLASS_IN 1

/* Whether `pattern` (a zone name, maybe "*.rest") covers `name`. */
static bool name_matches(const char *pattern, const char *name) {
        if (strncmp(pattern, "*.", 2) != 0)
                return strcasecmp(pattern, name) == 0;
        size_t pl = strlen(pattern + 1), nl = strlen(name); /* ".rest" */
        return nl > pl && strcasecmp(name + nl - pl, pattern + 1) == 0 && name[0] != '.';
}

/* The addresses of `name` of `type` from the zone file into rdata (4 or 16
 * bytes each): how many, or -1 when the name has no line at all. */
static int lookup(const char *zone, const char *name, uint16_t type, uint8_t rdata[MAX_ANSWERS][16]) {
        FILE *f = fopen(zone, "re");
        char line[512];
        int n = 0;
        bool known = false;
        if (!f)
                return -1;
        while (fgets(line, sizeof line, f)) {
                char pat[300], addr[64];
                if (line[0] == '#' || sscanf(line, "%299s %63s", pat, addr) != 2 || !name_matches(pat, name))
                        continue;
                known = true;
                if (n < MAX_ANSWERS && type == TYPE_A && inet_pton(AF_INET, addr, rdata[n]) == 1)
                        n++;
                else if (n < MAX_ANSWERS && type == TYPE_AAAA && inet_pton(AF_INET6, addr, rdata[n]) == 1)
                        n++;
        }
        fclose(f);
        return known ? n : -1;
}

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

/* Build the answer to query q (n bytes) into r; its length, or 0 to drop. */
static size_t answer(const char *zone, const uint8_t *q, size_t n, uint8_t *r) {
        char name[256];
        size_t off = 12, nl = 0;
        if (n < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1) /* a query with one question */
                return 0;
        while (off < n && q[off] != 0) {
                size_t l = q[off];
                if (l > 63 || off + 1 + l >= n || nl + l + 1 >= sizeof name)
                        return 0;
                if (nl)
                        name[nl++] = '.';
                memcpy(name + nl, q + off + 1, l);
                nl += l;
                off += 1 + l;
        }
        if (off + 5 > n || nl == 0)
                return 0;
        name[nl] = '\0';
        off++; /* the root label */
        uint16_t type = (uint16_t) (q[off] << 8 | q[off + 1]), cls = (uint16_t) (q[off + 2] << 8 | q[off + 3]);
        off += 4;

        uint8_t rdata[MAX_ANSWERS][16];
        int k = cls == CLASS_IN ? lookup(zone, name, type, rdata) : -1;
        memcpy(r, q, off); /* the header and the question */
        r[2] = (uint8_t) (0x80 | (q[2] & 0x79) | 0x04); /* QR, the opcode and RD, AA */
        r[3] = (uint8_t) (0x80 | (k < 0 ? 3 : 0));      /* RA; NXDOMAIN or NOERROR */
        put16(r + 6, (uint16_t) (k > 0 ? k : 0));
        put16(r + 8, 0);
        put16(r + 10, 0); /* no EDNS in the answer */
        size_t len = off, rdlen = type == TYPE_A ? 4 : 16;
        for (int i = 0; i < k && len + 12 + rdlen <= MAX_PACKET; i++) {
                put16(r + len, 0xc00c); /* the name: a pointer to the question's */
                put16(r + len + 2, type);
                put16(r + len + 4, CLASS_IN);
                memset(r + len + 6, 0, 3);
                r[len + 9] = 5; /* TTL 5 s */
                put16(r + len + 10, (uint16_t) rdlen);
                memcpy(r + len + 12, rdata[i], rdlen);
                len += 12 + rdlen;
        }
        return len;
}

/* udpserve's callback: the zone file's answer. */
static size_t answer_zone(void *zone, const uint8_t *q, size_t n, uint8_t *r, size_t rmax) {
        return rmax >= MAX_PACKET ? answer(zone, q, n, r) : 0;
}

int main(int argc, char **argv) {
        const char *listen = NULL, *zone = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
                        listen = argv[++i];
                else if (strcmp(argv[i], "--zone") == 0 && i + 1 < argc)
                        zone = argv[++i];
                else {
                        fprintf(stderr, "usage: %s --listen ADDR:PORT --zone FILE\n", argv[0]);
                        return 2;
                }
        }
        if (!zone) {
                fprintf(stderr, "%s: needs --listen with an IPv4 ADDR:PORT and --zone\n", argv[0]);
                return 2;
        }
        return udpserve_run(argv[0], listen, answer_zone, (void *) zone);
}
