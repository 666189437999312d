/* latref: an independent reference for DRAM load-to-use latency, used by
 * scripts/bench-latency-vs-ref.sh to check `cpuscope latency` (lmbench is
 * not packaged for Debian, so lat_mem_rd cannot be the reference here).
 *
 * Method (deliberately independent of cpuscope's code): one buffer of SIZE
 * bytes, mapped with mmap and aligned to 2 MiB, madvise(MADV_HUGEPAGE) for
 * "2m" or MADV_NOHUGEPAGE for "4k"; one pointer per 64-byte line, linked in
 * the order of a random permutation of the lines (Fisher-Yates with a
 * xorshift128+ generator; consecutive entries linked, the last to the
 * first: one cycle through every line). The chase runs LOADS dependent loads
 * per repetition (default 4000: well under a millisecond, so that on a
 * shared CPU most repetitions run undisturbed), timed with
 * clock_gettime(CLOCK_MONOTONIC_RAW); REPS repetitions (default 301) after
 * one full warm-up walk, continuing along the cycle; prints min and median
 * ns/load.
 *
 *   cc -O2 -o latref latref.c && ./latref 420M 2m [LOADS] [REPS]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t s0 = 0x1234567887654321ull, s1 = 0x0fedcba987654321ull;
static uint64_t xs128p(void) {
    uint64_t a = s0, b = s1;
    s0 = b;
    a ^= a << 23;
    s1 = a ^ b ^ (a >> 17) ^ (b >> 26);
    return s1 + b;
}

static size_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    }
    return (size_t)v;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: latref SIZE 4k|2m [LOADS] [REPS]\n");
        return 2;
    }
    size_t size = parse_size(argv[1]);
    int huge = strcmp(argv[2], "2m") == 0;
    long loads = argc > 3 ? atol(argv[3]) : 4000;
    int reps = argc > 4 ? atoi(argv[4]) : 301;
    if (loads < 4 || reps < 1) return 2;
    size_t align = 2u << 20, lines = size / 64;
    if (lines < 2) return 2;
    char *raw = mmap(NULL, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) { perror("mmap"); return 1; }
    char *buf = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    madvise(buf, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(buf, 0, size);
    uint32_t *order = malloc(lines * sizeof *order);
    for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = xs128p() % (i + 1);
        uint32_t t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (size_t k = 0; k < lines; k++)
        *(void **)(buf + (size_t)order[k] * 64) = buf + (size_t)order[(k + 1) % lines] * 64;
    free(order);
    void **p = (void **)buf;
    for (size_t i = 0; i < lines; i++) p = (void **)*p; /* warm-up walk */
    double *r = malloc(reps * sizeof *r);
    for (int k = 0; k < reps; k++) {
        double t0 = now_ns();
        for (long i = 0; i < loads; i += 4) {
            p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
        }
        r[k] = (now_ns() - t0) / loads;
    }
    qsort(r, reps, sizeof r[0], cmp);
    printf("size %zu pages %s min %.2f median %.2f ns/load (end %p)\n", size, argv[2], r[0], r[reps / 2], (void *)p);
    return 0;
}
