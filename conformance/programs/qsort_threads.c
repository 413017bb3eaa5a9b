/* dwarf-qsort: two threads, each sorting with libc's qsort, whose comparison callback is
 * in the program (program -> qsort@plt -> libc's msort -> compare_keys). Built without
 * frame pointers (-O2 -g -fomit-frame-pointer -pthread). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 20000
#define ROUNDS 110

struct key {
    unsigned hi, lo;
};

static volatile unsigned long sink;

/* Called back from libc, through a function pointer. */
__attribute__((noipa)) int compare_keys(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

__attribute__((noipa)) void fill_keys(struct key *k, unsigned seed)
{
    unsigned x = seed;
    for (int i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        k[i].hi = x >> 20;
        k[i].lo = x;
    }
}

__attribute__((noipa)) unsigned long sort_rounds(unsigned seed)
{
    struct key *k = malloc(N * sizeof *k);
    unsigned long s = 0;
    for (int r = 0; r < ROUNDS; r++) {
        fill_keys(k, seed + r);
        qsort(k, N, sizeof *k, compare_keys);
        s += k[N / 2].lo;
    }
    free(k);
    return s;
}

__attribute__((noipa)) void *worker_a(void *arg)
{
    sink += sort_rounds(1);
    return arg;
}

__attribute__((noipa)) void *worker_b(void *arg)
{
    sink += sort_rounds(1000);
    return arg;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, 0, worker_a, 0);
    pthread_create(&b, 0, worker_b, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("%lu\n", sink);
    return 0;
}
