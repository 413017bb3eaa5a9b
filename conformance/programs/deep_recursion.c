/* dwarf-deep: recursion deeper than perf's default 8 KiB user stack copy
 * (--call-graph dwarf): descend uses 144 bytes of stack per level and recurses 70-110
 * levels (10-16 KiB) before work runs, so an 8 KiB copy holds only the innermost ~56
 * frames; `--call-graph dwarf,65528` holds them all (and stays under perf's
 * 127-frame --max-stack). Built without frame pointers (-O2 -g -fomit-frame-pointer). */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long work(unsigned long n, unsigned long seed)
{
    unsigned long s = seed;
    for (unsigned long i = 0; i < n; i++)
        s = s * 33 + (i ^ (s >> 5));
    return s;
}

__attribute__((noipa)) unsigned long descend(int depth, unsigned long k)
{
    volatile unsigned char pad[128]; /* stack use per level */
    pad[depth & 127] = (unsigned char)k;
    if (depth == 0)
        return work(30000 + (k & 7), k);
    unsigned long r = descend(depth - 1, k);
    return r + pad[depth & 127];
}

__attribute__((noipa)) unsigned long climb(long rounds)
{
    unsigned long acc = 0;
    for (long i = 0; i < rounds; i++)
        acc += descend(70 + (int)(i % 5) * 10, (unsigned long)i);
    return acc;
}

int main(void)
{
    sink += climb(13000);
    printf("%lu\n", sink);
    return 0;
}
