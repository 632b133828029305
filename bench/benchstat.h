/* What the benchmark programs share: a monotonic clock in milliseconds and
 * the median of a sample. */
#pragma once
#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);
/* The median of v[0..n) (n > 0); sorts v. */
double bench_median(double *v, size_t n);
/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
