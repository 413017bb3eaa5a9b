/* CPU-bound load for `cargo xtask bench`: two threads, each calling a few functions with
 * some recursion, so that `perf record -g` sees stacks 5-15 frames deep.
 * Usage: bench-load SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 1;

__attribute__((noinline)) static unsigned long leaf(unsigned long x) {
    for (int i = 0; i < 200; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) static unsigned long recurse(unsigned long x, int depth) {
    if (depth == 0)
        return leaf(x);
    return recurse(x ^ (unsigned long)depth, depth - 1) + ((x & 1) ? leaf(x) : 0);
}

__attribute__((noinline)) static unsigned long middle(unsigned long x) {
    return recurse(x, 2 + (int)(x % 7));
}

__attribute__((noinline)) static unsigned long outer(unsigned long x) {
    return middle(x) ^ middle(x >> 3);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *worker(void *arg) {
    unsigned long x = (unsigned long)arg;
    double end = now() + seconds;
    while (now() < end)
        for (unsigned long i = 0; i < 1000; i++)
            x = outer(x + i);
    sink = x;
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1)
        seconds = atof(argv[1]);
    pthread_t threads[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&threads[i], 0, worker, (void *)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], 0);
    return sink == 42;
}
