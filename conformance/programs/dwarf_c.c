/* dwarf-c: plain C built without frame pointers (-O2 -g -fomit-frame-pointer).
 * main -> top -> mid_a | mid_b -> leaf (-> mix, inlined). Deterministic: a fixed
 * amount of work, no input. */
#include <stdio.h>

static volatile unsigned long sink;

/* Inlined into leaf: `perf script` and `perfdata collapse --inline` show it as a frame. */
static inline __attribute__((always_inline)) unsigned long mix(unsigned long s, unsigned long i)
{
    return s * 31 + (i ^ (s >> 7));
}

__attribute__((noipa)) unsigned long leaf(unsigned long n, unsigned long seed)
{
    unsigned long s = seed;
    for (unsigned long i = 0; i < n; i++)
        s = mix(s, i);
    return s;
}

__attribute__((noipa)) unsigned long mid_a(int k)
{
    unsigned long r = leaf(20000 + k, 1);
    sink += r;
    return r + 1;
}

__attribute__((noipa)) unsigned long mid_b(int k)
{
    unsigned long r = leaf(40000 + k, 2);
    r ^= leaf(3000, 3);
    sink += r;
    return r + 2;
}

__attribute__((noipa)) unsigned long top(long rounds)
{
    unsigned long acc = 0;
    for (long i = 0; i < rounds; i++)
        acc += (i % 3) ? mid_a(i & 7) : mid_b(i & 7);
    sink += acc;
    return acc;
}

int main(void)
{
    unsigned long r = top(12000);
    printf("%lu\n", r + sink);
    return 0;
}
