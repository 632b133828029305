/* What the benchmark programs share: see benchstat.h. */
#include "benchstat.h"

#include <stdlib.h>
#include <time.h>

double bench_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

int bench_cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n) {
        qsort(v, n, sizeof *v, bench_cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
