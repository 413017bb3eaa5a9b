/* dwarf-solib, the program: links libhot.so (-L. -lhot -Wl,-rpath,<dir>) and calls
 * into it; the library calls back into the program (on_round). main -> drive ->
 * hot_entry (libhot.so) -> hot_mid -> hot_leaf. */
#include <stdio.h>

unsigned long hot_entry(long rounds, unsigned long (*each)(unsigned long));

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long on_round(unsigned long acc)
{
    unsigned long s = acc;
    for (int i = 0; i < 2000; i++)
        s = s * 31 + (unsigned long)i;
    sink += s;
    return acc ^ (s & 0xff);
}

__attribute__((noipa)) unsigned long drive(long rounds)
{
    unsigned long r = hot_entry(rounds, on_round);
    sink += r;
    return r;
}

int main(void)
{
    printf("%lu\n", drive(12000) + sink);
    return 0;
}
