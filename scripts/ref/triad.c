/* triad: a plain OpenMP STREAM triad, the reference that
 * scripts/bench-bandwidth-vs-openmp.sh holds `cpuscope bandwidth --kernels
 * triad` against at every thread count. Deliberately independent of
 * cpuscope's code and written the way an engineer would check a machine:
 *
 *   - three arrays a, b, c of N doubles (N = SIZE / 8), one mmap each,
 *     2 MiB-aligned; madvise(MADV_HUGEPAGE) for "thp" (what cpuscope asks
 *     for), MADV_NOHUGEPAGE for "4k"; array k starts k * 64 bytes into its
 *     mapping (STREAM's OFFSET idea: a[i], b[i], c[i] do not share their low
 *     address bits);
 *   - first touch in parallel, `schedule(static)`, by the same threads that
 *     run the triad (a = 1, b = 2, c = 0, STREAM's values);
 *   - a[i] = b[i] + s * c[i] (s = 3), `#pragma omp parallel for
 *     schedule(static)`, timed on the initial thread with omp_get_wtime()
 *     around the whole parallel loop (fork and join included, as STREAM
 *     does); one warm-up pass, then REPS timed passes (default 10);
 *   - bytes counted like STREAM (and cpuscope's figure): 24 B per element
 *     (two 8-byte loads, one 8-byte store), no write-allocate; the bus
 *     traffic with write-allocate is 32/24 of it for both tools;
 *   - prints best and median GB/s (1 GB = 1e9 B) of the passes, the worst,
 *     and the CPU each thread ran on.
 *
 * Threads and binding come from the OpenMP environment: OMP_NUM_THREADS,
 * OMP_PLACES (cores, or an explicit list such as "{0},{2}") and
 * OMP_PROC_BIND=close.
 *
 *   gcc -O3 -march=native -fopenmp -o triad triad.c
 *   OMP_NUM_THREADS=2 OMP_PLACES='{0},{1}' OMP_PROC_BIND=close ./triad 512M thp 10
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

static double *map_array(size_t bytes, int thp, size_t offset) {
    size_t align = 2u << 20, len = bytes + offset + align;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) { perror("mmap"); exit(1); }
    char *p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    madvise(p, bytes + offset, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return (double *)(p + offset);
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: triad SIZE [thp|4k] [REPS]   (SIZE: bytes of each array, e.g. 512M)\n");
        return 2;
    }
    size_t n = parse_size(argv[1]) / 8;
    int thp = argc < 3 || strcmp(argv[2], "4k") != 0;
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    if (n < 1024 || reps < 1) return 2;
    double *a = map_array(n * 8, thp, 0), *b = map_array(n * 8, thp, 64), *c = map_array(n * 8, thp, 128);
    const double s = 3.0;
    int threads = 1;
    int *cpu = calloc(1024, sizeof *cpu);

#pragma omp parallel
    {
#pragma omp single
        threads = omp_get_num_threads();
        int t = omp_get_thread_num();
        if (t < 1024) cpu[t] = sched_getcpu();
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.0; }
    }

    double *gbs = malloc((size_t)reps * sizeof *gbs);
    for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        double t = omp_get_wtime() - t0;
        if (k >= 0) gbs[k] = 24.0 * (double)n / t / 1e9;
    }
    for (size_t i = 0; i < n; i += n / 7 + 1)
        if (a[i] != 2.0) { fprintf(stderr, "triad: wrong value a[%zu] = %g\n", i, a[i]); return 1; }

    qsort(gbs, reps, sizeof gbs[0], cmp);
    double med = reps % 2 ? gbs[reps / 2] : (gbs[reps / 2 - 1] + gbs[reps / 2]) / 2;
    printf("threads %d size %zu pages %s reps %d best %.3f median %.3f worst %.3f GB/s cpus",
           threads, n * 8, thp ? "thp" : "4k", reps, gbs[reps - 1], med, gbs[0]);
    for (int t = 0; t < threads && t < 1024; t++) printf("%s%d", t ? "," : " ", cpu[t]);
    printf("\n");
    return 0;
}
